"""BPEDecoder: end-of-word suffixes (``</w>``) back to spaces.

Stage: decoder. JSON: ``{"type": "BPEDecoder", "suffix": str}`` (required).

Reproduces HF tokenizers 0.23.3 ``tokenizers/src/decoders/bpe.rs``
(``BPEDecoder::decode_chain``): every occurrence of `suffix` (not only a
trailing one) becomes ``' '``, or ``''`` in the last token.
"""

from __future__ import annotations

from typing import Any

from .._config import required


class BPEDecoder:
    def __init__(self, suffix: str = "</w>") -> None:
        self.suffix = suffix

    @classmethod
    def from_config(cls, d: dict[str, Any], path: str) -> BPEDecoder:
        return cls(required(d, "suffix", str, path))

    def decode_chain(self, tokens: list[str]) -> list[str]:
        suffix = self.suffix
        last = len(tokens) - 1
        return [t.replace(suffix, "" if i == last else " ") for i, t in enumerate(tokens)]
