"""CharDelimiterSplit pre-tokenizer: split on one delimiter char and drop it.

JSON: ``{"type": "CharDelimiterSplit", "delimiter": char}`` (required; the tag
``"Delimiter"`` is not accepted by HF either).

Reproduces HF tokenizers 0.23.3 ``tokenizers/src/pre_tokenizers/delimiter.rs``
(``CharDelimiterSplit::pre_tokenize``): split at every `delimiter` with ``Removed``.
"""

from __future__ import annotations

from typing import Any

from .._config import single_char
from ..text.chars import regex_class
from .split_behavior import CharSplitter, SplittingPreTokenizer


class CharDelimiterSplit(SplittingPreTokenizer):
    """CharDelimiterSplit pre-tokenizer: with ``"-"``, ``"a-b--c"`` gives ``a``, ``b``, ``c``."""

    def __init__(self, delimiter: str) -> None:
        if len(delimiter) != 1:
            raise ValueError(f"delimiter must be a single character, not {delimiter!r}")
        self.delimiter = delimiter
        self._splitter = CharSplitter(regex_class(frozenset(delimiter)), "removed")

    @classmethod
    def from_config(cls, d: dict[str, Any], path: str) -> CharDelimiterSplit:
        return cls(single_char(d, "delimiter", path))
