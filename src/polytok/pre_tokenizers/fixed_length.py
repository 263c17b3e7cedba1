"""FixedLength pre-tokenizer: cut every `length` chars.

JSON: ``{"type": "FixedLength", "length": int}`` (`length` defaults to 5).

Reproduces HF tokenizers 0.23.3 ``tokenizers/src/pre_tokenizers/fixed_length.rs``
(``FixedLength::pre_tokenize``): consecutive chunks of `length` chars, the last
one shorter. HF loads ``length: 0`` and then panics on any non-empty text;
polytok loads it too and raises `EncodeError` at the same point.
"""

from __future__ import annotations

from typing import Any

from .._config import join, required
from ..errors import EncodeError, FormatError
from ..normalized import NormalizedString
from .base import PreTokenizerBase

Span = tuple[int, int]


class FixedLength(PreTokenizerBase):
    """FixedLength pre-tokenizer: with 2, ``"abcde"`` gives ``ab``, ``cd``, ``e``."""

    def __init__(self, length: int = 5) -> None:
        if length < 0:
            raise ValueError(f"length must not be negative, not {length}")
        self.length = length

    @classmethod
    def from_config(cls, d: dict[str, Any], path: str) -> FixedLength:
        length = required(d, "length", int, path) if "length" in d else 5
        if length < 0:
            raise FormatError(f"expected a non-negative integer, found {length}", key=join(path, "length"))
        return cls(length)

    def _spans(self, n: int) -> list[Span]:
        if n and not self.length:
            raise EncodeError("FixedLength with length 0 cannot split text (HF panics: chunk size must be non-zero)")
        return [(i, min(i + self.length, n)) for i in range(0, n, self.length or 1)]

    def pre_tokenize(self, text: str, at_origin: bool = True) -> list[str]:
        return [text[a:b] for a, b in self._spans(len(text))]

    def pre_tokenize_aligned(self, ns: NormalizedString) -> list[NormalizedString]:
        return ns.slices(self._spans(len(ns.text)))
