"""Fuse decoder: all tokens into one string.

Stage: decoder. JSON: ``{"type": "Fuse"}``.

Reproduces HF tokenizers 0.23.3 ``tokenizers/src/decoders/fuse.rs``
(``Fuse::decode_chain``). An empty list becomes ``[""]``, which matters to a
decoder after it (e.g. ``Strip``).
"""

from __future__ import annotations

from typing import Any


class Fuse:
    @classmethod
    def from_config(cls, d: dict[str, Any], path: str) -> Fuse:
        return cls()

    def decode_chain(self, tokens: list[str]) -> list[str]:
        return ["".join(tokens)]
