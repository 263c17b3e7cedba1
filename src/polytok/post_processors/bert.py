"""BertProcessing post-processor: ``[CLS] A [SEP]`` and ``B [SEP]``.

Stage: post-processor. JSON: ``{"type": "BertProcessing", "sep": [token, id],
"cls": [token, id]}``.

Reproduces HF tokenizers 0.23.3 ``tokenizers/src/processors/bert.rs``
(``BertProcessing::process_encodings``). Without special tokens the encodings
pass through untouched (A keeps type 0, B type 1). With them, the first
encoding becomes ``[CLS] A [SEP]`` (type ids 0), every later one ``B [SEP]``
(its own type ids, the ``[SEP]`` typed 1, sequence id 1). Each direct overflow
is wrapped the same way, keeping its own type ids; overflows of overflows are
dropped. The sequence range excludes the special tokens. ``added_tokens`` is
2 for a single sequence and 3 for a pair.
"""

from __future__ import annotations

from typing import Any

from ..encoding import Encoding
from ._common import token_and_id
from .base import PostProcessorBase

Special = tuple[str, int]


def surround(enc: Encoding, head: Special | None, tail: Special, type_ids: list[int], seq_id: int,
             overflowing: list[Encoding]) -> Encoding:
    """`enc` between the `head` (optional) and `tail` special tokens, as Bert/Roberta build it.

    The sequence part gets special mask 0 and attention 1 whatever it had;
    `type_ids` covers the whole result.
    """
    n = len(enc.ids)
    pre = 0 if head is None else 1
    ids = enc.ids + [tail[1]] if head is None else [head[1]] + enc.ids + [tail[1]]
    tokens = enc.tokens + [tail[0]] if head is None else [head[0]] + enc.tokens + [tail[0]]
    words: list[int | None] = [None] * pre + enc.word_ids + [None]
    offsets = [(0, 0)] * pre + enc.offsets + [(0, 0)]
    special = [1] * pre + [0] * n + [1]
    return Encoding(ids, tokens, offsets, words, type_ids, special, [1] * len(ids), overflowing,
                    {seq_id: (pre, pre + n)})


class BertProcessing(PostProcessorBase):
    def __init__(self, sep: Special = ("[SEP]", 102), cls: Special = ("[CLS]", 101)) -> None:
        self.sep = sep
        self.cls = cls

    @classmethod
    def from_config(cls, d: dict[str, Any], path: str) -> BertProcessing:
        return cls(token_and_id(d, "sep", path), token_and_id(d, "cls", path))

    def added_tokens(self, is_pair: bool) -> int:
        return 3 if is_pair else 2

    def process_id_lists(self, sequences: list[list[int]], add_special: bool) -> list[list[int]]:
        if not add_special:
            return sequences
        cls_id, sep_id = self.cls[1], self.sep[1]
        return [[cls_id, *ids, sep_id] if i == 0 else [*ids, sep_id] for i, ids in enumerate(sequences)]

    def process_encodings(self, encodings: list[Encoding], add_special: bool) -> list[Encoding]:
        if not add_special:
            return encodings
        return [self._first(e) if i == 0 else self._later(e) for i, e in enumerate(encodings)]

    def _first(self, enc: Encoding) -> Encoding:
        overflowing = [surround(o, self.cls, self.sep, [0, *o.type_ids, 0], 0, []) for o in enc.overflowing]
        return surround(enc, self.cls, self.sep, [0, *enc.type_ids, 0], 0, overflowing)

    def _later(self, enc: Encoding) -> Encoding:
        overflowing = [surround(o, None, self.sep, [*o.type_ids, 1], 1, []) for o in enc.overflowing]
        return surround(enc, None, self.sep, [*enc.type_ids, 1], 1, overflowing)

    def process_ids(self, a: list[int], b: list[int] | None, add_special: bool) -> list[int]:
        if not add_special:
            return a + b if b is not None else list(a)
        out = [self.cls[1], *a, self.sep[1]]
        if b is not None:
            out += b
            out.append(self.sep[1])
        return out
