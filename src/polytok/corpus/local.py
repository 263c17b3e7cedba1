"""The local engine: every core of this machine, through `polytok.parallel.map_in_runs`.

One task is one split (one shard): a worker reads the split itself, encodes its
documents and sends back only the shard's ids and offsets, so a task is a few
dozen bytes and a shard is one large batch (~``shard_bytes`` of text). The
tokenizer reaches the workers through ``fork`` (the job is a closure over it):
it is loaded once, in this process, and no worker loads or unpickles it. This
process is one of the workers, between writing the shards that are ready.

Before forking, this process encodes the first `WARM_BYTES` of the corpus, so the
workers inherit the word caches it filled (the commonest words of the corpus are
among them). Measured (bench/corpus.py, gpt2, 5.3 MB of bench text in 0.25 MB
shards): with each worker filling its own caches from nothing, two workers spent
13 % more CPU time than one process (3.09 s against 2.74 s); with the first split
encoded here first, the same 2.76 s as one process. A split is 16 MB by default,
so a whole first split would be a long wait on one core: a split larger than
twice `WARM_BYTES` has only its head encoded (and dropped: the split is encoded
again in its turn), a smaller one is encoded once, here, in its turn.

Workers take guided runs of consecutive splits, at most `RUN_MAX` (neighbouring
documents share words, so the workers' caches overlap less; the runs shrink to
one split at the end, so the workers finish together). Measured with
bench/corpus.py's single runs interleaved on 2 cores, as a share of twice one
process: one split at a time through a `multiprocessing` pool, 0.79 (median of
6 rounds) and 0.73 (best); runs of a fixed size, 0.91 and 0.82; bench/README.md has
the numbers for this scheme.

Where ``fork`` is not safe (`parallel.can_fork`: no fork, or other threads
running), or one worker is asked for, the splits are encoded in this process:
the same bytes, one core.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from typing import TYPE_CHECKING

from .. import parallel
from .readers import Split
from .shards import Settings, ShardResult, encode_split

if TYPE_CHECKING:
    from ..tokenizer import Tokenizer

__all__ = ["run_local"]

WARM_BYTES = 1 << 18  # of input this process encodes before the workers fork (see the module notes)
RUN_MAX = 8  # consecutive splits a worker claims at most (their shards wait in memory for the writer)


def run_local(tok: Tokenizer, splits: list[Split], settings: Settings, workers: int) -> Iterator[ShardResult]:
    """The shards of `splits`, in order, encoded by `workers` processes."""
    workers = min(workers, len(splits))
    if workers <= 1 or not parallel.can_fork():
        for split in splits:
            yield encode_split(tok, split, settings)
        return

    def job(split: Split) -> ShardResult:
        return encode_split(tok, split, settings)

    head = _head(splits[0], settings)
    if head is not None:
        encode_split(tok, head, settings)  # only to warm the caches; the split is encoded in its turn
    here_first = 1 if head is None else 0
    for index, ok, result in parallel.map_in_runs(job, splits, workers, run_max=RUN_MAX, here_first=here_first):
        if not ok:
            job(splits[index])  # raises the worker's error here, with its own type and message
            raise RuntimeError(f"a worker failed where this process did not: {result}")
        yield result


def _head(split: Split, settings: Settings) -> Split | None:
    """About the first `WARM_BYTES` of `split` as a split of its own; None when the split is
    small enough to be encoded whole before forking (see the module notes)."""
    if split.kind == "parquet":  # rows: as many as would hold WARM_BYTES at the split's mean row size
        rows = split.end - split.start
        size = max(1, rows * WARM_BYTES // max(1, settings.shard_bytes))
        return replace(split, end=split.start + size) if 2 * size < rows else None
    if split.end - split.start <= 2 * WARM_BYTES:
        return None
    return replace(split, end=split.start + WARM_BYTES)  # whole lines: those beginning before the end
