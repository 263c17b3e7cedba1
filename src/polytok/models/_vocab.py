"""Vocabulary helpers shared by the models: the ``{token: id}`` map of BPE, WordPiece and WordLevel,
read and checked, and the lookups every model answers from it (`VocabLookup`); the score-list
models' lookups and token strings (`PieceListLookup`), sentencepiece's byte fallback
(`spell_bytes`) and its one-unk-per-run rule (`collapse_runs`).

HF tokenizers 0.23.3 reads these maps with serde into ``AHashMap<String, u32>``
(models/bpe/serialization.rs, wordpiece/serialization.rs, wordlevel/serialization.rs):
every id must be an integer in ``[0, 2**32)``; a JSON float such as ``5.0`` is refused.
"""

from __future__ import annotations

import operator
from collections.abc import Iterable, Iterator
from typing import Any

from .._config import join, required
from ..bounded_cache import BoundedCache
from ..errors import EncodeError, FormatError
from ._cache import WordCache
from .base import ModelBase

_U32_MAX = 0xFFFFFFFF
BYTE_PIECES = tuple(f"<0x{b:02X}>" for b in range(256))
_BYTE_PIECE_SET = frozenset(BYTE_PIECES)

Node = tuple[int, int, int]  # (id, start, end) of one token in a piece


def collapse_runs(tokens: Iterable[Node], unk_id: int) -> Iterator[Node]:
    """`tokens` with each run of `unk_id` tokens made one, spanning the run (sentencepiece's
    ``EncodeOptimized`` and llama.cpp's UGM backtrack merge such runs)."""
    run_start = run_end = -1
    for token, start, end in tokens:
        if token == unk_id:
            run_start = start if run_start < 0 else run_start
            run_end = end
            continue
        if run_start >= 0:
            yield unk_id, run_start, run_end
            run_start = -1
        yield token, start, end
    if run_start >= 0:
        yield unk_id, run_start, run_end


def read_vocab(d: dict[str, Any], path: str) -> dict[str, int]:
    """``d["vocab"]`` as a fresh ``{token: id}`` dict, every id checked to be a u32."""
    vocab: dict[str, Any] = required(d, "vocab", dict, path)
    values = vocab.values()
    valid = set(map(type, values)) <= {int} and (not vocab or (min(values) >= 0 and max(values) <= _U32_MAX))
    if not valid:
        for token, value in vocab.items():
            if type(value) is not int or not 0 <= value <= _U32_MAX:
                raise FormatError(f"expected an id in [0, 2**32), found {value!r:.60}",
                                  key=join(join(path, "vocab"), token))
    return dict(vocab)


def invert(vocab: dict[str, int]) -> dict[int, str]:
    """``{id: token}``. When several tokens share one id, the last of them in the map's order wins.

    HF builds the same reverse map by iterating a hash map, so which token it keeps
    for a shared id is unspecified; polytok's choice is deterministic.
    """
    return dict(zip(vocab.values(), vocab.keys()))


def utf8_len(ch: str) -> int:
    """Byte length of one character in UTF-8."""
    code = ord(ch)
    return 1 if code < 0x80 else 2 if code < 0x800 else 3 if code < 0x10000 else 4


def byte_to_char(text: str) -> list[int]:
    """For each UTF-8 byte of `text`, the index of the character that holds it."""
    if text.isascii():
        return list(range(len(text)))
    owners: list[int] = []
    for index, ch in enumerate(text):
        owners.extend([index] * utf8_len(ch))
    return owners


def byte_spans_to_chars(text: str, ids: list[int], lengths: list[int]) -> list[tuple[int, int, int]]:
    """Tokens with byte lengths (laid end to end from byte 0) as ``(id, start_char, end_char)``.

    A token covers every character that holds one of its bytes, as HF's
    offsets do once mapped through the alignments (first byte's start,
    last byte's end). A span that runs past the end of `text` is clamped to it.
    """
    owners = byte_to_char(text)
    last = len(owners) - 1
    spans = []
    start = 0
    for token_id, length in zip(ids, lengths):
        end = start + length
        first = owners[min(start, last)]
        spans.append((token_id, first, owners[min(end - 1, last)] + 1))
        start = end
    return spans


