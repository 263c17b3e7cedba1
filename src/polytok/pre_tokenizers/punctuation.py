"""Punctuation pre-tokenizer: split at every punctuation char.

JSON: ``{"type": "Punctuation", "behavior": "Isolated" | …}`` (`behavior`
defaults to ``Isolated``; an explicit null is an error, as in HF).

Reproduces HF tokenizers 0.23.3 ``tokenizers/src/pre_tokenizers/punctuation.rs``
(``is_punc``, ``Punctuation::pre_tokenize``): a char is punctuation when it is
ASCII punctuation (all 32 ASCII symbols, ``$ + < = > ^ ` | ~`` included) or in
P* of the ~Unicode 8 ``unicode_categories`` crate (`polytok.text.chars.is_punctuation`);
each one is a match of its own for the behaviour.
"""

from __future__ import annotations

from typing import Any

from ..text.chars import regex_set
from .split_behavior import Behavior, CharSplitter, SplittingPreTokenizer, behavior_from_config


class Punctuation(SplittingPreTokenizer):
    """Punctuation pre-tokenizer: ``"Hey, you!?"`` gives ``Hey``, ``,``, `` you``, ``!``, ``?``."""

    def __init__(self, behavior: Behavior = "isolated") -> None:
        self.behavior = behavior
        self._splitter = CharSplitter(regex_set("PUNCTUATION"), behavior)

    @classmethod
    def from_config(cls, d: dict[str, Any], path: str) -> Punctuation:
        return cls(behavior_from_config(d, "behavior", path, default="isolated"))
