"""Strip normalizer: remove leading and/or trailing whitespace.

Stage: normalizer. JSON: ``{"type": "Strip", "strip_left": bool,
"strip_right": bool}`` (both required).

Reproduces HF tokenizers 0.23.3 ``tokenizers/src/normalizers/strip.rs``
(``Strip::normalize`` -> ``NormalizedString::lrstrip``). Whitespace is Rust's
``char::is_whitespace`` (White_Space, so not U+001C..U+001F); the removed
characters vanish from the alignments and the others keep theirs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .._config import as_object, required
from ..normalized import NormalizedString
from ..text.chars import WHITE_SPACE
from .base import NormalizerBase

_WHITE_SPACE = "".join(sorted(WHITE_SPACE))


@dataclass(frozen=True, slots=True)
class Strip(NormalizerBase):
    strip_left: bool = True
    strip_right: bool = True

    @classmethod
    def from_config(cls, d: dict[str, Any], path: str) -> Strip:
        d = as_object(d, path)
        return cls(required(d, "strip_left", bool, path), required(d, "strip_right", bool, path))

    def normalize(self, text: str) -> str:
        if self.strip_left:
            text = text.lstrip(_WHITE_SPACE)
        if self.strip_right:
            text = text.rstrip(_WHITE_SPACE)
        return text

    def normalize_aligned(self, ns: NormalizedString) -> None:
        text = ns.text
        start = len(text) - len(text.lstrip(_WHITE_SPACE)) if self.strip_left else 0
        end = len(text.rstrip(_WHITE_SPACE)) if self.strip_right else len(text)
        if start == 0 and end == len(text):
            return
        end = max(start, end)
        ns.transform([(c, 0) for c in text[start:end]], initial_offset=start)
