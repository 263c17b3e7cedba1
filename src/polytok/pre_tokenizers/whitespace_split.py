"""WhitespaceSplit pre-tokenizer: split on whitespace and drop it.

JSON: ``{"type": "WhitespaceSplit"}``.

Reproduces HF tokenizers 0.23.3 ``tokenizers/src/pre_tokenizers/whitespace.rs``
(``WhitespaceSplit::pre_tokenize``): split at every ``char::is_whitespace``
char (White_Space; unlike ``str.split()``, U+001C..U+001F are not whitespace)
with ``Removed``.
"""

from __future__ import annotations

from typing import Any

from ..text.chars import WHITE_SPACE_CLASS
from .split_behavior import CharSplitter, SplittingPreTokenizer


class WhitespaceSplit(SplittingPreTokenizer):
    """WhitespaceSplit pre-tokenizer: ``"a\\tb  c"`` gives ``a``, ``b``, ``c``."""

    def __init__(self) -> None:
        self._splitter = CharSplitter(WHITE_SPACE_CLASS, "removed")

    @classmethod
    def from_config(cls, d: dict[str, Any], path: str) -> WhitespaceSplit:
        return cls()
