"""HF's ``UnigramTrainer``: a Unigram model trained on a word table.

Reproduces tokenizers 0.23.3 src/models/unigram/trainer.rs ``do_train``: an unknown
piece ``<UNK>`` (id 0, score NaN) and the seeds of `unigram_seeds`; then rounds of
``n_sub_iterations`` EM steps (E: expected counts from every word's lattice
marginals; M: pieces expected fewer than 0.5 times dropped, the rest scored
``digamma(count) - digamma(total)`` with HF's own digamma) each followed, while
the pieces outnumber 1.1 × ``vocab_size``, by a pruning step (a piece whose
2-best segmentation of itself is a single piece loses what the words' Viterbi
paths would lose without it; the best ``max(1.1 × vocab_size, shrinking_factor ×
size)`` are kept); and ``finalize``: every character of the words and of
``initial_alphabet`` (absent ones scored just under the minimum, 0.0001 apart),
then the model's pieces in order up to the vocabulary size, sorted by score
descending, after the special tokens (and ``unk_token`` first when it is not
one of them).

HF sums floats over its words in hash-map order, which differs run to run; here
the words are taken sorted by text (code points), and the characters ``finalize``
adds in code-point order. Only the E step's sums and the order among equal final
scores depend on that choice.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from ..errors import PolytokError
from .unigram_lattice import UnigramModel, add_expected, viterbi_ids
from .unigram_seeds import seed_pieces

__all__ = ["UnigramTrainer", "UnigramResult", "digamma"]

_UNK_PIECE = "<UNK>"
_EXPECTED_THRESHOLD = 0.5
_PENALTY_STEP = 0.0001

Pieces = list[tuple[str, float]]


def digamma(x: float) -> float:
    """HF's digamma (trainer.rs): the recurrence up to 7, then the asymptotic series."""
    result = 0.0
    while x < 7.0:
        result -= 1.0 / x if x != 0.0 else math.copysign(math.inf, x)  # IEEE division, as in Rust
        x += 1.0
    x -= 1.0 / 2.0
    xx = 1.0 / x
    xx2 = xx * xx
    xx4 = xx2 * xx2
    result += (math.log(x) + (1.0 / 24.0) * xx2 - 7.0 / 960.0 * xx4 + (31.0 / 8064.0) * xx4 * xx2
               - (127.0 / 30720.0) * xx4 * xx4)
    return result


@dataclass
class UnigramResult:
    """A trained Unigram model: pieces with scores (ids in order) and the unknown piece's id."""

    pieces: Pieces
    unk_id: int | None

    @property
    def ids(self) -> dict[str, int]:
        """Piece → id (a repeated piece keeps its last id, as HF's token map does)."""
        return {piece: index for index, (piece, _) in enumerate(self.pieces)}


