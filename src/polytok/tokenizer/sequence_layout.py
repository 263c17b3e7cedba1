"""Type ids and the special-tokens mask of post-processed sequences, from their ids alone.

A post-processor lays its output out the same way whatever the sequences' lengths: its
special tokens and each sequence's tokens in a fixed order, each run with one type id
(HF tokenizers 0.23.3 ``TemplateProcessing``, ``BertProcessing``, ``RobertaProcessing``,
``ByteLevel`` and ``Sequence`` of them, ``tokenizers/src/processors/``). `layout` reads
that order once per call by post-processing one-token marker sequences through the
post-processor's `process` — the path `Tokenizer.encode_full` takes — and `rows` lays
real sequences out the same way, so `Tokenizer.__call__` returns type ids without
building an `Encoding` per text (which cost five times the encoding itself for BERT).
A layout that does not hold each marker exactly once is refused (None), and the caller
then takes `encode_full`: never a different answer. Truncation cuts each sequence as
`Tokenizer.post_process` does (`polytok.truncation`, the first window of
`polytok.encoding.window_ranges`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..encoding import Encoding, merge_with, window_ranges, with_sequence
from ..errors import EncodeError

if TYPE_CHECKING:
    from ..post_processors import PostProcessor
    from ..truncation import Truncation

__all__ = ["layout", "rows", "cut"]

MARK_A, MARK_B = -1, -2  # ids no vocabulary has: where the first and second sequence go

Layout = list[tuple[int, int, int]]  # per output position: (id or mark, type id, special-tokens mask)


def layout(processor: PostProcessor | None, is_pair: bool, add_special: bool) -> Layout | None:
    """The output of `processor` on marker sequences (None where a marker is not there exactly once)."""
    a = Encoding([MARK_A], [""], [(0, 0)], [None], [0], [0], [1])
    b = Encoding([MARK_B], [""], [(0, 0)], [None], [1], [0], [1]) if is_pair else None
    if processor is not None:
        enc = processor.process(a, b, add_special)
    else:
        enc = a if b is None else merge_with(with_sequence(a, 0, 0), with_sequence(b, 1, 1))
    if enc.ids.count(MARK_A) != 1 or enc.ids.count(MARK_B) != (1 if is_pair else 0):
        return None
    return list(zip(enc.ids, enc.type_ids, enc.special_tokens_mask, strict=True))


def rows(plan: Layout, ids_a: list[int], ids_b: list[int] | None) -> tuple[list[int], list[int], list[int]]:
    """The ids, type ids and special-tokens mask of `ids_a` (and `ids_b`) laid out as `plan` says."""
    ids: list[int] = []
    types: list[int] = []
    special: list[int] = []
    for id_, type_id, mask in plan:
        if id_ in (MARK_A, MARK_B):
            part = ids_a if id_ == MARK_A else ids_b or []
            ids.extend(part)
            types.extend([type_id] * len(part))
            special.extend([mask] * len(part))
        else:
            ids.append(id_)
            types.append(type_id)
            special.append(mask)
    return ids, types, special


def cut(ids: list[int], keep: int, truncation: Truncation) -> list[int]:
    """The first window of `keep` ids (`Tokenizer.post_process`'s truncation of one sequence)."""
    if keep >= len(ids):
        return ids
    if keep == 0:
        return []
    if truncation.stride >= keep:
        raise EncodeError(f"truncation stride ({truncation.stride}) must be less than the length left "
                          f"for the sequence ({keep})")
    start, stop = window_ranges(len(ids), keep, truncation.stride, truncation.direction)[0]
    return ids[start:stop]
