"""Encoding many texts on every core: a process pool whose workers inherit the tokenizer.

`Tokenizer.encode_batch` hands large batches here. Each text is encoded on its
own, exactly as `Tokenizer.encode` would, so the ids never depend on how the
batch is cut; only the work is shared out.

The workers are forked (`fork`): they inherit the tokenizer and the texts, and only
the ids come back. Where ``fork`` is not safe (`fork.can_fork`), the batch is encoded
in the calling process instead — same ids, one core.

A pool costs tens of milliseconds to start, so batches under `MIN_CHARS` stay in the
calling process.
"""

from __future__ import annotations

import multiprocessing
from itertools import islice
from typing import TYPE_CHECKING, Any, Callable, Iterator, Sequence

from .fork import forking, outcome

if TYPE_CHECKING:
    from ..tokenizer import Tokenizer

__all__ = ["MIN_CHARS", "encode_in_pool", "map_in_pool"]

MIN_CHARS = 500_000  # below this a batch is encoded in the calling process
WARM_SHARE = 2  # this process first encodes 1 / (WARM_SHARE * workers) of the batch itself

# What a forked worker inherits: the function it applies to the items it is sent.
_JOB: Callable[[Any], Any] | None = None


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


def _forked_pool(workers: int) -> Any:
    """A ``fork`` pool whose workers' garbage collector leaves what they inherit alone (`fork.forking`)."""
    with forking():
        return multiprocessing.get_context("fork").Pool(workers)


def _run(job: tuple[int, Any]) -> tuple[int, tuple[bool, Any]]:
    assert _JOB is not None
    index, item = job
    return index, outcome(_JOB, item)


def map_in_pool(fn: Callable[[Any], Any], items: Sequence[Any], workers: int,
                ordered: bool = True) -> Iterator[tuple[int, bool, Any]]:
    """``(index, ok, fn(item) or the error's repr)`` for each item, computed in forked workers.

    `fn` and everything it refers to reach the workers through ``fork`` (it may be a
    closure); only the items and the results are pickled. Callers check `can_fork`.
    """
    global _JOB
    _JOB = fn
    try:
        with _forked_pool(workers) as pool:
            results = (pool.imap if ordered else pool.imap_unordered)(_run, list(enumerate(items)))
            for index, (ok, result) in results:
                yield index, ok, result
    finally:
        _JOB = None


def encode_in_pool(tok: "Tokenizer", texts: Sequence[Any], *, add_special: bool, special: Any,
                   workers: int) -> list[list[int]]:
    """`tok.encode` of each text, shared over `workers` forked processes, in order.

    Callers check `can_fork`. An error in a worker is raised again by encoding
    that worker's texts in this process, so it surfaces with its own type and message.
    The words the workers add to their caches come back with their ids and go into
    this process's caches (see `_caches`), so the next batch starts warm.
    """
    sizes = [len(t) if isinstance(t, str) else sum(map(len, t)) for t in texts]
    spans = _spans(sizes, WARM_SHARE * workers * 4)
    caches = _caches(tok)
    sent = [len(cache) for cache in caches]  # each worker's copy: what it has already sent back

    def encode_span(span: tuple[int, int]) -> tuple[list[list[int]], list[list[Any]]]:
        ids = [tok.encode(t, add_special=add_special, special=special) for t in texts[span[0]:span[1]]]
        return ids, _news(caches, sent)

    # this process encodes the first share itself before forking: the workers inherit
    # the word caches it filled instead of each filling its own from nothing
    head = max(1, len(spans) // (WARM_SHARE * workers))
    out: list[list[int]] = []
    for span in spans[:head]:
        out.extend(encode_span(span)[0])
    spans = spans[head:]
    sent[:] = [len(cache) for cache in caches]
    for index, ok, result in map_in_pool(encode_span, spans, workers):
        if not ok:
            encode_span(spans[index])
            raise RuntimeError(f"a worker failed where this process did not: {result}")
        out.extend(result[0])
        _absorb(caches, result[1])
    return out


def _caches(tok: "Tokenizer") -> list[dict[str, Any]]:
    """The word caches of `tok`'s model and pre-tokenizers that a worker's words can fill:
    dicts with a ``limit`` (`models._cache.WordCache`, ByteLevel's byte-form cache)."""
    stages = [tok.model, *getattr(tok.pre_tokenizer, "pretokenizers", [tok.pre_tokenizer])]
    found: list[dict[str, Any]] = []
    for stage in stages:
        for cache in (getattr(stage, "_cache", None), getattr(getattr(stage, "_mapped", None), "__self__", None)):
            if isinstance(cache, dict) and hasattr(cache, "limit") and all(cache is not c for c in found):
                found.append(cache)
    return found


def _news(caches: list[dict[str, Any]], sent: list[int]) -> list[list[Any]]:
    """Each cache's entries added since the last call (all of it if it was cleared meanwhile)."""
    news = []
    for index, cache in enumerate(caches):
        start = sent[index] if len(cache) >= sent[index] else 0
        news.append(list(islice(cache.items(), start, None)))
        sent[index] = len(cache)
    return news


def _absorb(caches: list[dict[str, Any]], news: list[list[Any]]) -> None:
    """A worker's new cache entries into this process's caches, where they fit."""
    for cache, entries in zip(caches, news):
        if len(cache) + len(entries) <= cache.limit:  # type: ignore[attr-defined]
            cache.update(entries)
