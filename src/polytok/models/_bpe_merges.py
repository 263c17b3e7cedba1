"""Reading the merges of a BPE model: HF tokenizers 0.23.3, tokenizers/src/models/bpe/serialization.rs
(``BPEVisitor::visit_map``) and model.rs (``convert_merges_to_hashmap``, ``BpeBuilder::build``).

``merges`` is either ``["a b", ...]`` (each split on one space into exactly two
parts; entries starting with ``#version`` are skipped and take no rank) or
``[["a", "b"], ...]``. Every left part, right part and merged token
(``a + b`` without the first ``len(prefix)`` *bytes* of ``b``, unchecked) must
be a vocabulary entry.

Loading is memory-bound (each lookup of a fresh string in a large dict misses
the cache). Everything runs in C-level ``map``/``zip`` calls; a Python loop
runs only to name an error. Rejected: ``str.split`` per legacy line (one small
list per merge: the collector's passes over the half-parsed file made Llama-3's
load measurably slower than one split of the joined lines). Numbers:
bench/README.md, 'Measurements behind design choices'. The usual lists (every entry
well formed, every token known) are read in one pass in C (``polytok._kernels.wire``:
``json_merge_ids``, which finds each part where it lies in the entry, without a str per part;
``json_merges`` and ``merge_ids`` do it in two steps), which answers None for anything else; the
Python here then reads the list again, and names the entry at fault.
"""

from __future__ import annotations

import struct
from itertools import repeat
from operator import add, itemgetter
from typing import Any

from .. import kernels
from .._config import join
from ..errors import FormatError

_first, _second = itemgetter(0), itemgetter(1)


class UnknownMergeToken(FormatError):
    """A merge naming a token that is not in the vocabulary; `rank` is the merge's index."""

    def __init__(self, message: str, rank: int) -> None:
        super().__init__(message, key=f"merges[{rank}]")
        self.rank = rank


def merge_ids(vocab: dict[str, int], lefts: list[str], rights: list[str],
              prefix: str) -> tuple[list[int], list[int], list[int], bool]:
    """Ids of each merge's left part, right part and result, and whether every merge grows its left part."""
    wire = kernels.kernel("wire")
    if wire is not None and type(lefts) is list and type(rights) is list and type(vocab) is dict:
        found = wire.merge_ids(vocab, lefts, rights, prefix)
        if found is not None:
            return found  # type: ignore[no-any-return]
    get = vocab.get
    left_ids = list(map(get, lefts))
    right_ids = list(map(get, rights))
    cut = len(prefix.encode())
    if cut:
        merged = [_join_cut(a, b, prefix, cut) for a, b in zip(lefts, rights)]
    else:
        merged = list(map(add, lefts, rights))
    merged_ids = list(map(get, merged))  # type: ignore[arg-type]
    if None in left_ids or None in right_ids or None in merged_ids:
        _raise_unknown(left_ids, right_ids, merged_ids, lefts, rights, prefix)
    if cut:
        growing = all(len(b.encode()) > cut for b in rights if len(b) <= cut)
    else:
        growing = "" not in rights
    return left_ids, right_ids, merged_ids, growing  # type: ignore[return-value]


def json_merge_ids(vocab: dict[str, int], raw: Any,
                   prefix: Any) -> tuple[list[int], list[int], list[int], bool] | None:
    """``merge_ids(vocab, *read_merges(raw, ...)[:2], prefix)`` for a usual tokenizer.json list (every
    entry well formed and known, no ``#version`` line, `prefix` a str or None), read in one compiled
    pass; None for anything else, and without the kernel: `read_merges` and `merge_ids` then run."""
    wire = kernels.kernel("wire")
    if wire is None or type(raw) is not list or type(vocab) is not dict or not (prefix is None or type(prefix) is str):
        return None
    return wire.json_merge_ids(vocab, raw, prefix or "")  # type: ignore[no-any-return]


def _join_cut(left: str, right: str, prefix: str, cut: int) -> str | None:
    """``left + right`` without the first `cut` bytes of `right`; None if those bytes are not whole chars."""
    if right.startswith(prefix):
        return left + right[len(prefix):]
    tail = right.encode()
    if len(tail) < cut:
        return None
    try:
        return left + tail[cut:].decode()
    except UnicodeDecodeError:
        return None


