"""`ModelBase`: what every model inherits, the `Model` protocol's members a model may
leave to their plain definitions.

A model must write the per-word calls (``tokenize``, ``tokenize_spans``) and the
vocabulary lookups; the rest is defined here from them:

- ``tokenize_all(words)``: the ids of each word, concatenated (`Tokenizer.encode`'s call);
- ``tokenize_each(words)``: the ids of each word, one list per word (the long-text counter's call);
- ``token_value(id, piece, start, end)``: the token string HF shows in ``Encoding.tokens``,
  the id's vocabulary entry; where the id has none (llama.cpp's ``-1`` for an RWKV byte
  that starts no token), the text the token covers;
- ``caches()``: the bounded word caches `polytok.parallel` may fill; none by default;
- ``batch_kernel()``: the compiled model `polytok._kernels.batch` can run without Python
  (SPM's merger, Unigram's lattice), or None.

BPE and WordPiece override the two bulk calls (their word caches are looked up in one
pass), every model but RWKV overrides ``token_value`` with HF's rule for its type, and each
model with a word cache returns it from ``caches()``. The defaults add no per-word work to
``tokenize``: the loop a caller wrote before, once per piece.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

from ..bounded_cache import BoundedCache


class ModelBase(ABC):
    __slots__ = ()

    @abstractmethod
    def tokenize(self, piece: str) -> list[int]: ...

    @abstractmethod
    def tokenize_spans(self, piece: str) -> list[tuple[int, int, int]]: ...

    @abstractmethod
    def token_to_id(self, token: str) -> int | None: ...

    @abstractmethod
    def id_to_token(self, id: int) -> str | None: ...

    @abstractmethod
    def get_vocab(self) -> dict[str, int]: ...

    @abstractmethod
    def vocab_size(self) -> int: ...

    def tokenize_all(self, words: list[str]) -> list[int]:
        """`tokenize` of each word, concatenated."""
        # subtle: extending by each word's list copies it in one go; list(chain(...)) moves the
        # ids one at a time and was measured slower on Unigram and SPM words (bench/README.md)
        out: list[int] = []
        tokenize = self.tokenize
        for word in words:
            out += tokenize(word)
        return out

    def tokenize_each(self, words: list[str]) -> list[list[int]]:
        """The ids of each word (lists the caller must not change: an override may return its cache's)."""
        return list(map(self.tokenize, words))

    def token_value(self, id: int, piece: str, start: int, end: int) -> str:
        """The token string of `id` where it covers ``piece[start:end]``."""
        found = self.id_to_token(id)
        return piece[start:end] if found is None else found

    def caches(self) -> list[BoundedCache[Any]]:
        """The bounded word caches this model fills as it runs."""
        return []

    def batch_kernel(self) -> Any:
        """The compiled form of `tokenize` that `polytok._kernels.batch` chains, or None."""
        return None
