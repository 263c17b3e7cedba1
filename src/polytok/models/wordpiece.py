"""WordPiece model: the ``"WordPiece"`` model of ``tokenizer.json`` (BERT's greedy longest match).

Reproduces HF tokenizers 0.23.3, tokenizers/src/models/wordpiece/: ``mod.rs``
(``Model::tokenize``) and ``serialization.rs`` (``WordPieceVisitor::visit_map``:
``unk_token``, ``continuing_subword_prefix``, ``max_input_chars_per_word`` and
``vocab`` are all required; ``type`` is optional).

* A word of more than ``max_input_chars_per_word`` characters is one unk token.
* Otherwise, from the start of what is left, the longest vocabulary entry wins
  (tried from the whole rest down, one character at a time), written with
  ``continuing_subword_prefix`` unless it starts the word. If nothing matches
  at some point, the *whole word* becomes one unk token.
* An unk token missing from the vocabulary raises `EncodeError` when it is
  needed, as HF does ("WordPiece error: Missing [UNK] token from the vocabulary").

Candidates longer than the longest vocabulary entry are skipped without a
lookup (they cannot match), and words are cached. The compiled kernel
``polytok._kernels.wordpiece`` (when built) runs the same greedy match over a
hash table of the vocabulary's code-point strings, with the same word cache.
"""

from __future__ import annotations

import sys
from array import array
from itertools import chain
from typing import Any

from .. import kernels
from .._config import join, required
from ..bounded_cache import BoundedCache
from ..errors import EncodeError, FormatError
from ._cache import CACHED_WORD_CHARS, WordCache
from ._vocab import VocabLookup, invert, read_vocab


class WordPiece(VocabLookup):
    """Greedy longest-match-first subwords, as HF ``models::wordpiece::WordPiece``.

    Args:
        vocab: ``{token: id}``.
        unk_token: token for words that cannot be spelt (HF builder default ``[UNK]``).
        continuing_subword_prefix: marks a subword that does not start a word (default ``##``).
        max_input_chars_per_word: longer words are unk (default 100).
    """

    def __init__(self, vocab: dict[str, int], unk_token: str = "[UNK]", continuing_subword_prefix: str = "##",
                 max_input_chars_per_word: int = 100) -> None:
        self._vocab = dict(vocab)
        self._vocab_r = invert(self._vocab)
        self._unk_token = unk_token
        self._prefix = continuing_subword_prefix
        self._max_chars = max_input_chars_per_word
        self._longest = max(map(len, self._vocab), default=0)
        self._cache = WordCache()
        self._table = self._compiled_table()

    def _compiled_table(self) -> Any:
        """The kernel's table of the vocabulary, or None on the pure-Python path."""
        module = kernels.kernel("wordpiece")
        if module is None:
            return None
        unk = self._vocab.get(self._unk_token)
        try:
            return module.Table(self._vocab, self._prefix, min(self._max_chars, sys.maxsize),
                                -1 if unk is None else unk)
        except (TypeError, ValueError, OverflowError, MemoryError):
            return None  # a vocabulary the table cannot hold: the pure loop serves it

    def __getstate__(self) -> dict[str, Any]:
        """Pickled without the compiled table (rebuilt on unpickling)."""
        return {**self.__dict__, "_table": None}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._table = self._compiled_table()

    @classmethod
    def from_config(cls, d: dict[str, Any], path: str) -> WordPiece:
        max_chars = required(d, "max_input_chars_per_word", int, path)
        if max_chars < 0:
            raise FormatError(f"expected an unsigned integer, found {max_chars}",
                              key=join(path, "max_input_chars_per_word"))
        return cls(read_vocab(d, path), required(d, "unk_token", str, path),
                   required(d, "continuing_subword_prefix", str, path), max_chars)

    def tokenize(self, piece: str) -> list[int]:
        if self._table is not None:
            found = self._table.tokenize_words([piece], self._cache, WordCache.limit, CACHED_WORD_CHARS, True)
            if found is not None:
                return found  # type: ignore[no-any-return]
        ids = self._cache.get(piece)
        if ids is None:
            ids = self._greedy(piece)[0]
            self._cache.remember(piece, ids)
        return ids[:]

    def tokenize_each(self, pieces: list[str]) -> list[list[int]]:
        """`tokenize` of each piece, the cached ones looked up in bulk (lists not to be changed)."""
        if self._table is not None:
            found = self._table.tokenize_words(pieces, self._cache, WordCache.limit, CACHED_WORD_CHARS, False)
            if found is not None:
                return found  # type: ignore[no-any-return]
        return self._cache.each(pieces, self.tokenize)

    def tokenize_all(self, pieces: list[str]) -> list[int]:
        """`tokenize` of each piece, concatenated."""
        if self._table is not None:
            found = self._table.tokenize_words(pieces, self._cache, WordCache.limit, CACHED_WORD_CHARS, True)
            if found is not None:
                return found  # type: ignore[no-any-return]
        return list(chain.from_iterable(self._cache.each(pieces, self.tokenize)))

    def tokenize_spans(self, piece: str) -> list[tuple[int, int, int]]:
        ids, ends = self._greedy(piece)
        return list(zip(ids, chain((0,), ends), ends))

    def _greedy(self, piece: str) -> tuple[list[int], array[int]]:
        """The ids of the pieces and where each ends (the next starts there): columns, not a tuple
        per token, for a long word with no length limit (llama.cpp's WPM has none)."""
        size = len(piece)
        if size > self._max_chars:
            return [self._unk_id()], array("i", [size])
        get, prefix = self._vocab.get, self._prefix
        ids: list[int] = []
        ends = array("i")
        start = 0
        while start < size:
            room = self._longest - (len(prefix) if start else 0)
            end = min(size, start + room)
            found = None
            while start < end:
                found = get(prefix + piece[start:end] if start else piece[start:end])
                if found is not None:
                    break
                end -= 1
            if found is None:
                return [self._unk_id()], array("i", [size])
            ids.append(found)
            ends.append(end)
            start = end
        return ids, ends

    def token_value(self, id: int, piece: str, start: int, end: int) -> str:
        """HF's token string: the entry that matched (with its prefix), else the unk token."""
        looked_up = self._prefix + piece[start:end] if start else piece[start:end]
        return looked_up if self._vocab.get(looked_up) == id else self._unk_token

    def caches(self) -> list[BoundedCache[Any]]:
        return [self._cache]

    def _unk_id(self) -> int:
        found = self._vocab.get(self._unk_token)
        if found is None:
            raise EncodeError("WordPiece error: Missing [UNK] token from the vocabulary"
                              f" (unk_token {self._unk_token!r})")
        return found
