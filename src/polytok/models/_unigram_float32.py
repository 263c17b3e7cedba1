"""sentencepiece's float32 unigram Viterbi over a whole text, with per-word results cached when provably equal.

Part of `Unigram` (``float32=True``). Reproduces sentencepiece 0.2.3
``unigram_model.cc`` ``Model::EncodeOptimized``: positions in order, the pieces
that start there shortest first, then the unknown node; every offer is
``float(best[start] + score)`` (C++ ``float``) and wins only if strictly greater;
when ``best[start]`` leaves [-100000, 100000], every best score from ``start`` to
the farthest end reached is shifted by it.

Performance (the hot loop of sentencepiece unigram models). sentencepiece runs
the Viterbi over the whole normalized text, so a word's result depends on the
float32 score of everything before it (rounding, and the shift); per-word caching
as HF does is not exact. It is made exact here, by proof rather than hope:

* the text is cut before each run of ``"▁"`` when no matchable piece holds a
  ``"▁"`` right after another character (or after each run, when no piece
  holds a character right after a ``"▁"``: suffix-style pieces, as in Marian's
  models), so no node crosses a cut and the global Viterbi is the per-word ones
  chained by the score ``B`` at each cut;
* a word's local Viterbi is run once in float64 from score 0, recording the
  smallest margin by which any winner beat any other offer and the largest
  magnitude of any offer. At a cut with incoming ``B`` (already shifted to 0 if
  sentencepiece would shift there), if no offer can reach the shift bound and
  the margin exceeds twice the float32 rounding the word's sums can accumulate
  (``2 (n + 2) 2**-24 (|B| + reach)`` for an ``n``-character word), every
  float32 comparison sentencepiece makes in the word goes the same way, so the
  cached nodes are its nodes; ``B`` then advances by float32 additions along them,
  exactly as sentencepiece stores them. Otherwise the word is run in float32 from
  ``B``, as sentencepiece does.

Rounding to float32 is a store into ``array("f")`` of the float64 sum. When both
operands are float32 values (every score sentencepiece's reader passes, and every
best score) that is exactly C++'s float addition: rounding first to binary64 and
then to binary32 never differs from one rounding for a sum of two binary32 values
(53 >= 2 * 24 + 2; Figueroa, "When is double rounding innocuous?", 1995).

The compiled kernel (``polytok._kernels.unigram``, used by `Unigram` when built)
runs `_exact`'s loop over the whole text with the same store of the double sum,
so it needs neither the cut nor the proof.

Measured: with the cached words, Unigram fixtures run several times faster than
the whole-text float32 loop, and only a small share of the words (words of 256+
characters, and near-ties) take that loop (bench/README.md, 'Measurements behind
design choices').
"""

from __future__ import annotations

from array import array

import regex

SHIFT_AT = 100000.0  # sentencepiece's kScoreResetThreshold
_EPS = 2.0 ** -24
_CACHED_CHARS = 256
# compiled only where a float32 Viterbi is made (regex caches them): importing costs no compile
_RUN_START = r"(?<=[^\u2581])(?=\u2581)"  # before each run of "▁"
_RUN_END = r"(?<=\u2581)(?=[^\u2581])"  # after each run (suffix-style pieces)

def backtrack(start_of: array[int], id_of: list[int]) -> tuple[list[int], array[int]]:
    """The best path's node ids and ends, first to last, from a Viterbi's last-node tables."""
    ids: list[int] = []
    ends = array("i")
    end = len(start_of) - 1
    while end > 0:
        ids.append(id_of[end])
        ends.append(end)
        end = start_of[end]
    ids.reverse()
    ends.reverse()
    return ids, ends


