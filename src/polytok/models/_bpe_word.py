"""The merge loops of the BPE model: HF tokenizers 0.23.3, tokenizers/src/models/bpe/word.rs (``Word::merge_all``).

Both loops take the initial symbols of one word as ids, and ``rank_of``, the
``get`` of the ``{(left_id, right_id): rank}`` dict; ``results[rank]`` is the id
that merge makes.

`merge_heap` is HF's algorithm as written: a heap of candidate pairs ordered by
(rank, position of the left symbol); a popped entry is dropped if its left
symbol is gone, has no right neighbour, or the pair there no longer merges into
the *same id* it was queued with (a different pair merging into that id passes,
at the old entry's rank). With ``dropout`` p each popped entry is skipped with
probability p and queued again after the next pop that is not skipped.

`merge_scan` is the fast path for short words: ``min`` over the list of pair
ranks, ``list.index`` for the leftmost, then two lookups to refresh the two
neighbours. It equals `merge_heap` whenever a stale heap entry can never pass
the same-id check. That holds when no two vocabulary entries share an id and
every merge's right part is longer (in bytes) than the continuing-subword
prefix: then every merge makes the symbol at a position strictly longer, so a
pair formed later at that position never spells the merged string (hence the
id) of an earlier one. The model checks both conditions at load and otherwise
uses the heap for every word.

Performance notes (CPython 3.11, GPT-2 merges, unique words of English text;
numbers in bench/README.md, 'Measurements behind design choices'):

* ``(left_id, right_id)`` tuple keys: packing both ids into one int
  (``a << 32 | b``) builds the dict faster but looks up slower (a
  two-digit int), and lookups dominate.
* Seeding the scan's rank list with ``map(rank_of, zip(ids, ids[1:]),
  repeat(no_rank))`` is faster than a comprehension.
* The scan beats the heap up to about 48 symbols (measured on CJK runs of
  Qwen3's byte-level vocabulary); above that its quadratic cost shows.
* Memory of long words (a run of letters or CJK without spaces reaches the loop
  whole): HF's heap of ``(rank, position, id)`` tuples and lists of links cost
  ~200 bytes per symbol (1 MB of one letter through GPT-2: +200 MB peak).
  `merge_heap` packs an entry into one int and its links into arrays (~70 bytes
  per symbol) and is the fastest loop above the scan: 1.3 us per symbol on random
  letters against 1.3-2.4 for the tuple heap. `merge_tree`, for words over 4096
  symbols where `merge_scan` is exact (every fixture), keeps one rank per pair in
  a `MinTree`: ~25 bytes per symbol, at 3.0-4.8 us per symbol (one letter, random
  letters; 100k symbols, CPython 3.11).

`BLOCKED` and `write_blocked` serve the model's ``unknown_chars="block"``
(llama.cpp's rule, see `polytok.models.bpe`): a character with no token enters
the loops as the id `BLOCKED`, which no pair of the rank dict holds, so both
loops leave it alone and never merge across it; `write_blocked` then puts
what llama.cpp writes for it in its place.
"""

from __future__ import annotations

import random
from array import array
from collections.abc import Sequence
from heapq import heapify, heappop, heappush
from itertools import compress, islice, repeat
from typing import Any

from ..errors import not_utf8
from ._min_tree import MinTree

BLOCKED = -1  # a character with no token, kept as a symbol no merge takes in (unknown_chars="block")


def merge_scan(ids: list[int], rank_of: Any, results: list[int], no_rank: int) -> list[int]:
    """Merge the lowest-rank pair, leftmost first, until none is left (see the module notes)."""
    ranks = list(map(rank_of, zip(ids, ids[1:]), repeat(no_rank)))
    while True:
        best = min(ranks)
        if best == no_rank:
            return ids
        i = ranks.index(best)
        ids[i] = results[best]
        del ids[i + 1]
        del ranks[i]
        if i:
            ranks[i - 1] = rank_of((ids[i - 1], ids[i]), no_rank)
        if i < len(ranks):
            ranks[i] = rank_of((ids[i], ids[i + 1]), no_rank)
        elif not ranks:
            return ids


