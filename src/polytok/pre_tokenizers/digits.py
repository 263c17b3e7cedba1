"""Digits pre-tokenizer: separate numeric chars from the rest.

JSON: ``{"type": "Digits", "individual_digits": bool}`` (required).

Reproduces HF tokenizers 0.23.3 ``tokenizers/src/pre_tokenizers/digits.rs``
(``Digits::pre_tokenize``): split at every ``char::is_numeric`` char (general
category N*: ``²``, ``½``, ``١`` are numeric, ``五`` is not; frozen in
`polytok.text.char_classes`), ``Isolated`` with `individual_digits` (every numeric
char alone) and ``Contiguous`` without (runs of numeric and runs of other chars).
"""

from __future__ import annotations

from typing import Any

from .._config import required
from ..text.chars import regex_set
from .split_behavior import CharSplitter, SplittingPreTokenizer


class Digits(SplittingPreTokenizer):
    """Digits pre-tokenizer: ``"a123b"`` gives ``a``, ``123``, ``b`` (``1``, ``2``, ``3`` when individual)."""

    def __init__(self, individual_digits: bool = False) -> None:
        self.individual_digits = individual_digits
        self._splitter = CharSplitter(regex_set("NUMERIC"), "isolated" if individual_digits else "contiguous")

    @classmethod
    def from_config(cls, d: dict[str, Any], path: str) -> Digits:
        return cls(required(d, "individual_digits", bool, path))
