"""The shared body of the four Unicode normalization forms (NFC, NFD, NFKC, NFKD).

Each form's module names its class and cites its reference; the algorithm and
HF's frozen Unicode data are in `polytok.text.unicode_norm`.
"""

from __future__ import annotations

from typing import Any, ClassVar

from .._config import as_object
from ..normalized import NormalizedString
from ..text import unicode_norm
from .base import NormalizerBase


class UnicodeForm(NormalizerBase):
    form: ClassVar[unicode_norm.Form]

    @classmethod
    def from_config(cls, d: dict[str, Any], path: str) -> UnicodeForm:
        as_object(d, path)
        return cls()

    def __repr__(self) -> str:
        return f"{self.form}()"

    def normalize(self, text: str) -> str:
        return unicode_norm.normalize(self.form, text)

    def normalize_aligned(self, ns: NormalizedString) -> None:
        ns.transform(unicode_norm.normalize_changes(self.form, ns.text))