@dataclass
class UnigramTrainer:
    """HF's ``UnigramTrainer`` options (``show_progress`` is accepted and ignored)."""

    vocab_size: int = 8000
    n_sub_iterations: int = 2
    shrinking_factor: float = 0.75
    special_tokens: list[str] = field(default_factory=list)
    initial_alphabet: list[str] = field(default_factory=list)
    unk_token: str | None = None
    max_piece_length: int = 16
    seed_size: int = 1_000_000
    show_progress: bool = True

    def seeds(self, counts: dict[str, int]) -> Pieces:
        """The pieces EM starts from: ``<UNK>`` then the seeds."""
        return [(_UNK_PIECE, math.nan), *seed_pieces(_sentences(counts), self.max_piece_length, self.seed_size)]

    def train(self, counts: dict[str, int]) -> UnigramResult:
        """The model trained on a word table (word → count)."""
        sentences = _sentences(counts)
        pieces = self.seeds(counts)
        desired = self.vocab_size * 11 // 10
        required = self._required_chars(sentences)
        if len(required) > self.vocab_size:
            raise PolytokError(f"vocab_size {self.vocab_size} cannot hold the {len(required)} characters "
                               f"of the corpus and initial_alphabet")
        model = UnigramModel(pieces)
        # every later model's pieces are a subset of the seeds: their matches in a word are too
        matches = [model.matches(word) for word, _ in sentences]
        while True:
            for _ in range(self.n_sub_iterations):
                pieces = _m_step(pieces, _e_step(model, sentences, matches))
                model = UnigramModel(pieces)
            if len(pieces) <= desired:
                break
            pieces = self._prune(model, pieces, sentences, matches)
            model = UnigramModel(pieces)
        return self._finalize(model, required)

    def _required_chars(self, sentences: list[tuple[str, int]]) -> list[str]:
        chars = {char for word, _ in sentences for char in word}
        chars.update(text[0] for text in self.initial_alphabet if text)
        return sorted(chars)

    def _prune(self, model: UnigramModel, pieces: Pieces, sentences: list[tuple[str, int]],
               matches: list[list[list[tuple[int, str]]]]) -> Pieces:
        """``prune_sentence_pieces``."""
        size = len(pieces)
        always_keep = [True] * size
        alternatives: list[list[int]] = [[] for _ in range(size)]
        always_keep[0] = False
        for index in range(1, size):
            nbests = model.lattice(pieces[index][0]).nbest(2)
            if len(nbests) == 1:
                always_keep[index] = True
            elif len(nbests[0]) >= 2:
                always_keep[index] = False
            elif len(nbests[0]) == 1:
                always_keep[index] = True
                alternatives[index] = [node.id for node in nbests[1]]
        vsum = 0.0
        freq = [0.0] * size
        inverted: list[list[int]] = [[] for _ in range(size)]
        for number, (_, count) in enumerate(sentences):
            vsum += count
            for piece_id in viterbi_ids(model, matches[number]):
                freq[piece_id] += count
                inverted[piece_id].append(number)
        total = 0.0
        for value in freq:
            total += value
        logsum = math.log(total)
        kept: Pieces = [pieces[0]]
        candidates: list[tuple[int, float]] = []
        for index in range(1, size):
            if freq[index] == 0.0 and not always_keep[index]:
                continue
            if not alternatives[index]:
                kept.append(pieces[index])
                continue
            f = 0.0
            for number in inverted[index]:
                f += sentences[number][1]
            if f == 0.0 or math.isnan(f):
                continue
            f /= vsum
            logprob_sp = math.log(freq[index]) - logsum
            # HF scales by the number of pieces less one where sentencepiece uses the alternatives'
            logsum_alt = math.log(total + freq[index] * (size - 1))
            logprob_alt = 0.0
            for alt in alternatives[index]:
                logprob_alt += math.log(freq[alt] + freq[index]) - logsum_alt
            candidates.append((index, f * (logprob_sp - logprob_alt)))
        pruned_size = max(self.vocab_size * 11 // 10, int(size * self.shrinking_factor))
        candidates.sort(key=lambda item: -item[1])
        for index, _ in candidates:
            if len(kept) == pruned_size:
                break
            kept.append(pieces[index])
        return kept

    def _finalize(self, model: UnigramModel, required: list[str]) -> UnigramResult:
        penalty = 0.0
        pieces: Pieces = []
        inserted = {_UNK_PIECE}
        existing = dict(model.pieces)
        for char in required:
            inserted.add(char)
            if char in existing:
                pieces.append((char, existing[char]))
            else:
                pieces.append((char, model.min_score + penalty))
                penalty += _PENALTY_STEP
        unk_id: int | None = None
        add_unk = False
        if self.unk_token is not None:
            if self.unk_token in self.special_tokens:
                unk_id = self.special_tokens.index(self.unk_token)
            else:
                unk_id, add_unk = 0, True
        limit = self.vocab_size - len(self.special_tokens) - (1 if add_unk else 0)
        for piece, score in model.pieces:
            if piece in inserted:
                continue
            inserted.add(piece)
            pieces.append((piece, 0.0 if math.isnan(score) else score))
            if len(pieces) == limit:
                break
        pieces.sort(key=lambda item: -item[1])
        special: Pieces = [(token, 0.0) for token in self.special_tokens]
        if add_unk:
            assert self.unk_token is not None
            special.insert(0, (self.unk_token, 0.0))
        return UnigramResult([*special, *pieces], unk_id)


def _sentences(counts: dict[str, int]) -> list[tuple[str, int]]:
    return sorted(counts.items())


def _e_step(model: UnigramModel, sentences: list[tuple[str, int]],
            matches: list[list[list[tuple[int, str]]]]) -> list[float]:
    expected = [0.0] * len(model.pieces)
    for (word, count), found in zip(sentences, matches, strict=True):
        z = add_expected(model, found, float(count), expected)
        if math.isnan(z):
            raise PolytokError(f"the likelihood of the word {word[:40]!r} is NaN")
    return expected


def _m_step(pieces: Pieces, expected: list[float]) -> Pieces:
    kept: Pieces = [(pieces[0][0], math.nan)]
    total = 0.0
    for index in range(1, len(pieces)):
        count = expected[index]
        if count < _EXPECTED_THRESHOLD:
            continue
        kept.append((pieces[index][0], count))
        total += count
    logsum = digamma(total)
    return [(piece, digamma(count) - logsum) for piece, count in kept]
