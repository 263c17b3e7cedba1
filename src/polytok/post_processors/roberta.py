"""RobertaProcessing post-processor: ``<s> A </s></s> B </s>``, all type ids 0.

Stage: post-processor. JSON: ``{"type": "RobertaProcessing", "sep": [token, id],
"cls": [token, id], "trim_offsets": bool, "add_prefix_space": bool}`` (all
required; without the last two HF reads the object as BertProcessing).

Reproduces HF tokenizers 0.23.3 ``tokenizers/src/processors/roberta.rs``
(``RobertaProcessing::process_encodings``), in this order:

1. with `trim_offsets`, ByteLevel offset trimming (``byte_level.trim_offsets``)
   on each encoding and its direct overflows;
2. every main encoding's type ids become 0, even without special tokens; the
   overflows keep theirs (so without special tokens a truncated B's overflows
   still carry type 1);
3. with special tokens, the first encoding becomes ``<s> A </s>`` and every
   later one ``</s> B </s>`` (sequence id 1), overflows included and rebuilt
   with type ids 0. ``added_tokens`` is 2 for a single sequence and 4 for a pair.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from .._config import required
from ..encoding import Encoding
from ._common import token_and_id
from .base import PostProcessorBase
from .bert import Special, surround
from .byte_level import trim_with_overflows


class RobertaProcessing(PostProcessorBase):
    def __init__(self, sep: Special = ("</s>", 2), cls: Special = ("<s>", 0), trim_offsets: bool = True,
                 add_prefix_space: bool = True) -> None:
        self.sep = sep
        self.cls = cls
        self.trim_offsets = trim_offsets
        self.add_prefix_space = add_prefix_space

    @classmethod
    def from_config(cls, d: dict[str, Any], path: str) -> RobertaProcessing:
        return cls(token_and_id(d, "sep", path), token_and_id(d, "cls", path),
                   required(d, "trim_offsets", bool, path), required(d, "add_prefix_space", bool, path))

    def added_tokens(self, is_pair: bool) -> int:
        return 4 if is_pair else 2

    def process_id_lists(self, sequences: list[list[int]], add_special: bool) -> list[list[int]]:
        if not add_special:
            return sequences
        head, sep_id = self.cls[1], self.sep[1]
        return [[head if i == 0 else sep_id, *ids, sep_id] for i, ids in enumerate(sequences)]

    def process_encodings(self, encodings: list[Encoding], add_special: bool) -> list[Encoding]:
        if self.trim_offsets:
            encodings = [trim_with_overflows(e, self.add_prefix_space) for e in encodings]
        encodings = [replace(e, type_ids=[0] * len(e.ids)) for e in encodings]
        if not add_special:
            return encodings
        return [self._wrap(e, self.cls if i == 0 else self.sep, 0 if i == 0 else 1) for i, e in enumerate(encodings)]

    def _wrap(self, enc: Encoding, head: Special, seq_id: int) -> Encoding:
        overflowing = [surround(o, head, self.sep, [0] * (len(o.ids) + 2), seq_id, []) for o in enc.overflowing]
        return surround(enc, head, self.sep, [0] * (len(enc.ids) + 2), seq_id, overflowing)
