"""NFD normalizer: Unicode normalization form NFD (canonical decomposition).

Stage: normalizer. JSON: ``{"type": "NFD"}`` (no options; other keys are ignored).

Reproduces HF tokenizers 0.23.3 ``tokenizers/src/normalizers/unicode.rs``
(``NFD::normalize`` -> ``NormalizedString::nfd`` in ``tokenizer/normalizer.rs``),
including HF's older Unicode data (code points newer than it are left alone);
the algorithm and the frozen data live in `polytok.unicode_norm`.
Every character of a decomposition maps to the whole source character.
"""

from __future__ import annotations

from typing import Any

from .. import unicode_norm
from .._config import as_object
from ..normalized import NormalizedString


class NFD:
    @classmethod
    def from_config(cls, d: dict[str, Any], path: str) -> "NFD":
        as_object(d, path)
        return cls()

    def __repr__(self) -> str:
        return "NFD()"

    def normalize(self, text: str) -> str:
        return unicode_norm.normalize("NFD", text)

    def normalize_aligned(self, ns: NormalizedString) -> None:
        ns.transform(unicode_norm.normalize_changes("NFD", ns.text))
