"""Sequence decoder: several decoders chained.

Stage: decoder. JSON: ``{"type": "Sequence", "decoders": [decoder, ...]}``.

Reproduces HF tokenizers 0.23.3 ``tokenizers/src/decoders/sequence.rs``
(``Sequence::decode_chain``): each decoder's output list is the next one's input.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .._config import join, required

if TYPE_CHECKING:
    from . import Decoder


class Sequence:
    def __init__(self, decoders: list[Decoder]) -> None:
        self.decoders = list(decoders)

    @classmethod
    def from_config(cls, d: dict[str, Any], path: str) -> Sequence:
        from . import from_config

        items: list[Any] = required(d, "decoders", list, path)
        key = join(path, "decoders")
        return cls([from_config(item, join(key, i)) for i, item in enumerate(items)])

    def decode_chain(self, tokens: list[str]) -> list[str]:
        for decoder in self.decoders:
            tokens = decoder.decode_chain(tokens)
        return tokens
