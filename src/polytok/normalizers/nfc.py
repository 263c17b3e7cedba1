"""NFC normalizer: Unicode normalization form NFC (canonical decomposition followed by canonical composition).

Stage: normalizer. JSON: ``{"type": "NFC"}`` (no options; other keys are ignored).

Reproduces HF tokenizers 0.23.3 ``tokenizers/src/normalizers/unicode.rs``
(``NFC::normalize`` -> ``NormalizedString::nfc`` in ``tokenizer/normalizer.rs``),
including HF's older Unicode data (code points newer than it are left alone);
the algorithm and the frozen data live in `polytok.unicode_norm`.
A composed character keeps the offsets of the first source character only
(``e`` + U+0301 -> ``é`` maps to the ``e``).
"""

from __future__ import annotations

from typing import Any

from .. import unicode_norm
from .._config import as_object
from ..normalized import NormalizedString


class NFC:
    @classmethod
    def from_config(cls, d: dict[str, Any], path: str) -> "NFC":
        as_object(d, path)
        return cls()

    def __repr__(self) -> str:
        return "NFC()"

    def normalize(self, text: str) -> str:
        return unicode_norm.normalize("NFC", text)

    def normalize_aligned(self, ns: NormalizedString) -> None:
        ns.transform(unicode_norm.normalize_changes("NFC", ns.text))
