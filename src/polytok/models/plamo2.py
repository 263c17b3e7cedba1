"""PLaMo-2 model: right-to-left Viterbi with integer scores and byte fallback (GGUF model ``plamo2``).

Stage: model. No ``tokenizer.json`` type; the GGUF reader builds it from tokens,
scores and token types.

Reproduces llama.cpp (llama-cpp-python 0.3.36, vendor/llama.cpp/src/llama-vocab.cpp):
``llm_tokenizer_plamo2::build`` and ``::encode`` (lines 1367-1646);
reference/llama_vocab.md §6.6. No PLaMo-2 GGUF ships with llama.cpp; the tests
use ids recorded from llama.cpp on a synthetic one.

llama.cpp compiles the vocabulary into a suffix automaton: a table with, for
every token text and every proper suffix of one (an "entry"), rows for its
prefixes that are entries, longest first, closed by an unknown sentinel row.
Scanning from the end, the state at a position is the longest entry the text
there starts with, found from the next position's state by trying ``char +
prefix`` over that state's rows. polytok keeps the same states as strings and
builds each state's rows on demand (cached) instead of the whole table.

* ``byte`` tokens named ``<0xHH>`` fill a 256-entry byte table; all 256 must
  exist and none may be id 0, else loading fails (llama.cpp throws).
* Every other token is a candidate with integer score ``round(score * 1e4)``
  (half away from zero, as C ``std::round``); a non-finite score makes it
  unusable. (llama.cpp refuses a vocabulary that lists a text twice, at
  llama-vocab.cpp:2544, so the last-entry-wins lookups here never decide anything.)
* subtle: a token whose scaled score is exactly -10,000,000 looks like the
  sentinel, so both row scans stop at it: shorter tokens and the unknown are
  not offered there, and the next state may fall back to empty (``uuu`` in
  tests/models/test_plamo2.py), as in llama.cpp.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from ..errors import FormatError
from ._cache import WordCache
from ._vocab import PieceListLookup

_UNKNOWN_SCORE = -10_000_000
_INVALID_SCORE = -20_000_000
_ROW_CACHE_LIMIT = 1 << 16
_INFINITE_COST = 1 << 60


def _int_score(score: float) -> int | None:
    """llama.cpp's ``(int32_t) std::round(score * 1e4)``, or None for a non-finite score."""
    if not math.isfinite(score):
        return None
    scaled = abs(score * 1e4)
    whole = math.floor(scaled)
    rounded = whole + 1 if scaled - whole >= 0.5 else whole
    return rounded if score >= 0 else -rounded


def _suffix_entries(scores: dict[str, int | None], ids: dict[str, int]) -> dict[str, tuple[int, int]]:
    """Every token text and every proper suffix of one: ``(score, id)``; a bare suffix (or a
    non-finite score) is ``_INVALID_SCORE`` and id -1 (a suffix that is a byte token's text keeps
    no id either, as llama.cpp's table gives it none unless the text is a token)."""
    entries: dict[str, tuple[int, int]] = {}
    for piece, score in scores.items():
        entries[piece] = (_INVALID_SCORE if score is None else score, ids[piece])
    for piece in scores:
        for start in range(1, len(piece)):
            suffix = piece[start:]
            if suffix not in entries:
                entries[suffix] = (_INVALID_SCORE, ids.get(suffix, -1))
    return entries


class PLaMo2(PieceListLookup):
    """PLaMo-2's Viterbi tokenizer, as llama.cpp's ``llm_tokenizer_plamo2``.

    Args:
        vocab: ``(piece, score)`` pairs; a piece's id is its index (scores as float32 values).
        byte: per id, whether the token has the ``byte`` type.

    Raises:
        FormatError: a byte token ``<0xHH>`` is missing or has id 0.
    """

    def __init__(self, vocab: Sequence[tuple[str, float]], byte: Sequence[bool]) -> None:
        self._pieces = [piece for piece, _ in vocab]
        self._ids = {piece: index for index, piece in enumerate(self._pieces)}
        self._bytes = [0] * 256
        scores: dict[str, int | None] = {}
        for index, (piece, score) in enumerate(vocab):
            if byte[index]:
                if len(piece) == 6 and piece.startswith("<0x") and piece.endswith(">"):
                    digits = piece[3:5]
                    if all(c in "0123456789abcdefABCDEF" for c in digits):
                        self._bytes[int(digits, 16)] = index
                continue
            scores[piece] = _int_score(score)
        missing = [b for b in range(256) if self._bytes[b] == 0]
        if missing:
            raise FormatError(f"PLaMo-2: byte token <0x{missing[0]:02X}> is not set", key="token_type")
        self._entries = _suffix_entries(scores, self._ids)
        self._row_cache: dict[str, list[tuple[int, int, int]]] = {}
        self._cache = WordCache()

    def __getstate__(self) -> dict[str, object]:
        """Pickled without the rows built on demand (the word cache pickles empty too)."""
        return {**self.__dict__, "_row_cache": {}}

    def tokenize(self, piece: str) -> list[int]:
        return self._cache.ids(piece, self.tokenize_spans)

    def tokenize_spans(self, piece: str) -> list[tuple[int, int, int]]:
        skip = 1 if piece.startswith("\ufeff") else 0
        steps = self._best_path(piece[skip:])
        tokens: list[tuple[int, int, int]] = []
        position = 0
        while position < len(steps):
            length, token = steps[position]
            start, end = position + skip, position + skip + length
            if token >= 0:
                tokens.append((token, start, end))
            else:
                tokens.extend((self._bytes[b], start, end) for b in piece[start].encode("utf-8", "surrogatepass"))
            position += length
        return tokens

    def token_value(self, id: int, piece: str, start: int, end: int) -> str:
        return self._pieces[id]


    def _rows(self, state: str) -> list[tuple[int, int, int]]:
        """The table rows of `state`: ``(prefix length, score, id)`` of its prefixes that are entries,
        longest first, then the unknown sentinel ``(0, UNKNOWN, -1)``; cut after the first row
        whose score equals the sentinel's (llama.cpp's loops stop there)."""
        rows = self._row_cache.get(state)
        if rows is None:
            rows = []
            for length in range(len(state), 0, -1):
                found = self._entries.get(state[:length])
                if found is not None:
                    rows.append((length, *found))
                    if found[0] == _UNKNOWN_SCORE:
                        break
            else:
                rows.append((0, _UNKNOWN_SCORE, -1))
            if len(self._row_cache) >= _ROW_CACHE_LIMIT:
                self._row_cache.clear()
            self._row_cache[state] = rows
        return rows

    def _best_path(self, text: str) -> list[tuple[int, int]]:
        """Per position, ``(length, id)`` of the first step of the cheapest path from there (id -1: unknown).

        `state` is the automaton's state: the longest entry (token or token suffix)
        that the text at the position starts with, found from the previous state.
        """
        size = len(text)
        cost = [_INFINITE_COST] * size + [0]
        steps = [(1, -1)] * size
        entries = self._entries
        state = ""
        for i in range(size - 1, -1, -1):
            ch = text[i]
            following, state = state, ""
            for length, score, _ in self._rows(following):
                if ch + following[:length] in entries:
                    state = ch + following[:length]
                    break
                if score == _UNKNOWN_SCORE:
                    break
            best = cost[i]
            for length, score, token in self._rows(state):
                if score > _INVALID_SCORE:
                    step = length or 1
                    if cost[i + step] - score < best:
                        best = cost[i + step] - score
                        steps[i] = (step, token)
                if score == _UNKNOWN_SCORE:
                    break
            cost[i] = best
        return steps
