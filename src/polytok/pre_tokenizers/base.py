"""`PreTokenizerBase`: what every pre-tokenizer inherits, the `PreTokenizer` protocol's
members a pre-tokenizer may leave to their defaults.

A pre-tokenizer must write ``pre_tokenize`` and ``pre_tokenize_aligned``; the rest is
defined here:

- ``exact_without_alignment`` (True): the fast path gives the aligned path's pieces;
- ``splits_pieces`` (True): it may cut a piece, so a later piece's original start can move;
- ``reads_origin`` (False): it looks at ``at_origin``. Only Metaspace with
  ``prepend_scheme="first"`` does, and a Sequence holding such a member;
- ``splits_empty_text`` (False): it cuts an empty text into pieces (an empty match kept,
  tiktoken's split), so the empty texts between added tokens are pre-tokenized too;
- ``pre_tokenize_each(pieces)``: every piece pre-tokenized with ``at_origin`` False, the
  words concatenated (the call Sequence and the long-text counter make for a member
  that does not read ``at_origin``; ByteLevel overrides it with one pass over all pieces);
- ``caches()``: the bounded word caches `polytok.parallel` may fill; none by default;
- ``batch_split()``: the cut `polytok._kernels.batch` makes for it, or None (most).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

from ..bounded_cache import BoundedCache
from ..normalized import NormalizedString


class PreTokenizerBase(ABC):
    __slots__ = ()

    exact_without_alignment: bool = True
    splits_pieces: bool = True
    reads_origin: bool = False
    splits_empty_text: bool = False

    @abstractmethod
    def pre_tokenize(self, text: str, at_origin: bool = True) -> list[str]: ...

    @abstractmethod
    def pre_tokenize_aligned(self, ns: NormalizedString) -> list[NormalizedString]: ...

    def pre_tokenize_each(self, pieces: list[str]) -> list[str]:
        """`pre_tokenize` of every piece (none at the origin), the words concatenated."""
        out: list[str] = []
        run = self.pre_tokenize
        for piece in pieces:
            out += run(piece, False)  # one copy of each piece's list, as Sequence's loop made
        return out

    def caches(self) -> list[BoundedCache[Any]]:
        """The bounded word caches this pre-tokenizer fills as it runs."""
        return []

    def batch_split(self) -> str | int | None:
        """How `polytok._kernels.batch` cuts a text as this pre-tokenizer does, or None (most):
        one character c, a cut before every run of c but at the text's start (``Split("c+",
        merged_with_next)``); an int, the matches of that compiled scanner (`regex.scanners`)."""
        return None
