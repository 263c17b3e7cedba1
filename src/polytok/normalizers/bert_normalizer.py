"""BertNormalizer: the BERT text cleanup (controls, CJK spacing, accents, case).

Stage: normalizer. JSON: ``{"type": "BertNormalizer", "clean_text": bool,
"handle_chinese_chars": bool, "strip_accents": bool | null, "lowercase": bool}``
(the tag ``"Bert"`` is accepted too; ``strip_accents`` may be missing).

Reproduces HF tokenizers 0.23.3 ``tokenizers/src/normalizers/bert.rs``
(``BertNormalizer::normalize``), steps in this order:

- clean_text: delete U+0000, U+FFFD and every ``is_control`` character
  (general category Cc, Cf, Co or Cs in `unicode_categories`' old Unicode data,
  frozen as ``unicode_tables.BERT_CONTROL``; unassigned code points are kept)
  except tab, LF and CR; then map tab, LF, CR and every White_Space character
  to a space. U+0085 and U+000B are controls, so they are deleted, not spaced.
- handle_chinese_chars: each CJK ideograph in the ranges of ``is_chinese_char``
  becomes space, itself, space (all three mapped to the ideograph).
- strip_accents (``strip_accents`` if not null, else ``lowercase``): HF NFD,
  then delete the non-spacing marks (Mn, old data: ``BERT_NONSPACING``).
- lowercase: per character, as the Lowercase normalizer.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from .._config import as_object, optional, required
from ..normalized import NormalizedString
from ..text import unicode_norm, unicode_tables
from ..text.chars import WHITE_SPACE
from ..text.unicode_norm import compile_class
from .base import NormalizerBase

_CONTROL = compile_class(unicode_tables.BERT_CONTROL)
_SPACE = re.compile("[" + "".join(sorted(WHITE_SPACE - {" "})) + "]")  # tab, LF, CR are White_Space
_CHINESE_RANGES = ((0x4E00, 0x9FFF), (0x3400, 0x4DBF), (0x20000, 0x2A6DF), (0x2A700, 0x2B73F),
                   (0x2B740, 0x2B81F), (0x2B920, 0x2CEAF), (0xF900, 0xFAFF), (0x2F800, 0x2FA1F))
_CHINESE = compile_class(sorted(_CHINESE_RANGES))
_CHINESE_SPLIT = re.compile(f"({_CHINESE.pattern})")  # split(): measured faster than sub(); bench/README.md
_NONSPACING = compile_class(unicode_tables.BERT_NONSPACING)
# characters: split() makes two strings per ideograph (~190 bytes a character); a long text is
# spaced in pieces of this size, so those strings never take more than ~12 MB at once
_CHUNK = 1 << 16


def _space_chinese(text: str) -> str:
    parts = _CHINESE_SPLIT.split(text)
    if len(parts) == 1:
        return text
    parts[1::2] = [f" {c} " for c in parts[1::2]]  # ideographs sit at the odd indices
    return "".join(parts)


@dataclass(frozen=True, slots=True)
class BertNormalizer(NormalizerBase):
    clean_text: bool = True
    handle_chinese_chars: bool = True
    strip_accents: bool | None = None
    lowercase: bool = True

    @classmethod
    def from_config(cls, d: dict[str, Any], path: str) -> BertNormalizer:
        d = as_object(d, path)
        return cls(
            clean_text=required(d, "clean_text", bool, path),
            handle_chinese_chars=required(d, "handle_chinese_chars", bool, path),
            strip_accents=optional(d, "strip_accents", (bool, type(None)), path),
            lowercase=required(d, "lowercase", bool, path),
        )

    @property
    def _strips_accents(self) -> bool:
        return self.lowercase if self.strip_accents is None else self.strip_accents

    def normalize(self, text: str) -> str:
        if self.clean_text and (not text.isascii() or not text.isprintable()):
            text = _SPACE.sub(" ", _CONTROL.sub("", text))
        if self.handle_chinese_chars and not text.isascii():
            if len(text) <= _CHUNK:
                text = _space_chinese(text)
            else:  # an ideograph is one character, so any cut between characters gives the same text
                text = "".join([_space_chinese(text[at:at + _CHUNK]) for at in range(0, len(text), _CHUNK)])
        if self._strips_accents and not text.isascii():
            text = _NONSPACING.sub("", unicode_norm.normalize("NFD", text))
        if self.lowercase:
            text = unicode_norm.lowercase(text)
        return text

    def normalize_aligned(self, ns: NormalizedString) -> None:
        if self.clean_text:
            control, space = _CONTROL.match, _SPACE.match
            ns.filter_chars(lambda c: control(c) is None)
            ns.map_chars(fn=lambda c: " " if space(c) else c)
        if self.handle_chinese_chars:
            changes: list[tuple[str, int]] = []
            for c in ns.text:
                if _CHINESE.match(c):
                    changes.extend(((" ", 0), (c, 1), (" ", 1)))
                else:
                    changes.append((c, 0))
            ns.transform(changes)
        if self._strips_accents:
            ns.transform(unicode_norm.normalize_changes("NFD", ns.text))
            nonspacing = _NONSPACING.match
            ns.filter_chars(lambda c: nonspacing(c) is None)
        if self.lowercase:
            ns.transform(unicode_norm.lowercase_changes(ns.text))
