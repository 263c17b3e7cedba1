"""Lowercase normalizer: lowercase every character on its own.

Stage: normalizer. JSON: ``{"type": "Lowercase"}``.

Reproduces HF tokenizers 0.23.3 ``tokenizers/src/normalizers/utils.rs``
(``Lowercase::normalize`` -> ``NormalizedString::lowercase``): Rust's
``char::to_lowercase`` per character, so there is no final-sigma rule
(``"ΟΔΟΣ"`` -> ``"οδοσ"``, where Python's ``str.lower`` gives ``"οδος"``).
A multi-character result (``İ`` -> ``i̇``) keeps the source offsets on every
character: the first replaces, the others are inserted after it.
"""

from __future__ import annotations

from typing import Any

from .._config import as_object
from ..normalized import NormalizedString
from ..text import unicode_norm
from .base import NormalizerBase


class Lowercase(NormalizerBase):
    @classmethod
    def from_config(cls, d: dict[str, Any], path: str) -> Lowercase:
        as_object(d, path)
        return cls()

    def __repr__(self) -> str:
        return "Lowercase()"

    def normalize(self, text: str) -> str:
        return unicode_norm.lowercase(text)

    def normalize_aligned(self, ns: NormalizedString) -> None:
        ns.transform(unicode_norm.lowercase_changes(ns.text))
