"""A normalized string that remembers where each of its characters came from.

This is the offsets path only (`Tokenizer.encode_full`); plain `encode` works on
`str` and never builds one of these.

Reproduces HF tokenizers 0.23.3 ``tokenizers/src/tokenizer/normalizer.rs``
(``NormalizedString``: ``transform_range``, ``slice``, ``prepend``, ``append``,
``convert_offsets``), with one change of unit: HF keeps one alignment per UTF-8
*byte* of the normalized text, relative to the split's original slice, and the
Python binding converts the final byte offsets to character offsets. Every HF
alignment covers whole original characters and every normalized character's
bytes share one alignment, so keeping one alignment per normalized *character*,
as absolute character offsets into the whole input, gives the same character
offsets with less work.
"""

from __future__ import annotations

from collections.abc import Iterable

Span = tuple[int, int]


class NormalizedString:
    """`text` (normalized) with `align[i]`, the original character range of `text[i]`.

    `orig_start`/`orig_end` is the range of the input this string was cut from
    (HF ``offsets_original``), which normalization never changes.
    """

    __slots__ = ("text", "align", "orig_start", "orig_end")

    def __init__(self, text: str, align: list[Span], orig_start: int, orig_end: int) -> None:
        self.text = text
        self.align = align
        self.orig_start = orig_start
        self.orig_end = orig_end

    @classmethod
    def from_original(cls, text: str, start: int = 0) -> NormalizedString:
        return cls(text, [(start + i, start + i + 1) for i in range(len(text))], start, start + len(text))

    def __repr__(self) -> str:
        return f"NormalizedString({self.text!r}, orig=({self.orig_start}, {self.orig_end}))"

    def __len__(self) -> int:
        return len(self.text)

    # -- the one transformation rule -------------------------------------------------

    def transform_range(self, start: int, end: int, changes: Iterable[tuple[str, int]],
                        initial_offset: int = 0) -> None:
        """Replace ``text[start:end]`` following `changes`, HF ``transform_range``.

        Each change is ``(new_char, change)``: 0 replaces the old char at the
        cursor (and takes its alignment), +1 inserts (taking the alignment of the
        old char just before the cursor, or an empty range at the split start),
        -n replaces and deletes the n old chars that follow. `initial_offset`
        old chars are deleted first.
        """
        align = self.align
        cursor = start + initial_offset
        new_chars: list[str] = []
        new_align: list[Span] = []
        for char, change in changes:
            if change > 0:
                span = align[cursor - 1] if cursor > 0 else (self.orig_start, self.orig_start)
            else:
                span = align[cursor]
                cursor += 1 - change  # the replaced char, then the -change deleted ones
            new_chars.append(char)
            new_align.append(span)
        self.text = self.text[:start] + "".join(new_chars) + self.text[end:]
        self.align = align[:start] + new_align + align[end:]

    def transform(self, changes: Iterable[tuple[str, int]], initial_offset: int = 0) -> None:
        self.transform_range(0, len(self.text), changes, initial_offset)

    def map_chars(self, mapping: dict[str, str] | None = None, fn=None) -> None:  # type: ignore[no-untyped-def]
        """Replace each char by one char (same alignment)."""
        if fn is None:
            get = (mapping or {}).get
            self.text = "".join(get(c, c) for c in self.text)
        else:
            self.text = "".join(fn(c) for c in self.text)

    def filter_chars(self, keep) -> None:  # type: ignore[no-untyped-def]
        """Delete the chars for which `keep(char)` is false (HF ``filter``)."""
        pairs = [(c, a) for c, a in zip(self.text, self.align) if keep(c)]
        self.text = "".join(c for c, _ in pairs)
        self.align = [a for _, a in pairs]

    def prepend(self, s: str) -> None:
        """Prepend `s`; every char of it takes the first char's alignment (HF ``prepend``)."""
        if not self.text or not s:
            return
        self.text = s + self.text
        self.align = [self.align[0]] * len(s) + self.align

    def append(self, s: str) -> None:
        """Append `s`; every char of it takes the last char's alignment (HF ``append``)."""
        if not s:
            return
        span = self.align[-1] if self.text else (self.orig_start, self.orig_start)
        self.text += s
        self.align = self.align + [span] * len(s)

    # -- offsets and slicing ---------------------------------------------------------

    def offsets(self, start: int, end: int) -> Span:
        """Original character range of ``text[start:end]`` (HF ``convert_offsets``)."""
        if start >= end:
            return (start, end)
        return (self.align[start][0], self.align[end - 1][1])

    def position(self, index: int) -> Span:
        """The empty original range where ``text[index]`` starts (past the end: where the last char ends)."""
        if index < len(self.align):
            at = self.align[index][0]
        else:
            at = self.align[-1][1] if self.align else self.orig_start
        return (at, at)

    def slice(self, start: int, end: int) -> NormalizedString:
        """The sub-string ``text[start:end]`` with its alignments (HF ``slice``)."""
        if start >= end:
            # An empty slice covers no original text; HF gives it the range (start, start).
            pos = self.align[start][0] if start < len(self.align) else self.orig_end
            return NormalizedString("", [], pos, pos)
        o_start, o_end = self.align[start][0], self.align[end - 1][1]
        return NormalizedString(self.text[start:end], self.align[start:end], o_start, o_end)

    def slices(self, spans: Iterable[Span]) -> list[NormalizedString]:
        """Non-empty slices for `spans` (empty pieces are dropped, as HF ``split`` does)."""
        return [self.slice(a, b) for a, b in spans if b > a]
