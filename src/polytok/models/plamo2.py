"""PLaMo-2 model: right-to-left Viterbi with integer scores and byte fallback (GGUF model ``plamo2``).

Stage: model. No ``tokenizer.json`` type; the GGUF reader builds it from tokens,
scores and token types.

Reproduces llama.cpp (llama-cpp-python 0.3.36, vendor/llama.cpp/src/llama-vocab.cpp):
``llm_tokenizer_plamo2::build`` and ``::encode`` (lines 1367-1646);
reference/llama_vocab.md §6.6. Read from the source only: no PLaMo-2 GGUF ships
with llama.cpp, so the tests use small vocabularies derived from that source.

llama.cpp compiles the vocabulary into a suffix automaton (a table of rows per
suffix of every token, sorted by reversed text) so that each position sees all
tokens that start there. The automaton's state at a position is the longest
token suffix the text there starts with, so its rows are exactly the tokens that
match there; polytok finds the same set with a dict probe per length.

* ``byte`` tokens named ``<0xHH>`` fill a 256-entry byte table; all 256 must
  exist and none may be id 0, else loading fails (llama.cpp throws).
* Every other token is a candidate with integer score ``round(score * 1e4)``
  (half away from zero, as C ``std::round``); a non-finite score makes it
  unusable. (llama.cpp refuses a vocabulary that lists a text twice, at
  llama-vocab.cpp:2544, so the last-entry-wins lookups here never decide anything.)
* Known divergence: a token whose scaled score is exactly -10,000,000 is taken
  by llama.cpp's table for the unknown sentinel row, which stops the search at
  that position (see tests/models/test_plamo2.py, ``uuu``); polytok still sees
  every token there.
* Encoding: code points, a leading U+FEFF dropped; from the end backwards,
  ``cost[i] = min(cost[i + len] - score)`` over the candidates at ``i`` tried
  longest first, then a one-character unknown with score -10,000,000; only a
  strictly lower cost replaces, so ties keep the longer piece.
* Output from the start: a token's id, or for an unknown the byte tokens of the
  character's UTF-8 bytes.
"""

from __future__ import annotations

import math
from typing import Sequence

from ..errors import FormatError
from ._cache import WordCache

_UNKNOWN_SCORE = -10_000_000
_INFINITE_COST = 1 << 60


def _int_score(score: float) -> int | None:
    """llama.cpp's ``(int32_t) std::round(score * 1e4)``, or None for a non-finite score."""
    if not math.isfinite(score):
        return None
    scaled = abs(score * 1e4)
    whole = math.floor(scaled)
    rounded = whole + 1 if scaled - whole >= 0.5 else whole
    return rounded if score >= 0 else -rounded


class PLaMo2:
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
        self._candidates = {piece: (score, self._ids[piece]) for piece, score in scores.items()
                            if score is not None and piece}
        self._longest = max(map(len, self._candidates), default=0)
        self._cache = WordCache()

    def tokenize(self, piece: str) -> list[int]:
        ids = self._cache.get(piece)
        if ids is None:
            ids = [token for token, _, _ in self.tokenize_spans(piece)]
            self._cache.remember(piece, ids)
        return ids[:]

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

    def token_to_id(self, token: str) -> int | None:
        return self._ids.get(token)

    def id_to_token(self, id: int) -> str | None:
        return self._pieces[id] if 0 <= id < len(self._pieces) else None

    def get_vocab(self) -> dict[str, int]:
        return dict(self._ids)

    def vocab_size(self) -> int:
        return len(self._pieces)

    def _best_path(self, text: str) -> list[tuple[int, int]]:
        """Per position, ``(length, id)`` of the first step of the cheapest path from there (id -1: unknown)."""
        size = len(text)
        cost = [_INFINITE_COST] * size + [0]
        steps = [(1, -1)] * size
        get = self._candidates.get
        for i in range(size - 1, -1, -1):
            best = cost[i]
            for length in range(min(self._longest, size - i), 0, -1):
                found = get(text[i:i + length])
                if found is not None and cost[i + length] - found[0] < best:
                    best = cost[i + length] - found[0]
                    steps[i] = (length, found[1])
            if cost[i + 1] - _UNKNOWN_SCORE < best:
                best = cost[i + 1] - _UNKNOWN_SCORE
                steps[i] = (1, -1)
            cost[i] = best
        return steps
