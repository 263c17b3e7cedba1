"""WordPiece training as HF's ``WordPieceTrainer`` does it
(tokenizers/src/models/wordpiece/trainer.rs): BPE training with the ``##`` prefix on
continuing pieces, of which the WordPiece model keeps the vocabulary only.

`WordLevelTrainer` lives here too, its model being a vocabulary alone
(tokenizers/src/models/wordlevel/trainer.rs): the special tokens, then the words by
falling count (ties in code-point order) that occur at least ``min_frequency`` times,
cut at ``vocab_size``. Both are deterministic in HF, so their results are HF's.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .bpe_trainer import BpeTrainer, train_bpe


@dataclass
class WordPieceTrainer:
    """The options of HF's ``WordPieceTrainer``, with its defaults."""

    vocab_size: int = 30000
    min_frequency: int = 0
    special_tokens: list[str] = field(default_factory=list)
    limit_alphabet: int | None = None
    initial_alphabet: list[str] = field(default_factory=list)
    continuing_subword_prefix: str = "##"
    end_of_word_suffix: str | None = None
    show_progress: bool = False

    def train(self, counts: dict[str, int]) -> dict[str, int]:
        """The vocabulary (piece → id) trained on a word table."""
        bpe = BpeTrainer(vocab_size=self.vocab_size, min_frequency=self.min_frequency,
                         special_tokens=self.special_tokens, limit_alphabet=self.limit_alphabet,
                         initial_alphabet=self.initial_alphabet,
                         continuing_subword_prefix=self.continuing_subword_prefix,
                         end_of_word_suffix=self.end_of_word_suffix)
        return train_bpe(counts, bpe).vocab


@dataclass
class WordLevelTrainer:
    """The options of HF's ``WordLevelTrainer``, with its defaults."""

    vocab_size: int = 30000
    min_frequency: int = 0
    special_tokens: list[str] = field(default_factory=list)
    show_progress: bool = False

    def train(self, counts: dict[str, int]) -> dict[str, int]:
        """The vocabulary (piece → id) of a word table."""
        ordered = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
        pieces = [*self.special_tokens, *(w for w, n in ordered if n >= self.min_frequency)][:self.vocab_size]
        vocab: dict[str, int] = {}
        for i, piece in enumerate(pieces):
            vocab[piece] = i  # a special token that is also a word keeps its later id, as HF's map does
        return vocab
