"""ByteLevel post-processor: trims the offsets of byte-level tokens, adds nothing.

Stage: post-processor. JSON: ``{"type": "ByteLevel", "add_prefix_space": bool,
"trim_offsets": bool, "use_regex": bool}`` (same struct as the pre-tokenizer and
decoder halves; the first two required, `use_regex` unused here).

Reproduces HF tokenizers 0.23.3 ``tokenizers/src/pre_tokenizers/byte_level.rs``
(``impl PostProcessor for ByteLevel`` and ``process_offsets``, which
RobertaProcessing reuses).

Offset trimming, per token ``i`` with text ``t`` and char offsets ``(s, e)``:
``lead``/``trail`` count the chars at each end of ``t`` that are ``Ġ`` (the
byte-level space) or White_Space. A leading run moves ``s`` right by ``lead``
(capped at ``e``), except when the token is first (``i == 0`` or ``s == 0``),
`add_prefix_space` is set and ``lead == 1``: that one space is taken to be the
added prefix, which has no width in the text. A trailing run moves ``e`` left
by ``trail`` (floored at the new ``s``) when ``e >= trail``.
Bug-compatible consequences: after a leading added token the prefixed word
loses its first char (``ĠHello`` at (17, 22) becomes (18, 22)); ``Ċ``/``ĉ``
are not trimmed (they are neither ``Ġ`` nor whitespace).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from ..encoding import Encoding
from ..text.byte_alphabet import byte_level_flags
from ..text.chars import WHITE_SPACE
from ._common import mark_sequence
from .base import PostProcessorBase

_SPACES = WHITE_SPACE | {"\u0120"}  # Ġ is BYTES_TO_CHARS[0x20]


def _trimmed(i: int, token: str, start: int, end: int, add_prefix_space: bool) -> tuple[int, int]:
    n = len(token)
    lead = 0
    while lead < n and token[lead] in _SPACES:
        lead += 1
    trail = 0
    while trail < n and token[n - 1 - trail] in _SPACES:
        trail += 1
    if lead:
        if (i == 0 or start == 0) and add_prefix_space and lead == 1:
            lead = 0
        start = min(start + lead, end)
    if trail and end >= trail:
        end = max(end - trail, start)
    return start, end


def trim_offsets(enc: Encoding, add_prefix_space: bool) -> Encoding:
    """HF ``process_offsets`` on `enc` alone (not its overflows)."""
    offsets = enc.offsets
    changed: list[tuple[int, int]] | None = None
    for i, token in enumerate(enc.tokens):
        if token and (token[0] in _SPACES or token[-1] in _SPACES):
            span = _trimmed(i, token, *offsets[i], add_prefix_space)
            if span != offsets[i]:
                if changed is None:
                    changed = list(offsets)
                changed[i] = span
    return enc if changed is None else replace(enc, offsets=changed)


def trim_with_overflows(enc: Encoding, add_prefix_space: bool) -> Encoding:
    """`enc` and each of its direct overflows trimmed, as both HF callers do."""
    overflowing = [trim_offsets(o, add_prefix_space) for o in enc.overflowing]
    return replace(trim_offsets(enc, add_prefix_space), overflowing=overflowing)


class ByteLevel(PostProcessorBase):
    def __init__(self, add_prefix_space: bool = True, trim_offsets: bool = True, use_regex: bool = True) -> None:
        self.add_prefix_space = add_prefix_space
        self.trim_offsets = trim_offsets
        self.use_regex = use_regex

    @classmethod
    def from_config(cls, d: dict[str, Any], path: str) -> ByteLevel:
        return cls(*byte_level_flags(d, path))

    def added_tokens(self, is_pair: bool) -> int:
        return 0

    def process_id_lists(self, sequences: list[list[int]], add_special: bool) -> list[list[int]]:
        return sequences

    def process_encodings(self, encodings: list[Encoding], add_special: bool) -> list[Encoding]:
        if self.trim_offsets:
            encodings = [trim_with_overflows(e, self.add_prefix_space) for e in encodings]
        return [mark_sequence(e, i) for i, e in enumerate(encodings)]
