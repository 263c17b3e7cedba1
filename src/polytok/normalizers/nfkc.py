"""NFKC normalizer: Unicode normalization form NFKC (compatibility decomposition followed by canonical composition).

Stage: normalizer. JSON: ``{"type": "NFKC"}`` (no options; other keys are ignored).

Reproduces HF tokenizers 0.23.3 ``tokenizers/src/normalizers/unicode.rs``
(``NFKC::normalize`` -> ``NormalizedString::nfkc`` in ``tokenizer/normalizer.rs``),
including HF's older Unicode data (code points newer than it are left alone);
the algorithm and the frozen data live in `polytok.unicode_norm`.
Expansions (``ﬁ`` -> ``fi``) map to the whole source character; a composed
character keeps the offsets of the first source character only.
"""

from __future__ import annotations

from typing import Any

from .. import unicode_norm
from .._config import as_object
from ..normalized import NormalizedString


class NFKC:
    @classmethod
    def from_config(cls, d: dict[str, Any], path: str) -> "NFKC":
        as_object(d, path)
        return cls()

    def __repr__(self) -> str:
        return "NFKC()"

    def normalize(self, text: str) -> str:
        return unicode_norm.normalize("NFKC", text)

    def normalize_aligned(self, ns: NormalizedString) -> None:
        ns.transform(unicode_norm.normalize_changes("NFKC", ns.text))