def spell_bytes(text: str, start: int, end: int, ids: dict[str, int]) -> list[tuple[int, int, int]]:
    """sentencepiece's byte fallback for the unknown ``text[start:end]``: one ``<0xHH>`` piece per UTF-8 byte.

    Offsets as sentencepiece 0.2.3 gives them (sentencepiece_processor.cc,
    ``PopulateSentencePieceText``, the byte-fallback branch): the last byte piece
    covers the whole span, each one before it is empty at the span's start.

    Raises:
        EncodeError: the vocabulary has no piece for one of the bytes.
    """
    raw = text[start:end].encode("utf-8", "surrogatepass")
    tokens = []
    for index, byte in enumerate(raw):
        found = ids.get(BYTE_PIECES[byte])
        if found is None:
            raise EncodeError(f"byte fallback: the vocabulary has no piece '{BYTE_PIECES[byte]}'")
        tokens.append((found, start, end if index == len(raw) - 1 else start))
    return tokens


class PieceListLookup(ModelBase):
    """The same lookups over ``_pieces`` (id → piece, a list) and ``_ids`` (piece → id): the
    score-list models (Unigram, SPM, sentencepiece's WORD/CHAR, PLaMo-2), whose ids are list
    positions, and each keeps its word cache in ``_cache``.

    `token_value`, the string `Encoding.tokens` shows, is one rule for all but PLaMo-2: the
    text the token covers in the model's input (the normalized text), except a byte
    piece that spells that text's bytes in a model with byte fallback
    (`_byte_fallback`), which shows its ``<0xHH>`` piece. So an unknown span shows its
    own text, as sentencepiece 0.2.3 does (``EncodeAsPieces`` without
    ``emit_unk_piece``: sentencepiece_processor.cc, ``EncodeOptimized`` and
    ``PopulateSentencePieceText`` give the normalized text of the unknown run, a run
    of unknown pieces joined into one) and HF's Unigram does (models/unigram/model.rs,
    ``Model::tokenize``: the fused string of an unknown run, even when ``unk_id`` is
    a byte piece, unless the run is spelt in byte pieces). A known piece covers its
    own text, so it shows its piece.
    """

    _pieces: list[str]
    _ids: dict[str, int]
    _cache: WordCache
    _byte_fallback: bool = False

    def token_value(self, id: int, piece: str, start: int, end: int) -> str:
        text = piece[start:end]
        name = self._pieces[id] if 0 <= id < len(self._pieces) else text
        if self._byte_fallback and name in _BYTE_PIECE_SET:
            ids = self._ids
            if all(BYTE_PIECES[b] in ids for b in text.encode("utf-8", "surrogatepass")):
                return name
        return text

    def token_to_id(self, token: str) -> int | None:
        return self._ids.get(token)

    def id_to_token(self, id: int) -> str | None:
        return self._pieces[id] if 0 <= id < len(self._pieces) else None

    def get_vocab(self) -> dict[str, int]:
        return dict(self._ids)

    def vocab_size(self) -> int:
        return len(self._pieces)

    def caches(self) -> list[BoundedCache[Any]]:
        return [self._cache]


class VocabLookup(ModelBase):
    """``token_to_id`` / ``id_to_token`` / ``get_vocab`` / ``vocab_size`` over ``_vocab`` and ``_vocab_r``."""

    _vocab: dict[str, int]
    _vocab_r: dict[int, str] | list[str]  # a list: `_vocab` is {_vocab_r[i]: i}, each token once

    def token_to_id(self, token: str) -> int | None:
        return self._vocab.get(token)

    def id_to_token(self, id: int) -> str | None:
        """The token of `id`; for an id shared by several tokens, the last of them in the vocab."""
        tokens = self._vocab_r
        if isinstance(tokens, list):  # answers as the {id: token} dict would, for any key equal to an id
            at: Any = id
            if type(at) is not int:
                try:
                    at = int(at) if isinstance(at, float) and at.is_integer() else operator.index(at)
                except TypeError:
                    return None
            return tokens[at] if 0 <= at < len(tokens) else None
        return tokens.get(id)

    def get_vocab(self) -> dict[str, int]:
        return dict(self._vocab)

    def vocab_size(self) -> int:
        return len(self._vocab)
