"""Nmt normalizer: the NMT control-character cleanup of SentencePiece's nmt_nfkc rule.

Stage: normalizer. JSON: ``{"type": "Nmt"}``.

Reproduces HF tokenizers 0.23.3 ``tokenizers/src/normalizers/unicode.rs``
(``do_nmt``): first delete U+0001..U+0008, U+000B, U+000E..U+001F, U+007F,
U+008F and U+009F, then map U+0009, U+000A, U+000C, U+000D, U+1680,
U+200B..U+200F, U+2028, U+2029, U+2581, U+FEFF and U+FFFD to a space (each
keeps its own offsets).
"""

from __future__ import annotations

import re
from typing import Any

from .._config import as_object
from ..normalized import NormalizedString
from .base import NormalizerBase

_DELETE = "\x01-\x08\x0b\x0e-\x1f\x7f\x8f\x9f"
_SPACE = "\t\n\x0c\r\u1680\u200b-\u200f\u2028\u2029\u2581\ufeff\ufffd"
_ANY = re.compile(f"[{_DELETE}{_SPACE}]")
_DELETE_RE = re.compile(f"[{_DELETE}]")
_SPACE_RE = re.compile(f"[{_SPACE}]")


class Nmt(NormalizerBase):
    @classmethod
    def from_config(cls, d: dict[str, Any], path: str) -> Nmt:
        as_object(d, path)
        return cls()

    def __repr__(self) -> str:
        return "Nmt()"

    def normalize(self, text: str) -> str:
        if _ANY.search(text) is None:
            return text
        return _SPACE_RE.sub(" ", _DELETE_RE.sub("", text))

    def normalize_aligned(self, ns: NormalizedString) -> None:
        deleted, spaced = _DELETE_RE.match, _SPACE_RE.match
        ns.filter_chars(lambda c: deleted(c) is None)
        ns.map_chars(fn=lambda c: " " if spaced(c) else c)
