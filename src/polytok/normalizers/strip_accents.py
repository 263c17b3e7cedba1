"""StripAccents normalizer: delete combining marks.

Stage: normalizer. JSON: ``{"type": "StripAccents"}``.

Reproduces HF tokenizers 0.23.3 ``tokenizers/src/normalizers/strip.rs``
(``StripAccents::normalize``: ``filter`` out ``is_combining_mark`` from
`unicode-normalization-alignments`, i.e. general categories Mn, Mc and Me in
that crate's Unicode data, frozen in ``unicode_tables.COMBINING_MARKS``). It
does not decompose first: a precomposed ``é`` survives, so files pair it with
NFD or NFKD.
"""

from __future__ import annotations

from typing import Any

from .._config import as_object
from ..normalized import NormalizedString
from ..text import unicode_tables
from ..text.unicode_norm import compile_class
from .base import NormalizerBase

_MARK = compile_class(unicode_tables.COMBINING_MARKS)


class StripAccents(NormalizerBase):
    @classmethod
    def from_config(cls, d: dict[str, Any], path: str) -> StripAccents:
        as_object(d, path)
        return cls()

    def __repr__(self) -> str:
        return "StripAccents()"

    def normalize(self, text: str) -> str:
        if text.isascii():
            return text
        return _MARK.sub("", text)

    def normalize_aligned(self, ns: NormalizedString) -> None:
        match = _MARK.match
        ns.filter_chars(lambda c: match(c) is None)
