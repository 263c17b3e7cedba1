"""BertPreTokenizer: split on whitespace, then isolate every punctuation char.

JSON: ``{"type": "BertPreTokenizer"}``.

Reproduces HF tokenizers 0.23.3 ``tokenizers/src/pre_tokenizers/bert.rs``
(``BertPreTokenizer::pre_tokenize``): a ``Removed`` split at
``char::is_whitespace``, then an ``Isolated`` split at ``is_bert_punc`` (ASCII
punctuation or ~Unicode 8 P*, `polytok.text.chars.is_punctuation`; no whitespace
char is punctuation). The two passes are one regex here: a punctuation char
alone, or a run of chars that are neither, which gives the same pieces and,
since slices of slices keep their alignment, the same offsets.
"""

from __future__ import annotations

from typing import Any

from ..text.chars import WHITE_SPACE_CLASS, regex_set
from .split_behavior import CharSplitter, SplittingPreTokenizer


class BertPreTokenizer(SplittingPreTokenizer):
    """BertPreTokenizer: ``"Hey friend!  a$b€c"`` gives ``Hey``, ``friend``, ``!``, ``a``, ``$``, ``b€c``."""

    def __init__(self) -> None:
        punctuation = regex_set("PUNCTUATION")
        self._splitter = CharSplitter.from_pieces_regex(f"{punctuation}|[^{punctuation}{WHITE_SPACE_CLASS}]+")

    @classmethod
    def from_config(cls, d: dict[str, Any], path: str) -> BertPreTokenizer:
        return cls()
