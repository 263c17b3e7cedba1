"""Encoding many texts on every core: a process pool whose workers inherit the tokenizer.

`Tokenizer.encode_batch` hands large batches here. Each text is encoded on its
own, exactly as `Tokenizer.encode` would, so the ids never depend on how the
batch is cut; only the work is shared out.

The workers are started by ``fork``: they inherit the loaded tokenizer and the
texts from the parent's memory (copy on write), so nothing is pickled on the
way in and no worker loads a file; only the ids come back. Where ``fork`` is not
available (Windows, macOS's default) or other threads are running in the
process (forking a threaded process can deadlock), the batch is encoded in the
calling process instead — same ids, one core.

A pool costs tens of milliseconds to start, so batches under `MIN_CHARS` stay in the
calling process.
"""

from __future__ import annotations

import multiprocessing
import os
import threading
from typing import TYPE_CHECKING, Any, Sequence

if TYPE_CHECKING:
    from .tokenizer import Tokenizer

__all__ = ["MIN_CHARS", "available_workers", "encode_in_pool", "can_fork"]

MIN_CHARS = 500_000  # below this a batch is encoded in the calling process

# What a forked worker inherits: (tokenizer, texts, add_special, special).
_JOB: tuple[Any, Sequence[Any], bool, Any] | None = None


def available_workers() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def can_fork() -> bool:
    """True when a pool can be started by ``fork`` safely (see the module notes)."""
    return "fork" in multiprocessing.get_all_start_methods() and threading.active_count() == 1


def _spans(sizes: list[int], parts: int) -> list[tuple[int, int]]:
    """Cut ``range(len(sizes))`` into about `parts` contiguous spans of similar total size."""
    total = sum(sizes) or 1
    spans: list[tuple[int, int]] = []
    start = acc = 0
    for index, size in enumerate(sizes):
        acc += size
        if acc * parts >= total * (len(spans) + 1) and index + 1 > start:
            spans.append((start, index + 1))
            start = index + 1
    if start < len(sizes):
        spans.append((start, len(sizes)))
    return spans


def _encode_span(span: tuple[int, int]) -> tuple[bool, Any]:
    assert _JOB is not None
    tok, texts, add_special, special = _JOB
    try:
        return True, [tok.encode(t, add_special=add_special, special=special) for t in texts[span[0]:span[1]]]
    except Exception as exc:  # re-raised by the parent, which encodes the span itself (exceptions need not pickle)
        return False, repr(exc)


def encode_in_pool(tok: "Tokenizer", texts: Sequence[Any], *, add_special: bool, special: Any,
                   workers: int) -> list[list[int]]:
    """`tok.encode` of each text, shared over `workers` forked processes, in order.

    Callers check `can_fork` first. An error in a worker is raised again by encoding
    that worker's texts in this process, so it surfaces with its own type and message.
    """
    global _JOB
    sizes = [len(t) if isinstance(t, str) else sum(map(len, t)) for t in texts]
    spans = _spans(sizes, workers * 4)
    _JOB = (tok, texts, add_special, special)
    out: list[list[int]] = []
    try:
        with multiprocessing.get_context("fork").Pool(workers) as pool:
            for span, (ok, result) in zip(spans, pool.imap(_encode_span, spans)):
                if not ok:
                    out.extend(tok.encode(t, add_special=add_special, special=special)
                               for t in texts[span[0]:span[1]])
                    raise RuntimeError(f"a worker failed where this process did not: {result}")
                out.extend(result)
    finally:
        _JOB = None
    return out