def _raise_unknown(left_ids: list[Any], right_ids: list[Any], merged_ids: list[Any],
                   lefts: list[str], rights: list[str], prefix: str) -> None:
    for rank, (a, b, m) in enumerate(zip(left_ids, right_ids, merged_ids)):
        if a is None:
            raise UnknownMergeToken(f"Token `{lefts[rank]}` out of vocabulary", rank)
        if b is None:
            raise UnknownMergeToken(f"Token `{rights[rank]}` out of vocabulary", rank)
        if m is None:
            joined = _join_cut(lefts[rank], rights[rank], prefix, len(prefix.encode()))
            if joined is None:
                raise UnknownMergeToken(f"cannot cut continuing_subword_prefix {prefix!r}'s bytes"
                                        f" from `{rights[rank]}`", rank)
            raise UnknownMergeToken(f"Token `{joined}` out of vocabulary", rank)


def read_merges(raw: list[Any], path: str) -> tuple[list[str], list[str], list[int] | None]:
    """Left and right parts by rank, and each rank's index in `raw` when ``#version`` lines were skipped."""
    wire = kernels.kernel("wire")
    if wire is not None and type(raw) is list:
        found = wire.json_merges(raw)
        if found is not None:
            return found[0], found[1], None
    if raw and type(raw[0]) is str:
        return _read_legacy_merges(raw, path)
    valid = set(map(type, raw)) <= {list} and set(map(len, raw)) <= {2}
    lefts, rights = (list(map(_first, raw)), list(map(_second, raw))) if valid else ([], [])
    if not valid or not set(map(type, lefts)) | set(map(type, rights)) <= {str}:
        index = next(i for i, entry in enumerate(raw)
                     if type(entry) is not list or len(entry) != 2 or not all(type(t) is str for t in entry))
        raise FormatError(f"expected a pair of tokens, found {raw[index]!r:.60}", key=join(path, index))
    return lefts, rights, None


def _read_legacy_merges(raw: list[Any], path: str) -> tuple[list[str], list[str], list[int] | None]:
    if set(map(type, raw)) != {str}:
        index = next(i for i, entry in enumerate(raw) if type(entry) is not str)
        raise FormatError(f"expected a merge string, found {raw[index]!r:.60}", key=join(path, index))
    positions = None
    lines = raw
    if True in map(str.startswith, raw, repeat("#version")):
        positions = [i for i, line in enumerate(raw) if not line.startswith("#version")]
        lines = [raw[i] for i in positions]
    # One space per line, then a single split of the joined lines: no per-merge list is
    # created (half a million small lists cost more in GC passes than the split itself).
    if lines and set(map(str.count, lines, repeat(" "))) != {1}:
        rank = next(i for i, line in enumerate(lines) if line.count(" ") != 1)
        index = positions[rank] if positions else rank
        raise FormatError(f"Merges text file invalid at line {rank + 1}: {lines[rank]!r:.60} is not"
                          " two tokens separated by one space", key=join(path, index))
    parts = " ".join(lines).split(" ")
    return parts[0::2], parts[1::2], positions


def as_f32(value: float, path: str) -> float:
    """`value` rounded to an f32, as serde reads HF's ``dropout: Option<f32>``."""
    try:
        return float(struct.unpack("f", struct.pack("f", value))[0])
    except OverflowError:
        raise FormatError(f"{value!r} is out of range for an f32", key=path) from None


def pair_lists(ranks: dict[tuple[int, int], int]) -> tuple[list[int], list[int]]:
    """The left and right id lists ``BPE`` builds `ranks` from again (line i has rank i).

    subtle: a pair listed twice keeps only its last rank, so some lines have no pair; such
    a line takes the pair of the line after it, whose own later line then overrides it."""
    by_rank: list[tuple[int, int] | None] = [None] * (max(ranks.values(), default=-1) + 1)
    for pair, rank in ranks.items():
        by_rank[rank] = pair
    for rank in range(len(by_rank) - 2, -1, -1):
        if by_rank[rank] is None:
            by_rank[rank] = by_rank[rank + 1]
    return [pair[0] for pair in by_rank if pair], [pair[1] for pair in by_rank if pair]
