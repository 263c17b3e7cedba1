"""ByteLevel pre-tokenizer (GPT-2 style): prefix space, GPT-2 regex split, byte alphabet.

JSON: ``{"type": "ByteLevel", "add_prefix_space": bool, "trim_offsets": bool,
"use_regex": bool}`` (the first two required, `use_regex` defaults to true).

Reproduces HF tokenizers 0.23.3 ``tokenizers/src/pre_tokenizers/byte_level.rs``
(``impl PreTokenizer for ByteLevel``): for every piece it is given,
1. with `add_prefix_space`, a non-empty piece not starting with U+0020 gets one
   prepended (aligned to its first char) -- every piece, so also each piece
   after an added token or an earlier pre-tokenizer of a Sequence;
2. with `use_regex`, the piece is split ``Isolated`` at the matches of the
   GPT-2 pattern, run through the Oniguruma dialect;
3. every char becomes the byte-alphabet chars of its UTF-8 bytes (the first
   replaces it, the others are inserted after it, all aligned to it).
`trim_offsets` is only read by the ByteLevel post-processor.

Performance notes (this is the hottest code of GPT-2 style tokenizers, and
``findall`` is most of it; numbers in bench/README.md, 'Measurements behind
design choices'):
- with the kernels built, the ``findall`` is the compiled GPT-2 scanner
  (`polytok.regex.scanners`); the byte mapping stays the cached ``translate``
  below: its cached lookups measured a small share of a warm encode, and
  mapping inside the scan (a fresh mapped string a piece, no cache) would
  hand the model strings to hash anew, so it was not folded into the scan;
- the GPT-2 pattern always covers its input with non-empty matches (the
  letter, number, ``[^\\s\\p{L}\\p{N}]`` and ``\\s`` alternatives partition all
  chars), so ``findall`` is the onig split as is, with no coverage check;
- the byte mapping is ``encode("utf-8").decode("latin-1").translate(table)``,
  all in C, behind a per-word dict whose ``__missing__`` fills it, applied with
  ``map`` (cleared past `_CACHE_LIMIT` words to bound memory). Rejected: a
  per-byte ``join`` (slower), a ``get``/``append`` loop (slower than
  ``map``), possessive quantifiers in the pattern (slower in `regex`);
- Sequence hands all pieces to `pre_tokenize_each` at once (Llama-3 style
  ``Split`` + ``ByteLevel(use_regex=False)`` pays no per-piece call).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..bounded_cache import BoundedCache
from ..errors import not_utf8
from ..normalized import NormalizedString
from ..regex.oniguruma import compile_onig
from ..regex.split_patterns import GPT2, GPT2_FACTORED
from ..text.byte_alphabet import BYTES_TO_CHARS, byte_level_flags
from .base import PreTokenizerBase
from .split_behavior import PatternProof, RegexSplitter

GPT2_PATTERN = GPT2  # upstream (byte_level.rs, RE); ByteLevel compiles GPT2_FACTORED, the same matches

# What is proven of the GPT-2 pattern (`parallel.resumable_scan` stops scans with it). Its letter, number,
# ``[^\s\p{L}\p{N}]`` and ``\s`` alternatives partition all chars, so the matches tile any
# text. Every alternative reads one run: the contractions at most 3 chars; the letter, number
# and other-symbol runs up to the first char outside the run, which is where the match ends;
# ``\s+(?!\S)`` the whitespace run and the char after it, one past the match's end. The
# alternatives tried before the one that matches read no further. So a match ending at ``e``
# is the same in any text that agrees before ``e + 2``.
_GPT2_PROOF = PatternProof(decided_within=2)
_BYTE_TABLE = tuple(BYTES_TO_CHARS)  # str.translate table, indexed by a latin-1 char's ordinal
_CACHE_LIMIT = 1 << 16


def to_byte_level(piece: str) -> str:
    """`piece` written in the byte alphabet (one char per UTF-8 byte)."""
    try:
        return piece.encode("utf-8").decode("latin-1").translate(_BYTE_TABLE)
    except UnicodeEncodeError as exc:
        raise not_utf8(exc) from None


class _ByteLevelCache(BoundedCache[str]):
    """word -> its byte-level form, computed on a miss; emptied when it reaches `_CACHE_LIMIT`."""

    limit = _CACHE_LIMIT  # what `polytok.parallel` may fill it up to with a worker's words

    def __missing__(self, word: str) -> str:
        if len(self) >= _CACHE_LIMIT:
            self.clear()
        mapped = self[word] = to_byte_level(word)
        return mapped


class ByteLevel(PreTokenizerBase):
    """ByteLevel pre-tokenizer.

    Args:
        add_prefix_space: prepend U+0020 to every piece that does not start with one.
        trim_offsets: kept for the post-processor; no effect here.
        use_regex: split with the GPT-2 pattern (False: only map bytes).
    """

    def __init__(self, *, add_prefix_space: bool = True, trim_offsets: bool = True, use_regex: bool = True) -> None:
        self.add_prefix_space = add_prefix_space
        self.trim_offsets = trim_offsets
        self.use_regex = use_regex
        self.splits_pieces = use_regex
        self._splitter = RegexSplitter(compile_onig(GPT2_FACTORED, "ByteLevel"), "isolated", proof=_GPT2_PROOF)
        self._byte_forms = _ByteLevelCache()
        self._mapped = self._byte_forms.__getitem__

    @classmethod
    def from_config(cls, d: dict[str, Any], path: str) -> ByteLevel:
        add_prefix_space, trim_offsets, use_regex = byte_level_flags(d, path)
        return cls(add_prefix_space=add_prefix_space, trim_offsets=trim_offsets, use_regex=use_regex)

    def pre_tokenize(self, text: str, at_origin: bool = True) -> list[str]:
        if not text:
            return []
        if self.add_prefix_space and text[0] != " ":
            text = " " + text
        words = self._splitter.pieces(text) if self.use_regex else [text]
        return list(map(self._mapped, words))

    def pre_tokenize_each(self, pieces: list[str]) -> list[str]:
        """`pre_tokenize` of every (non-empty) piece, concatenated; Sequence's bulk call."""
        if self.use_regex:
            return [word for piece in pieces for word in self.pre_tokenize(piece)]
        if self.add_prefix_space:
            pieces = [p if p[0] == " " else " " + p for p in pieces]
        return list(map(self._mapped, pieces))

    def caches(self) -> list[BoundedCache[Any]]:
        return [self._byte_forms]

    @property
    def splitter(self) -> RegexSplitter:
        """The GPT-2 pattern's isolated split (read by `polytok.parallel.resumable_scan`)."""
        return self._splitter

    @property
    def byte_form(self) -> Callable[[str], str]:
        """word -> the word in the byte alphabet, through this pre-tokenizer's cache."""
        return self._mapped

    def pre_tokenize_aligned(self, ns: NormalizedString) -> list[NormalizedString]:
        if not ns.text:  # without the regex, a piece is only mapped: an empty one (a kept empty match) stays
            return [] if self.use_regex else [ns]
        ns = NormalizedString(ns.text, ns.align, ns.orig_start, ns.orig_end)
        if self.add_prefix_space and ns.text[0] != " ":
            ns.prepend(" ")
        pieces = ns.slices(self._splitter.spans(ns.text)) if self.use_regex else [ns]
        for piece in pieces:
            piece.transform(_byte_changes(piece.text))
        return pieces


def _byte_changes(text: str) -> list[tuple[str, int]]:
    """HF's transformation: a char's first byte replaces it, its other bytes are inserted."""
    changes = []
    for char in text:
        mapped = to_byte_level(char)
        changes.append((mapped[0], 0))
        changes.extend((b, 1) for b in mapped[1:])
    return changes

