"""Prepend normalizer: put a fixed string in front of every non-empty piece.

Stage: normalizer. JSON: ``{"type": "Prepend", "prepend": str}`` (required).

Reproduces HF tokenizers 0.23.3 ``tokenizers/src/normalizers/prepend.rs``
(``Prepend::normalize`` -> ``NormalizedString::prepend``). It runs once per
piece between added tokens, so it fires again after every added token; an
empty piece is left empty. The prepended characters map to the piece's first
character; with an empty prefix, HF maps that first character to an empty range
at the start of the piece (reproduced).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .._config import as_object, required
from ..normalized import NormalizedString
from .base import NormalizerBase


@dataclass(frozen=True, slots=True)
class Prepend(NormalizerBase):
    prepend: str

    @classmethod
    def from_config(cls, d: dict[str, Any], path: str) -> Prepend:
        d = as_object(d, path)
        return cls(required(d, "prepend", str, path))

    def normalize(self, text: str) -> str:
        return self.prepend + text if text else text

    def normalize_aligned(self, ns: NormalizedString) -> None:
        if not ns.text:
            return
        if self.prepend:
            ns.prepend(self.prepend)
        else:
            # subtle: HF re-inserts the first char after the (empty) prefix, and an
            # insertion at the start of a piece gets an empty range there.
            ns.transform_range(0, 1, [(ns.text[0], 1)])