class Float32Viterbi:
    """The float32 Viterbi of one vocabulary (`Unigram`'s tables)."""

    def __init__(self, match_ids: dict[str, int], scores: list[float], reach: dict[str, int], unk_id: int,
                 unk_score: float) -> None:
        self._get = match_ids.get
        self._scores = scores
        self._reach = reach
        self._unk_id = unk_id
        self._unk_score = unk_score
        joined = "\0".join(match_ids)
        cut = _RUN_START if regex.search("[^\0\u2581]\u2581", joined) is None else \
            _RUN_END if regex.search("\u2581[^\0\u2581]", joined) is None else None
        self._cut = None if cut is None else regex.compile(cut)
        self._words: dict[str, tuple[list[tuple[int, int, int, float]], float, float]] = {}
        self._round = array("f", b"\0\0\0\0")

    def __getstate__(self) -> dict[str, object]:
        """Pickled without the per-word results (refilled as words are met)."""
        return {**self.__dict__, "_words": {}}

    def nodes(self, text: str) -> tuple[list[int], array[int]]:
        """The ids of sentencepiece's best path (unknown nodes are `unk_id`, one character each) and where each ends."""
        if self._cut is None:
            ids, ends, _ = self._exact(text, 0.0)
            return ids, ends
        out: tuple[list[int], array[int]] = ([], array("i"))
        score = 0.0
        start = 0
        for cut in self._cut.finditer(text):
            score = self._word(text[start:cut.start()], start, score, out)
            start = cut.start()
        self._word(text[start:], start, score, out)
        return out

    def _word(self, word: str, offset: int, score: float, out: tuple[list[int], array[int]]) -> float:
        if not word:
            return score
        if not -SHIFT_AT <= score <= SHIFT_AT:
            score = 0.0  # sentencepiece's shift at the word's first position
        cached = self._words.get(word) if len(word) < _CACHED_CHARS else None
        if cached is None and len(word) < _CACHED_CHARS:
            if len(self._words) >= 1 << 16:
                self._words.clear()
            cached = self._words[word] = self._local(word)
        out_ids, out_ends = out
        if cached is not None and self._proved(len(word), score, cached[1], cached[2]):
            rounded = self._round
            for id_, _, b, piece_score in cached[0]:
                out_ids.append(id_)
                out_ends.append(offset + b)
                rounded[0] = score + piece_score
                score = rounded[0]
            return score
        ids, ends, score = self._exact(word, score)
        out_ids += ids
        out_ends.extend(map(offset.__add__, ends))
        return score

    @staticmethod
    def _proved(size: int, score: float, margin: float, reach: float) -> bool:
        """Whether float32 rounding from `score` cannot change any decision of the cached word."""
        top = abs(score) + reach
        return top < SHIFT_AT and margin > 2 * (size + 2) * _EPS * top + 1e-12

    def _offers(self, word: str, start: int) -> list[tuple[int, int, float]]:
        """``(end, id, score)`` of the nodes that start at `start`, in sentencepiece's order."""
        get, scores, size = self._get, self._scores, len(word)
        found = get(word[start])
        offers = [] if found is None else [(start + 1, found, scores[found])]
        for end in range(start + 2, min(start + self._reach.get(word[start:start + 2], 0), size) + 1):
            hit = get(word[start:end])
            if hit is not None:
                offers.append((end, hit, scores[hit]))
        if found is None:
            offers.append((start + 1, self._unk_id, self._unk_score))
        return offers

    def _local(self, word: str) -> tuple[list[tuple[int, int, int, float]], float, float]:
        """The word's float64 Viterbi from 0: its nodes with scores, the least winning margin, the largest offer."""
        size = len(word)
        best = [0.0] * (size + 1)
        second = [-float("inf")] * (size + 1)
        start_of = [-1] * (size + 1)
        id_of = [0] * (size + 1)
        score_of = [0.0] * (size + 1)
        reach = 0.0
        for start in range(size):
            here = best[start]
            for end, id_, score in self._offers(word, start):
                offer = here + score
                reach = max(reach, abs(offer))
                if start_of[end] < 0 or offer > best[end]:
                    if start_of[end] >= 0:
                        second[end] = max(second[end], best[end])
                    best[end], start_of[end], id_of[end], score_of[end] = offer, start, id_, score
                else:
                    second[end] = max(second[end], offer)
        margin = min((best[e] - second[e] for e in range(1, size + 1)), default=float("inf"))
        nodes = []
        end = size
        while end > 0:
            nodes.append((id_of[end], start_of[end], end, score_of[end]))
            end = start_of[end]
        nodes.reverse()
        return nodes, margin, reach

    def _exact(self, word: str, first: float) -> tuple[list[int], array[int], float]:
        """sentencepiece's float32 loop over `word` from the score `first`: its node ids and ends, and final score."""
        size = len(word)
        best = array("f", bytes(4 * (size + 1)))
        best[0] = first
        start_of = array("i", [-1]) * (size + 1)
        id_of = [0] * (size + 1)
        rounded = self._round
        frontier = 0
        for start in range(size):
            here = best[start]
            if not -SHIFT_AT <= here <= SHIFT_AT:
                for i in range(start, frontier + 1):
                    if i == start or start_of[i] != -1:
                        best[i] = best[i] - here
                here = 0.0
            for end, id_, score in self._offers(word, start):
                frontier = max(frontier, end)
                rounded[0] = here + score
                offer = rounded[0]
                if start_of[end] < 0 or offer > best[end]:
                    best[end], start_of[end], id_of[end] = offer, start, id_
        ids, ends = backtrack(start_of, id_of)
        return ids, ends, best[size]
