"""Whitespace pre-tokenizer: keep runs of word chars and runs of other non-space chars.

JSON: ``{"type": "Whitespace"}``.

Reproduces HF tokenizers 0.23.3 ``tokenizers/src/pre_tokenizers/whitespace.rs``
(``Whitespace::pre_tokenize``): split with ``Invert(\\w+|[^\\w\\s]+)`` and
``Removed``, i.e. keep the matches of that Rust `regex` crate pattern and drop
the whitespace between them. Its Unicode ``\\w`` (Alphabetic, M*, Nd, Pc,
Join_Control) is frozen in `polytok.text.char_classes` (`regex`'s own ``\\w`` follows
a newer Unicode); ``\\s`` is White_Space.

Upstream: ``\\w+|[^\\w\\s]+``; here ``W+|[^WS]+`` with W = ``chars.regex_set("WORD")``
and S = White_Space, the same sets written out for `regex`.
"""

from __future__ import annotations

from typing import Any

import regex

from ..text.chars import WHITE_SPACE_CLASS, regex_set
from .split_behavior import RegexSplitter, SplittingPreTokenizer


class Whitespace(SplittingPreTokenizer):
    """Whitespace pre-tokenizer: ``"Hey man!"`` gives ``Hey``, ``man``, ``!``."""

    def __init__(self) -> None:
        word = regex_set("WORD")
        pattern = regex.compile(f"{word}+|[^{word}{WHITE_SPACE_CLASS}]+", regex.V1)
        self._splitter = RegexSplitter(pattern, "removed", invert=True)

    @classmethod
    def from_config(cls, d: dict[str, Any], path: str) -> Whitespace:
        return cls()
