"""sentencepiece's Unigram trainer: seed, EM, pruning and the final vocabulary.

Reproduces sentencepiece 0.2.3 src/unigram_model_trainer.cc (``Trainer::Train``
with the default discrete pruning, ``RunEStep``, ``RunMStep``, ``Digamma``,
``PruneSentencePieces``, ``PruneUnreachableSentencePieces``,
``FinalizeSentencePieces``) over the lattice of `sentencepiece_lattice`:

1. seed pieces from the whole sentences (`sentencepiece_seeds`), then the
   sentences become words when ``split_by_whitespace``;
2. until at most ``int(vocab_size * 1.1)`` pieces remain: ``num_sub_iterations``
   EM rounds (E: expected counts by forward-backward, float32; M: pieces
   expected below 0.5 are dropped, the rest scored ``digamma(count) -
   digamma(total)``), then pruning: a piece whose own best segmentation is
   itself and which has a second best loses ``F * (log p - log p_alt)``, and the
   least lossy are kept up to ``max(int(vocab_size * 1.1), shrinking_factor * n)``;
3. pieces that Viterbi can never produce (a split scores higher) are dropped;
4. the required characters (their score, or the lowest score plus 0.0001 per
   missing one) and then the best-scored pieces fill ``vocab_size`` minus the
   meta pieces, sorted by score descending, then bytes.

``num_threads`` is reproduced: sentencepiece's E step and Viterbi counts give
sentence i to thread ``i % num_threads`` and add the threads' float32 vectors in
thread order, so the result depends on it but not on scheduling.
"""

from __future__ import annotations

import math

from .sentencepiece_corpus import Corpus, MetaPiece, split_sentences
from .sentencepiece_f32 import f32
from .sentencepiece_lattice import PieceModel
from .sentencepiece_options import TrainOptions
from .sentencepiece_pieces import PieceRules
from .sentencepiece_seeds import seed_pieces

__all__ = ["train_unigram", "digamma"]

Pieces = list[tuple[str, float]]


def digamma(x: float) -> float:
    """sentencepiece's ``Digamma`` (asymptotic series after shifting x to 7 or more), in double."""
    result = 0.0
    while x < 7:
        result -= 1 / x
        x += 1
    x -= 1.0 / 2.0
    xx = 1.0 / x
    xx2 = xx * xx
    xx4 = xx2 * xx2
    result += (math.log(x) + (1.0 / 24.0) * xx2 - (7.0 / 960.0) * xx4 + (31.0 / 8064.0) * xx4 * xx2
               - (127.0 / 30720.0) * xx4 * xx4)
    return result


