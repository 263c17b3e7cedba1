"""PieceLookup model: sentencepiece's WORD and CHAR models (each word or character looked up whole).

Stage: model. No ``tokenizer.json`` type; the sentencepiece reader builds it for
``trainer_spec.model_type`` WORD or CHAR. It takes the whole normalized text.

Reproduces sentencepiece 0.2.3: ``word_model.cc`` (``Model::Encode``: the text cut
by ``SplitIntoWords`` with its defaults, a new word at the start and before every
``"▁"``), ``char_model.cc`` (``Model::Encode``: the longest user-defined symbol at
each position, else one character), both looking each part up among the normal,
user-defined and unused pieces (``PieceToIdNoReserved``), an unused piece or a
missing one being unknown; then ``SentencePieceProcessor::EncodeOptimized``: a run
of unknown parts is one unknown id, or with byte fallback each unknown part is its
``<0xHH>`` byte pieces. The token strings and byte-piece offsets follow
sentencepiece too (`PieceListLookup.token_value`, `spell_bytes`): an unknown
run shows its normalized text, not ``<unk>``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Literal

from ..errors import FormatError
from ._cache import WordCache
from ._vocab import PieceListLookup, spell_bytes

_SPACE = "\u2581"


class PieceLookup(PieceListLookup):
    """Whole-part lookup over a sentencepiece vocabulary.

    Args:
        pieces: the pieces; a piece's id is its index.
        usable: per id, whether a part may be that piece (sentencepiece: normal and user-defined).
        split: ``"word"`` (WORD model) or ``"char"`` (CHAR model).
        unk_id: the id of an unknown part (None only with `byte_fallback`).
        byte_fallback: spell each unknown part as its ``<0xHH>`` pieces.
        whole_symbols: user-defined pieces, kept whole by the ``"char"`` split.
    """

    def __init__(self, pieces: Sequence[str], usable: Sequence[bool], *, split: Literal["word", "char"],
                 unk_id: int | None, byte_fallback: bool = False, whole_symbols: Iterable[str] = ()) -> None:
        if split not in ("word", "char"):
            raise FormatError(f"split must be 'word' or 'char', not {split!r}", key="split")
        if unk_id is None and not byte_fallback:
            raise FormatError("an unknown id is needed without byte fallback", key="unk_id")
        self._pieces = list(pieces)
        self._ids = {piece: index for index, piece in enumerate(self._pieces)}
        self._usable = {piece: index for index, piece in enumerate(self._pieces) if usable[index]}
        self._split = split
        self._unk_id = -1 if unk_id is None else unk_id
        self._byte_fallback = byte_fallback
        self._symbols = frozenset(s for s in whole_symbols if s)
        self._longest = max(map(len, self._symbols), default=0)
        self._cache = WordCache()

    def tokenize(self, piece: str) -> list[int]:
        return self._cache.ids(piece, self.tokenize_spans)

    def tokenize_spans(self, piece: str) -> list[tuple[int, int, int]]:
        tokens: list[tuple[int, int, int]] = []
        unk, usable = self._unk_id, self._usable
        for start, end in self._parts(piece):
            found = usable.get(piece[start:end])
            if found is not None:
                tokens.append((found, start, end))
            elif self._byte_fallback:
                tokens += spell_bytes(piece, start, end, self._ids)
            elif tokens and tokens[-1][0] == unk:
                tokens[-1] = (unk, tokens[-1][1], end)
            else:
                tokens.append((unk, start, end))
        return tokens

    def _parts(self, text: str) -> list[tuple[int, int]]:
        if self._split == "word":
            cuts = [0] + [i for i, ch in enumerate(text) if ch == _SPACE and i > 0] + [len(text)]
            return [(a, b) for a, b in zip(cuts, cuts[1:]) if b > a]
        parts = []
        at, size, symbols = 0, len(text), self._symbols
        while at < size:
            step = 1
            if symbols:
                step = max((k for k in range(1, min(self._longest, size - at) + 1) if text[at:at + k] in symbols),
                           default=1)
            parts.append((at, at + step))
            at += step
        return parts
