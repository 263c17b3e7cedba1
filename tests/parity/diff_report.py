"""Failure reports for parity tests: the first differing position and both sequences with pieces."""

from __future__ import annotations

from collections.abc import Callable


def first_difference(a: list, b: list) -> int | None:
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return i
    return None if len(a) == len(b) else min(len(a), len(b))


def describe_ids(label: str, ids: list[int], piece: Callable[[int], str | None], at: int, width: int = 6) -> str:
    lo, hi = max(0, at - width), min(len(ids), at + width)
    shown = " ".join(f"{i}:{piece(i)!r}" for i in ids[lo:hi])
    more = f" … ({len(ids)} ids)" if hi < len(ids) or lo > 0 else ""
    return f"  {label}[{lo}:{hi}] = {shown}{more}"


def ids_mismatch(file: str, text: str, mode: str, expected: list[int], actual: list[int],
                 piece: Callable[[int], str | None]) -> str | None:
    """None when equal, else a report naming the file, the text, the first difference and the pieces."""
    at = first_difference(expected, actual)
    if at is None:
        return None
    return "\n".join([
        f"{file} [{mode}] text={text[:200]!r}{'…' if len(text) > 200 else ''}",
        f"  first difference at position {at}",
        describe_ids("reference", expected, piece, at),
        describe_ids("polytok  ", actual, piece, at),
    ])
