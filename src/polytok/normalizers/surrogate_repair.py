"""SurrogateRepair normalizer: tiktoken's fix-up of text that is not valid UTF-8.

Stage: normalizer (no ``tokenizer.json`` type; the tiktoken and tekken readers use it).

Reproduces tiktoken 0.14.0 ``tiktoken/core.py`` (``Encoding.encode`` /
``encode_ordinary``, the ``except UnicodeEncodeError`` branch): the text goes
through UTF-16 with ``surrogatepass`` and back with ``replace``, so a high
surrogate followed by a low one becomes the character they spell and every
other surrogate becomes U+FFFD. tiktoken does it to the whole text before its
special-token search; polytok does it to each piece between special tokens,
which is the same (a special token's text holds no surrogate, and a pair cannot
straddle one).
"""

from __future__ import annotations

from typing import Any

import regex

from ..normalized import NormalizedString
from .base import NormalizerBase

_SURROGATE = regex.compile("[\ud800-\udfff]")
_PAIR_OR_ONE = regex.compile("[\ud800-\udbff][\udc00-\udfff]|[\ud800-\udfff]")


def _repair(text: str) -> str:
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


class SurrogateRepair(NormalizerBase):
    def __repr__(self) -> str:
        return "SurrogateRepair()"

    def batch_kernel(self) -> tuple[Any, str, bool, bool, bool] | None:
        return None, "", False, False, False  # no change to a text without surrogates (the only ones the batch takes)

    def normalize(self, text: str) -> str:
        if text.isascii() or _SURROGATE.search(text) is None:
            return text
        return _repair(text)

    def normalize_aligned(self, ns: NormalizedString) -> None:
        text = ns.text
        if text.isascii() or _SURROGATE.search(text) is None:
            return
        changes: list[tuple[str, int]] = []
        at = 0
        for m in _PAIR_OR_ONE.finditer(text):
            changes.extend((c, 0) for c in text[at:m.start()])
            # a pair becomes one char: it replaces the high half and deletes the low one
            changes.append((_repair(m.group()), 1 - len(m.group())))
            at = m.end()
        changes.extend((c, 0) for c in text[at:])
        ns.transform(changes)
