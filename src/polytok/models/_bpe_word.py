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

Performance notes (CPython 3.11, GPT-2 merges, unique words of English text):

* ``(left_id, right_id)`` tuple keys: packing both ids into one int
  (``a << 32 | b``) builds the dict 2.5x faster but looks up 1.6x slower (a
  two-digit int), and lookups dominate.
* Seeding the scan's rank list with ``map(rank_of, zip(ids, ids[1:]),
  repeat(no_rank))`` is 1.5x faster than a comprehension.
* The scan beats the heap up to about 48 symbols (measured on CJK runs of
  Qwen3's byte-level vocabulary); above that its quadratic cost shows.

`BLOCKED` and `write_blocked` serve the model's ``unknown_chars="block"``
(llama.cpp's rule, see `polytok.models.bpe`): a character with no token enters
the loops as the id `BLOCKED`, which no pair of the rank dict holds, so both
loops leave it alone and never merge across it; `write_blocked` then puts
what llama.cpp writes for it in its place.
"""

from __future__ import annotations

import random
from heapq import heapify, heappop, heappush
from itertools import repeat
from typing import Any

from ..errors import not_utf8

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


def merge_heap(ids: list[int], lengths: list[int], rank_of: Any, results: list[int],
               dropout: float | None) -> tuple[list[int], list[int]]:
    """HF ``Word::merge_all``: a heap of (rank, left position, merged id), stale entries skipped.

    `lengths` are the symbols' byte lengths; 0 marks a symbol merged away.
    """
    count = len(ids)
    lengths = lengths[:]
    before = list(range(-1, count - 1))
    after = list(range(1, count + 1))
    after[-1:] = [-1]
    heap = [(rank, i, results[rank]) for i, rank in enumerate(map(rank_of, zip(ids, ids[1:])))
            if rank is not None]
    heapify(heap)
    skipped: list[tuple[int, int, int]] = []
    while heap:
        top = heappop(heap)
        if dropout and random.random() < dropout:
            skipped.append(top)
            continue
        for entry in skipped:
            heappush(heap, entry)
        skipped.clear()
        _, left, merged = top
        right = after[left]
        if not lengths[left] or right < 0:
            continue
        current = rank_of((ids[left], ids[right]))
        if current is None or results[current] != merged:
            continue
        ids[left] = merged
        lengths[left] += lengths[right]
        lengths[right] = 0
        follow = after[left] = after[right]
        if follow >= 0:
            before[follow] = left
            rank = rank_of((merged, ids[follow]))
            if rank is not None:
                heappush(heap, (rank, left, results[rank]))
        previous = before[left]
        if previous >= 0:
            rank = rank_of((ids[previous], merged))
            if rank is not None:
                heappush(heap, (rank, previous, results[rank]))
    kept = [i for i in range(count) if lengths[i]]
    return [ids[i] for i in kept], [lengths[i] for i in kept]


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