def merge_heap(symbols: list[int], lengths: Sequence[int], rank_of: Any, results: Sequence[int],
               dropout: float | None) -> tuple[list[int], list[int]]:
    """HF ``Word::merge_all``: a heap of (rank, left position), stale entries skipped.

    `lengths` are the symbols' byte lengths; 0 marks a symbol merged away. An entry is
    one int, ``rank << shift | left`` (HF's tuple also holds the merged id, which is
    ``results[rank]``), and the links live in arrays: a few dozen bytes per symbol.
    `symbols` is merged in place.
    """
    count = len(symbols)
    if not count:
        return [], []
    sizes = array("q", lengths)
    before = array("i", range(-1, count - 1))
    after = array("i", range(1, count + 1))
    after[count - 1] = -1
    shift = count.bit_length()
    mask = (1 << shift) - 1
    heap = [rank << shift | i for i, rank in enumerate(map(rank_of, zip(symbols, islice(symbols, 1, None))))
            if rank is not None]
    heapify(heap)
    skipped: list[int] = []
    while heap:
        top = heappop(heap)
        if dropout and random.random() < dropout:
            skipped.append(top)
            continue
        for entry in skipped:
            heappush(heap, entry)
        skipped.clear()
        left = top & mask
        merged = results[top >> shift]
        right = after[left]
        if not sizes[left] or right < 0:
            continue
        current = rank_of((symbols[left], symbols[right]))
        if current is None or results[current] != merged:
            continue
        symbols[left] = merged
        sizes[left] += sizes[right]
        sizes[right] = 0
        follow = after[left] = after[right]
        if follow >= 0:
            before[follow] = left
            rank = rank_of((merged, symbols[follow]))
            if rank is not None:
                heappush(heap, rank << shift | left)
        previous = before[left]
        if previous >= 0:
            rank = rank_of((symbols[previous], merged))
            if rank is not None:
                heappush(heap, rank << shift | previous)
    return list(compress(symbols, sizes)), [size for size in sizes if size]


def merge_tree(symbols: list[int], rank_of: Any, results: Sequence[int], no_rank: int) -> list[int]:
    """`merge_scan`'s rule for long words, in memory linear in the word and time n log n.

    Each live pair's current rank (`no_rank` for none) sits in a `MinTree` at its left
    position, so the lowest rank, leftmost among equals, is found without a heap of
    entries; a merge rewrites at most three positions (the pair merged away and the new
    pairs on either side). About 25 bytes per symbol in all, against ~200 for a heap of
    tuples. Exact under the same conditions as `merge_scan` (see the module notes).
    `symbols` is merged in place; it stays a list so that the ids given back are the
    vocabulary's own int objects (an array's would be new ones, 28 more bytes per token).
    """
    count = len(symbols)
    tree = MinTree(array("i", map(rank_of, zip(symbols, islice(symbols, 1, None)), repeat(no_rank))), no_rank)
    before = array("i", range(-1, count - 1))
    after = array("i", range(1, count + 1))
    after[count - 1] = -1
    alive = bytearray(b"\1") * count
    while True:
        best, left = tree.lowest()
        if left < 0:
            return list(compress(symbols, alive))
        right = after[left]
        merged = symbols[left] = results[best]
        alive[right] = 0
        follow = after[left] = after[right]
        if follow >= 0:  # (the last symbol has no pair, hence no position in the tree)
            before[follow] = left
            tree.put(right, no_rank)
            tree.put(left, rank_of((merged, symbols[follow]), no_rank))
        else:
            tree.put(left, no_rank)
        previous = before[left]
        if previous >= 0:
            tree.put(previous, rank_of((symbols[previous], merged), no_rank))


def write_blocked(ids: list[int], word: str, vocab: dict[str, int],
                  byte_ids: list[int | None] | None) -> list[int]:
    """`ids` with each `BLOCKED` symbol, in order, replaced as llama.cpp writes the next unknown character of `word`.

    llama-vocab.cpp ``llm_tokenizer_bpe_session::tokenize`` (the loop that writes the ids) looks a
    symbol with no token up byte by byte: the ``<0xHH>`` token of each UTF-8 byte that has one when
    the vocabulary is not byte-encoded (`byte_ids`), else the one-byte text, which no entry of a
    byte-level vocabulary spells (an ASCII byte is the missing character itself; a lone byte of a
    longer character is not UTF-8, and GGUF strings are). Bytes without a token write nothing.
    """
    if BLOCKED not in ids:
        return ids
    if byte_ids is None:
        return [i for i in ids if i != BLOCKED]
    get = vocab.get
    unknown = iter([ch for ch in word if get(ch) is None])
    written: list[int] = []
    for i in ids:
        if i != BLOCKED:
            written.append(i)
        else:
            written += spell_bytes(next(unknown), byte_ids)
    return written


def write_blocked_spans(spans: list[tuple[int, int, int]], word: str,
                        byte_ids: list[int | None] | None) -> list[tuple[int, int, int]]:
    """`write_blocked` for ``(id, start, end)`` spans over `word`: a byte token spans the character it spells."""
    written = []
    for i, start, end in spans:
        if i != BLOCKED:
            written.append((i, start, end))
        elif byte_ids is not None:
            written += [(b, start, end) for b in spell_bytes(word[start], byte_ids)]
    return written


def spell_bytes(ch: str, byte_ids: list[int | None]) -> list[int]:
    """The ``<0xHH>`` ids of the UTF-8 bytes of `ch` that have one (the others are left out)."""
    try:
        return [i for i in map(byte_ids.__getitem__, ch.encode()) if i is not None]
    except UnicodeEncodeError as exc:
        raise not_utf8(exc) from None
