"""Sequence normalizer: run several normalizers in order.

Stage: normalizer. JSON: ``{"type": "Sequence", "normalizers": [ … ]}``
(required; may be empty).

Reproduces HF tokenizers 0.23.3 ``tokenizers/src/normalizers/utils.rs``
(``Sequence::normalize``): each normalizer runs on the output of the previous
one, on the same piece.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .._config import as_object, join, required
from ..normalized import NormalizedString
from .base import NormalizerBase

if TYPE_CHECKING:
    from . import Normalizer


class Sequence(NormalizerBase):
    def __init__(self, normalizers: list[Normalizer]) -> None:
        self.normalizers = list(normalizers)

    @classmethod
    def from_config(cls, d: dict[str, Any], path: str) -> Sequence:
        from . import from_config  # the package registry, filled after this module loads

        d = as_object(d, path)
        items: list[Any] = required(d, "normalizers", list, path)
        key = join(path, "normalizers")
        return cls([from_config(item, join(key, i)) for i, item in enumerate(items)])

    def __repr__(self) -> str:
        return f"Sequence({self.normalizers!r})"

    def normalize(self, text: str) -> str:
        for normalizer in self.normalizers:
            text = normalizer.normalize(text)
        return text

    def normalize_aligned(self, ns: NormalizedString) -> None:
        for normalizer in self.normalizers:
            normalizer.normalize_aligned(ns)
