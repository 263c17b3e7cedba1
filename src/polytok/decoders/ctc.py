"""CTC decoder: collapse repeated CTC outputs, drop padding, restore spaces.

Stage: decoder. JSON: ``{"type": "CTC", "pad_token": str,
"word_delimiter_token": str, "cleanup": bool}`` (all required).

Reproduces HF tokenizers 0.23.3 ``tokenizers/src/decoders/ctc.rs``
(``CTC::decode_chain``): runs of equal consecutive tokens collapse to one
(before padding is removed, so ``a <pad> a`` keeps both ``a``); every
occurrence of `pad_token` is deleted from each token; with `cleanup`, the
WordPiece cleanup runs and then `word_delimiter_token` becomes ``' '`` (without
`cleanup` the delimiter stays); tokens left empty are dropped.
"""

from __future__ import annotations

from itertools import groupby
from typing import Any

from .._config import required
from .wordpiece import cleanup


class CTC:
    def __init__(self, pad_token: str = "<pad>", word_delimiter_token: str = "|", cleanup: bool = True) -> None:
        self.pad_token = pad_token
        self.word_delimiter_token = word_delimiter_token
        self.cleanup = cleanup

    @classmethod
    def from_config(cls, d: dict[str, Any], path: str) -> CTC:
        return cls(
            required(d, "pad_token", str, path),
            required(d, "word_delimiter_token", str, path),
            required(d, "cleanup", bool, path),
        )

    def decode_chain(self, tokens: list[str]) -> list[str]:
        out: list[str] = []
        for token, _ in groupby(tokens):
            text = token.replace(self.pad_token, "")
            if self.cleanup:
                text = cleanup(text).replace(self.word_delimiter_token, " ")
            if text:
                out.append(text)
        return out
