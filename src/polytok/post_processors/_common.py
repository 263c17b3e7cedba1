"""Pieces shared by the post-processors: HF's ``PostProcessor::process`` wrapper and JSON helpers.

HF tokenizers 0.23.3 ``tokenizers/src/tokenizer/mod.rs`` (``PostProcessor::process``):
each input encoding gets its sequence id and a type id equal to its index
(A = 0, B = 1), then ``process_encodings`` turns the list of encodings into a
new list, which is concatenated without shifting offsets (B's offsets stay
relative to B's text). The fast path mirrors this on plain id lists.

HF sets the type ids of the main encodings only; their overflows keep the
type ids they came with, which the pipeline has already made equal to the
sequence index. `with_sequence` sets both, which gives the same result for any
encoding the pipeline builds (and for one built without type ids).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Protocol

from .._config import join
from ..encoding import Encoding, concat, with_sequence
from ..errors import FormatError

U32_MAX = 2**32 - 1


class ProcessesLists(Protocol):
    def process_encodings(self, encodings: list[Encoding], add_special: bool) -> list[Encoding]: ...

    def process_id_lists(self, sequences: list[list[int]], add_special: bool) -> list[list[int]]: ...


def process_with(processor: ProcessesLists, a: Encoding, b: Encoding | None, add_special: bool) -> Encoding:
    encodings = [with_sequence(a, 0, 0)]
    if b is not None:
        encodings.append(with_sequence(b, 1, 1))
    return concat(processor.process_encodings(encodings, add_special))


def ids_with(processor: ProcessesLists, a: list[int], b: list[int] | None, add_special: bool) -> list[int]:
    sequences = [a] if b is None else [a, b]
    out: list[int] = []
    for part in processor.process_id_lists(sequences, add_special):
        out += part
    return out


def mark_sequence(enc: Encoding, seq_id: int) -> Encoding:
    """HF ``Encoding::set_sequence_id``: add (not replace) the range of `seq_id` covering all of `enc`."""
    return replace(enc, sequence_ranges={**enc.sequence_ranges, seq_id: (0, len(enc.ids))})


def u32(value: Any, key: str) -> int:
    """A JSON integer that fits Rust's ``u32``."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise FormatError(f"expected an integer, found {value!r:.60}", key=key)
    if not 0 <= value <= U32_MAX:
        raise FormatError(f"expected an integer in 0..=4294967295, found {value}", key=key)
    return value


def token_and_id(d: dict[str, Any], key: str, path: str) -> tuple[str, int]:
    """A ``[token, id]`` pair (Rust ``(String, u32)``), as ``sep``/``cls`` are written."""
    where = join(path, key)
    if key not in d:
        raise FormatError(f"missing required key {key!r}", key=path)
    value = d[key]
    if not isinstance(value, list) or len(value) != 2:
        raise FormatError(f"expected a [token, id] pair, found {value!r:.60}", key=where)
    token, token_id = value
    if not isinstance(token, str):
        raise FormatError(f"expected a string, found {token!r:.60}", key=join(where, 0))
    return token, u32(token_id, join(where, 1))
