"""The first divergence of two token sequences, aligned on the text their tokens decode to.

Both sequences tokenize the same input, so after the common prefix of equal ids
each token is placed by where its decoded text ends: the end of token ``k`` is
the length of ``decode(ids[o:k + 1])`` (``o`` a few shared ids before the
divergence) with a trailing incomplete character
(U+FFFD from a cut UTF-8 sequence) not counted, as a streaming decoder would.
The side whose end lies behind advances until both ends meet again; there the
sequences re-synchronise and the diverging region is closed. Ends are computed
lazily from the divergence on, so a long text costs only the region's decodes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["Region", "first_divergence"]

_REPLACEMENT = "\ufffd"
_LEAD = 4


def _clean(text: str) -> str:
    return text.rstrip(_REPLACEMENT)


@dataclass
class Region:
    """A diverging region: ``a[a_start:a_end]`` against ``b[b_start:b_end]``.

    ``text_a``/``text_b`` are what each side's region decodes to; ``start``/``end`` are
    character offsets into side A's decoded text (``end`` is None when the sides never
    re-synchronise).
    """

    a_start: int
    a_end: int
    b_start: int
    b_end: int
    text_a: str
    text_b: str
    start: int
    end: int | None


class _Ends:
    """Lazy end offsets of each token of one side, in decoded characters."""

    def __init__(self, ids: list[int], decode: Callable[[list[int]], str], origin: int) -> None:
        self.ids = ids
        self.decode = decode
        self.texts: dict[int, str] = {}
        self.origin = origin

    def prefix(self, k: int) -> str:
        """The decoded text of ``ids[origin:k]`` (a trailing U+FFFD of a cut character dropped)."""
        if k not in self.texts:
            text = self.decode(self.ids[self.origin:k]) if k > self.origin else ""
            if k < len(self.ids):
                text = _clean(text)
            self.texts[k] = text
        return self.texts[k]

    def end(self, k: int) -> int:
        return len(self.prefix(k + 1))


def first_divergence(a: list[int], b: list[int], decode_a: Callable[[list[int]], str],
                     decode_b: Callable[[list[int]], str], special_a: frozenset[int] = frozenset(),
                     special_b: frozenset[int] = frozenset(), limit: int = 512) -> Region | None:
    """The first region where `a` and `b` differ, or None when they are equal.

    Args:
        a, b: the ids of each side.
        decode_a, decode_b: each side's decode (ids → text, special tokens kept).
        special_a, special_b: the ids each side adds around a text (BOS, EOS, [CLS]…):
            a run of them that one side has and the other lacks is a region of its
            own, since their decoded text would never re-synchronise.
        limit: give up re-synchronising after this many tokens past the divergence.
    """
    i = 0
    n = min(len(a), len(b))
    while i < n and a[i] == b[i]:
        i += 1
    if i == len(a) == len(b):
        return None
    # decoding starts a few (shared) ids before the divergence, not at 0, so each step costs
    # the region's length; the shared ids give a decoder's first-token rules their context
    origin = max(0, i - _LEAD)
    ends_a, ends_b = _Ends(a, decode_a, origin), _Ends(b, decode_b, origin)
    base_a, base_b = len(ends_a.prefix(i)), len(ends_b.prefix(i))
    start = len(_clean(decode_a(a[:i]))) if origin else base_a
    inserted = _inserted(a, b, i, special_a, special_b)
    if inserted is None and i + 1 < n and a[i + 1] == b[i + 1]:
        inserted = (i + 1, i + 1)  # one id for another (a renumbered token): its own region
    if inserted is not None:
        ja, kb = inserted
        text_a = ends_a.prefix(ja)[base_a:]
        return Region(i, ja, i, kb, text_a, ends_b.prefix(kb)[base_b:], start, start + len(text_a))
    synced = _walk(ends_a, ends_b, i, base_a, base_b, limit)
    a_end, b_end = synced if synced is not None else (len(a), len(b))
    text_a = ends_a.prefix(a_end)[base_a:] if synced else decode_a(a[origin:])[base_a:]
    text_b = ends_b.prefix(b_end)[base_b:] if synced else decode_b(b[origin:])[base_b:]
    end = start + len(text_a) if synced else None
    return Region(i, a_end, i, b_end, text_a, text_b, start, end)


def _walk(ends_a: _Ends, ends_b: _Ends, i: int, base_a: int, base_b: int, limit: int) -> tuple[int, int] | None:
    """Advance the side whose decoded end lies behind until both ends meet: (a_end, b_end), or None."""
    j, k = i, i
    while j < len(ends_a.ids) and k < len(ends_b.ids) and (j - i) + (k - i) < 2 * limit:
        ea, eb = ends_a.end(j) - base_a, ends_b.end(k) - base_b
        if ea == eb and ea > 0:
            return j + 1, k + 1
        if ea <= eb:
            j += 1
        else:
            k += 1
    return None


def _inserted(a: list[int], b: list[int], i: int, special_a: frozenset[int],
              special_b: frozenset[int]) -> tuple[int, int] | None:
    """Where a run of special ids present on one side only ends, as (a_end, b_end)."""
    j = i
    while j < len(a) and a[j] in special_a:
        j += 1
    if j > i and a[j:j + 1] == b[i:i + 1]:
        return j, i
    if j > i and _plain_start(b, i, special_b):
        return i + 1, i
    k = i
    while k < len(b) and b[k] in special_b:
        k += 1
    if k > i and b[k:k + 1] == a[i:i + 1]:
        return i, k
    if k > i and _plain_start(a, i, special_a):
        return i, i + 1
    return None


def _plain_start(ids: list[int], i: int, special: frozenset[int]) -> bool:
    """At the very start, the other side begins with an ordinary token: the specials were added before it."""
    return i == 0 and bool(ids) and ids[0] not in special
