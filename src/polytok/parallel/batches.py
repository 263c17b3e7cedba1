"""Encoding many texts on every core: `Tokenizer.encode_batch`'s large batches.

Each text is encoded on its own, exactly as `Tokenizer.encode` would, so the ids
never depend on how the batch is cut; only the work is shared out. The batch is cut
into spans of consecutive texts of similar size; this process encodes the first
share itself, then it and ``workers - 1`` forked children (`runs.map_in_runs`) take
the other spans in guided runs. The children inherit the tokenizer, the texts and the
word caches this process filled; only the ids come back, with the words each child
added to its caches, which go into this process's caches so the next batch starts
warm. Where ``fork`` is not safe (`fork.can_fork`), the batch is encoded in the
calling process instead — same ids, one core.

Starting workers costs milliseconds, so batches under `MIN_CHARS` stay in the
calling process.

Rejected: a `multiprocessing` pool of ``workers`` forked processes, this one only
collecting; it did not pay for being a second way of forking. Measured with gpt2 on
the 111,811 non-empty lines of the three bench texts, ``encode_batch(workers=2)``
twice in a fresh process (cold, then warm), pool and bare fork children interleaved
on a shared 2-core machine, medians (cold s, warm s, CPU s in all):

- 3 runs each, load ~8: pool 33.1, 18.4, 15.8; this scheme 29.4, 17.9, 13.2;
- 3 runs each, load ~2: pool 10.0, 6.9, 11.3; this scheme 10.8, 6.3, 10.7;
- 5 runs each, load ~3.5: pool 11.9, 7.4, 12.1; this scheme 10.5, 6.1, 11.1.

The same ids every run; run to run the times varied by up to 50 %, more than the
two schemes differed.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from itertools import islice
from typing import TYPE_CHECKING, Any

from ..bounded_cache import BoundedCache

if TYPE_CHECKING:
    from ..tokenizer import Tokenizer

__all__ = ["MIN_CHARS", "encode_in_pool"]

MIN_CHARS = 500_000  # below this a batch is encoded in the calling process
WARM_SHARE = 2  # this process first encodes 1 / (WARM_SHARE * workers) of the batch itself


def _spans(sizes: list[int], parts: int) -> list[tuple[int, int]]:
    """Cut ``range(len(sizes))`` into about `parts` contiguous spans of similar total size."""
    total = sum(sizes) or 1
    spans: list[tuple[int, int]] = []
    start = acc = 0
    for index, size in enumerate(sizes):
        acc += size
        if acc * parts >= total * (len(spans) + 1) and index + 1 > start:
            spans.append((start, index + 1))
            start = index + 1
    if start < len(sizes):
        spans.append((start, len(sizes)))
    return spans


def encode_in_pool(tok: Tokenizer, texts: Sequence[Any], *, add_special: bool, special: Any,
                   workers: int) -> list[list[int]]:
    """`tok.encode` of each text, shared over `workers` processes (this one and forked
    children), in order.

    Callers check `can_fork`. An error in a child is raised again by encoding that
    child's texts in this process, so it surfaces with its own type and message.
    """
    from .runs import map_in_runs  # (forks: imported where a pool is used)

    sizes = [len(t) if isinstance(t, str) else sum(map(len, t)) for t in texts]
    spans = _spans(sizes, WARM_SHARE * workers * 4)
    caches = _caches(tok)
    sent = [len(cache) for cache in caches]  # each child's copy: what it has already sent back
    here = os.getpid()

    def encode_span(span: tuple[int, int]) -> tuple[list[list[int]], list[list[Any]] | None]:
        ids = [tok.encode(t, add_special=add_special, special=special) for t in texts[span[0]:span[1]]]
        return ids, None if os.getpid() == here else _news(caches, sent)

    # this process encodes the first share itself before forking: the children inherit
    # the word caches it filled instead of each filling its own from nothing
    head = max(1, len(spans) // (WARM_SHARE * workers))
    out: list[list[int]] = []
    for span in spans[:head]:
        out.extend(encode_span(span)[0])
    spans = spans[head:]
    sent[:] = [len(cache) for cache in caches]
    for index, ok, result in map_in_runs(encode_span, spans, workers):
        if not ok:
            encode_span(spans[index])
            raise RuntimeError(f"a worker failed where this process did not: {result}")
        out.extend(result[0])
        if result[1] is not None:
            _absorb(caches, result[1])
    return out


def _caches(tok: Tokenizer) -> list[BoundedCache[Any]]:
    """The word caches of `tok`'s model and pre-tokenizer that a child's words can fill."""
    found = list(tok.model.caches())
    if tok.pre_tokenizer is not None:
        found += [cache for cache in tok.pre_tokenizer.caches() if all(cache is not c for c in found)]
    return found


def _news(caches: list[BoundedCache[Any]], sent: list[int]) -> list[list[Any]]:
    """Each cache's entries added since the last call (all of it if it was cleared meanwhile)."""
    news = []
    for index, cache in enumerate(caches):
        start = sent[index] if len(cache) >= sent[index] else 0
        news.append(list(islice(cache.items(), start, None)))
        sent[index] = len(cache)
    return news


def _absorb(caches: list[BoundedCache[Any]], news: list[list[Any]]) -> None:
    """A worker's new cache entries into this process's caches, where they fit."""
    for cache, entries in zip(caches, news):
        if len(cache) + len(entries) <= cache.limit:
            cache.update(entries)
