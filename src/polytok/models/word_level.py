"""WordLevel model: the ``"WordLevel"`` model of ``tokenizer.json`` (one id per whole word).

Reproduces HF tokenizers 0.23.3, tokenizers/src/models/wordlevel/: ``mod.rs``
(``Model::tokenize``) and ``serialization.rs`` (``WordLevelVisitor::visit_map``:
``vocab`` and ``unk_token`` required, ``type`` optional). A word that is not a
vocabulary entry is the unk token; an unk token missing from the vocabulary
raises `EncodeError` when needed ("WordLevel error: Missing [UNK] token from
the vocabulary").
"""

from __future__ import annotations

from typing import Any

from .._config import required
from ..errors import EncodeError
from ._vocab import VocabLookup, invert, read_vocab


class WordLevel(VocabLookup):
    """Whole-word lookup, as HF ``models::wordlevel::WordLevel``.

    Args:
        vocab: ``{token: id}``.
        unk_token: token for words missing from `vocab` (HF builder default ``<unk>``).
    """

    def __init__(self, vocab: dict[str, int], unk_token: str = "<unk>") -> None:
        self._vocab = dict(vocab)
        self._vocab_r = invert(self._vocab)
        self._unk_token = unk_token

    @classmethod
    def from_config(cls, d: dict[str, Any], path: str) -> WordLevel:
        return cls(read_vocab(d, path), required(d, "unk_token", str, path))

    def tokenize(self, piece: str) -> list[int]:
        found = self._vocab.get(piece)
        return [self._unk_id() if found is None else found]

    def tokenize_spans(self, piece: str) -> list[tuple[int, int, int]]:
        return [(self.tokenize(piece)[0], 0, len(piece))]

    def token_value(self, id: int, piece: str, start: int, end: int) -> str:
        """HF's token string: the word, or the unk token."""
        return piece if self._vocab.get(piece) == id else self._unk_token

    def _unk_id(self) -> int:
        found = self._vocab.get(self._unk_token)
        if found is None:
            raise EncodeError("WordLevel error: Missing [UNK] token from the vocabulary"
                              f" (unk_token {self._unk_token!r})")
        return found