class _UnigramTrainer:
    def __init__(self, sentences: list[tuple[str, int]], threads: int) -> None:
        self.sentences = sentences
        self.threads = threads

    def e_step(self, model: PieceModel) -> list[float]:
        size = len(model.pieces)
        total: list[float] | None = None
        for thread in range(self.threads):
            expected = [0.0] * size
            for index in range(thread, len(self.sentences), self.threads):
                text, freq = self.sentences[index]
                model.lattice(text).marginal(f32(float(freq)), expected)
            if total is None:
                total = expected
            else:
                total = [f32(a + b) for a, b in zip(total, expected, strict=True)]
        assert total is not None
        return total

    @staticmethod
    def m_step(model: PieceModel, expected: list[float]) -> Pieces:
        kept: Pieces = []
        total = 0.0
        for (piece, _), freq in zip(model.pieces, expected, strict=True):
            if freq < 0.5:
                continue
            kept.append((piece, freq))
            total = f32(total + freq)
        log_total = f32(digamma(total))
        return [(piece, f32(digamma(freq) - log_total)) for piece, freq in kept]

    def viterbi_counts(self, model: PieceModel) -> list[float]:
        size = len(model.pieces)
        counts = [0.0] * size
        for thread in range(self.threads):
            local = [0.0] * size
            for index in range(thread, len(self.sentences), self.threads):
                text, freq = self.sentences[index]
                weight = f32(float(freq))
                for node in model.lattice(text).viterbi()[0]:
                    if node.id >= 0:
                        local[node.id] = f32(local[node.id] + weight)
            counts = [f32(a + b) for a, b in zip(counts, local, strict=True)]
        return counts

    def prune(self, model: PieceModel, desired: int, shrinking_factor: float) -> Pieces:
        pieces = model.pieces
        always_keep = [True] * len(pieces)
        alternatives: list[list[int]] = [[] for _ in pieces]
        for index, (piece, _) in enumerate(pieces):
            nbests = model.lattice(piece).nbest(2)
            if len(nbests) == 1:
                continue
            if len(nbests[0]) >= 2:
                always_keep[index] = False
            elif len(nbests[0]) == 1:
                alternatives[index] = [node.id for node in nbests[1]]
        freq = self.viterbi_counts(model)
        total_double = 0.0
        for value in freq:
            total_double += value
        total = f32(total_double)
        log_total = f32(math.log(total))
        kept: Pieces = []
        candidates: list[tuple[int, float]] = []
        for index, entry in enumerate(pieces):
            if freq[index] == 0 or not always_keep[index]:
                continue
            if not alternatives[index]:
                kept.append(entry)
                continue
            logprob_sp = f32(math.log(freq[index]) - log_total)
            log_total_alt = f32(math.log(f32(total + f32(freq[index] * float(len(alternatives[index]) - 1)))))
            logprob_alt = 0.0
            for other in alternatives[index]:
                logprob_alt = f32(logprob_alt + (math.log(f32(freq[other] + freq[index])) - log_total_alt))
            share = f32(freq[index] / total)
            candidates.append((index, f32(share * f32(logprob_sp - logprob_alt))))
        pruned_size = max(desired, int(f32(shrinking_factor * float(len(pieces)))))
        candidates.sort(key=lambda item: (-item[1], item[0]))
        for index, _ in candidates:
            if len(kept) == pruned_size:
                break
            kept.append(pieces[index])
        return kept

    @staticmethod
    def prune_unreachable(model: PieceModel) -> Pieces:
        kept: Pieces = []
        for index, entry in enumerate(model.pieces):
            lattice = model.lattice(entry[0])
            own = next((node for node in lattice.begin_nodes[0]
                        if node.id == index and node.length == lattice.size), None)
            if own is None:
                continue
            original = own.score
            own.score = float("-inf")
            path, score = lattice.viterbi()
            own.score = original
            if path and score > original:
                continue
            kept.append(entry)
        return kept


def _checked_model(pieces: Pieces) -> PieceModel:
    for piece, score in pieces:
        if not math.isfinite(score):
            raise ValueError(f"unigram training gave piece {piece!r} a score of {score}")
    if not pieces:
        raise ValueError("unigram training left no piece")
    return PieceModel(pieces)


def train_unigram(corpus: Corpus, rules: PieceRules, options: TrainOptions,
                  metas: dict[int, MetaPiece]) -> list[tuple[str, float]]:
    """The NORMAL pieces and their scores, in id order (meta pieces not included).

    Raises:
        ValueError: no required character, no seed piece, or a non-finite score.
    """
    if not corpus.required_chars:
        raise ValueError("texts: no required character")
    seeds = seed_pieces(corpus.sentences, rules, options["seed_sentencepiece_size"], options["vocab_size"])
    if not seeds:
        raise ValueError("texts: no seed piece")
    model = _checked_model(seeds)
    sentences = corpus.sentences
    if options["split_by_whitespace"]:
        sentences = split_sentences(sentences, options)
    trainer = _UnigramTrainer(sentences, options["num_threads"])
    desired = int(options["vocab_size"] * 1.1)
    shrinking_factor = f32(options["shrinking_factor"])
    while True:
        for _ in range(options["num_sub_iterations"]):
            model = _checked_model(trainer.m_step(model, trainer.e_step(model)))
        model = _checked_model(trainer.prune(model, desired, shrinking_factor))
        if len(model.pieces) <= desired:
            break
    model = _checked_model(trainer.prune_unreachable(model))
    return _finalize(model, corpus, options["vocab_size"] - len(metas))


def _finalize(model: PieceModel, corpus: Corpus, slots: int) -> list[tuple[str, float]]:
    scores = dict(model.pieces)
    final: dict[str, float] = {}
    penalty = 0.0
    for char, _ in corpus.required_sorted():
        if char in scores:
            final[char] = scores[char]
        else:
            final[char] = f32(model.min_score + penalty)
            penalty = f32(penalty + f32(0.0001))
    if slots <= 0:
        return []
    for piece, score in sorted(model.pieces, key=lambda item: (-item[1], item[0])):
        if piece in final:
            continue
        if len(final) == slots:
            break
        final[piece] = score
    return sorted(final.items(), key=lambda item: (-item[1], item[0]))

