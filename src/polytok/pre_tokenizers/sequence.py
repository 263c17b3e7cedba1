"""Sequence pre-tokenizer: run several pre-tokenizers, each on every piece of the last.

JSON: ``{"type": "Sequence", "pretokenizers": [ {...}, ... ]}`` (required).

Reproduces HF tokenizers 0.23.3 ``tokenizers/src/pre_tokenizers/sequence.rs``
(``Sequence::pre_tokenize``).

The fast path tells each piece whether it starts at the original offset 0 only
approximately: the first piece of an at-origin input keeps ``at_origin`` and
every other piece gets False. That is exact for every pre-tokenizer but
Metaspace ``first``, which HF feeds the piece's real original start: once an
earlier member has re-sliced the text (``splits_pieces``), the first piece may
start later (leading whitespace dropped, or a normalizer that deleted leading
chars), so such a Sequence sets ``exact_without_alignment = False`` and the
tokenizer takes the aligned path.

An empty text is handed to the members only when the first splits it
(``splits_empty_text``: a Split that keeps empty matches, tiktoken's).

A member gets all pieces in one ``pre_tokenize_each`` call (ByteLevel maps them in one
pass) unless `at_origin` can still matter: the input is at the origin and the member, or
one after it, reads it. Then the member runs piece by piece, and the first piece keeps
`at_origin` only while it yields words.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .._config import join, required
from ..bounded_cache import BoundedCache
from ..normalized import NormalizedString
from .base import PreTokenizerBase

if TYPE_CHECKING:
    from . import PreTokenizer


class Sequence(PreTokenizerBase):
    """Sequence of pre-tokenizers, applied in order."""

    def __init__(self, pretokenizers: list[PreTokenizer]) -> None:
        self.pretokenizers = list(pretokenizers)
        self.splits_pieces = any(p.splits_pieces for p in self.pretokenizers)
        self.reads_origin = any(p.reads_origin for p in self.pretokenizers)
        self.splits_empty_text = bool(self.pretokenizers) and self.pretokenizers[0].splits_empty_text
        exact = all(p.exact_without_alignment for p in self.pretokenizers)
        sliced = False
        for p in self.pretokenizers:
            if p.reads_origin and sliced:
                exact = False
            sliced = sliced or p.splits_pieces
        self.exact_without_alignment = exact
        # for each member: does it, or one after it, read at_origin
        self._origin_read_from = [any(p.reads_origin for p in self.pretokenizers[i:])
                                  for i in range(len(self.pretokenizers))]

    @classmethod
    def from_config(cls, d: dict[str, Any], path: str) -> Sequence:
        from . import from_config  # the registry imports this module

        items = required(d, "pretokenizers", list, path)
        key = join(path, "pretokenizers")
        return cls([from_config(item, join(key, i)) for i, item in enumerate(items)])

    def pre_tokenize(self, text: str, at_origin: bool = True) -> list[str]:
        pieces = [text] if text or self.splits_empty_text else []
        for pretokenizer, origin_read in zip(self.pretokenizers, self._origin_read_from):
            if not pieces:
                break
            if not (at_origin and origin_read):  # at_origin matters no more: all pieces in one call
                pieces = pretokenizer.pre_tokenize_each(pieces)
                continue
            run = pretokenizer.pre_tokenize
            out = list(run(pieces[0], at_origin))
            # only a first piece that survives is still the first one of the input
            at_origin = at_origin and bool(out)
            for piece in pieces[1:]:
                out.extend(run(piece, False))
            pieces = out
        return pieces

    def caches(self) -> list[BoundedCache[Any]]:
        found: list[BoundedCache[Any]] = []
        for p in self.pretokenizers:
            found += [c for c in p.caches() if all(c is not seen for seen in found)]
        return found

    def pre_tokenize_aligned(self, ns: NormalizedString) -> list[NormalizedString]:
        pieces = [ns] if ns.text or self.splits_empty_text else []
        for pretokenizer in self.pretokenizers:
            out: list[NormalizedString] = []
            for piece in pieces:
                out.extend(pretokenizer.pre_tokenize_aligned(piece))
            pieces = out
        return pieces
