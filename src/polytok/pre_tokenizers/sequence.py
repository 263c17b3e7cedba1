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
"""

from __future__ import annotations

from typing import Any

from .._config import join, required
from ..normalized import NormalizedString


class Sequence:
    """Sequence of pre-tokenizers, applied in order."""

    def __init__(self, pretokenizers: list[Any]) -> None:
        self.pretokenizers = list(pretokenizers)
        self.splits_pieces = any(p.splits_pieces for p in self.pretokenizers)
        self.reads_origin = any(p.reads_origin for p in self.pretokenizers)
        self.splits_empty_text = bool(self.pretokenizers) and getattr(self.pretokenizers[0], "splits_empty_text", False)
        exact = all(p.exact_without_alignment for p in self.pretokenizers)
        sliced = False
        for p in self.pretokenizers:
            if p.reads_origin and sliced:
                exact = False
            sliced = sliced or p.splits_pieces
        self.exact_without_alignment = exact

    @classmethod
    def from_config(cls, d: dict[str, Any], path: str) -> "Sequence":
        from . import from_config  # the registry imports this module

        items = required(d, "pretokenizers", list, path)
        key = join(path, "pretokenizers")
        return cls([from_config(item, join(key, i)) for i, item in enumerate(items)])

    def pre_tokenize(self, text: str, at_origin: bool = True) -> list[str]:
        pieces = [text] if text or self.splits_empty_text else []
        for pretokenizer in self.pretokenizers:
            if not pieces:
                break
            each = getattr(pretokenizer, "pre_tokenize_each", None)
            if each is not None:  # a member that ignores at_origin, in one call (ByteLevel)
                pieces = each(pieces)
                continue
            run = pretokenizer.pre_tokenize
            out = list(run(pieces[0], at_origin))
            # only a first piece that survives is still the first one of the input
            at_origin = at_origin and bool(out)
            for piece in pieces[1:]:
                out.extend(run(piece, False))
            pieces = out
        return pieces

    def pre_tokenize_aligned(self, ns: NormalizedString) -> list[NormalizedString]:
        pieces = [ns] if ns.text or self.splits_empty_text else []
        for pretokenizer in self.pretokenizers:
            out: list[NormalizedString] = []
            for piece in pieces:
                out.extend(pretokenizer.pre_tokenize_aligned(piece))
            pieces = out
        return pieces
