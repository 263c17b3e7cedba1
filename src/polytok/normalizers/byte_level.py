"""ByteLevel normalizer: spell every UTF-8 byte with the GPT-2 byte alphabet.

Stage: normalizer (the pre-tokenizer and decoder halves live in their own
stages). JSON: ``{"type": "ByteLevel"}``.

Reproduces HF tokenizers 0.23.3 ``tokenizers/src/normalizers/byte_level.rs``
(``ByteLevel::normalize``): each character becomes the alphabet characters of
its UTF-8 bytes (`polytok.text.byte_alphabet`); no prefix space and no splitting.
All the characters produced from one source character map to it.
"""

from __future__ import annotations

from typing import Any

from .._config import as_object
from ..normalized import NormalizedString
from ..text.byte_alphabet import BYTES_TO_CHARS
from .base import NormalizerBase

_TABLE = dict(enumerate(BYTES_TO_CHARS))


class ByteLevel(NormalizerBase):
    @classmethod
    def from_config(cls, d: dict[str, Any], path: str) -> ByteLevel:
        as_object(d, path)
        return cls()

    def __repr__(self) -> str:
        return "ByteLevel()"

    def normalize(self, text: str) -> str:
        # latin-1 turns each byte into the code point of the same value
        return text.encode("utf-8").decode("latin-1").translate(_TABLE)

    def normalize_aligned(self, ns: NormalizedString) -> None:
        changes = []
        for c in ns.text:
            data = c.encode("utf-8")
            changes.append((BYTES_TO_CHARS[data[0]], 0))
            changes.extend((BYTES_TO_CHARS[b], 1) for b in data[1:])
        ns.transform(changes)
