"""The local engine: every core of this machine, through `polytok.parallel.map_in_pool`.

One task is one split (one shard): a worker reads the split itself, encodes its
documents and sends back only the shard's ids and offsets, so the tasks are a
few dozen bytes each and a shard is one large batch (~``shard_bytes`` of text).
The tokenizer reaches the workers through ``fork`` (the job is a closure over
it): it is loaded once, in this process, and no worker loads or unpickles it.
This is the same pool `Tokenizer.encode_batch` uses; it suits a corpus because
its items are only the split descriptors (the inputs are never read into this
process) and its results arrive in input order, as the manifest takes them.

This process encodes the first split itself before the pool starts, so the
workers inherit the word caches it filled (as `parallel.encode_in_pool` does).
Measured (bench/corpus.py, gpt2, 5.3 MB of bench text in 0.25 MB shards): with
each worker filling its own caches from nothing, two workers spent 13 % more CPU
time than one process (3.09 s against 2.74 s); with the first split encoded
here first, the same 2.76 s as one process.

A worker takes runs of up to `RUN_MAX` consecutive splits (neighbouring documents
share words, so the two workers' caches overlap less). Measured with
bench/corpus.py's single runs, 6 rounds interleaved on 2 cores: two workers
reached 0.79 (median) and 0.73 (best) of twice one process with one split at a
time, 0.91 and 0.82 with runs.

Where ``fork`` is not safe (`parallel.can_fork`: no fork, or other threads
running), or one worker is asked for, the splits are encoded in this process:
the same bytes, one core.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterator

from .. import parallel
from .readers import Split
from .shards import Settings, ShardResult, encode_split

if TYPE_CHECKING:
    from ..tokenizer import Tokenizer

__all__ = ["run_local"]

RUN_MAX = 8  # consecutive splits a worker takes at a time (their shards wait in memory for the writer)


def run_local(tok: "Tokenizer", splits: list[Split], settings: Settings, workers: int) -> Iterator[ShardResult]:
    """The shards of `splits`, in order, encoded by `workers` processes."""
    workers = min(workers, len(splits))
    if workers <= 1 or not parallel.can_fork():
        for split in splits:
            yield encode_split(tok, split, settings)
        return

    def job(split: Split) -> ShardResult:
        return encode_split(tok, split, settings)

    yield job(splits[0])  # in this process first: the workers inherit the word caches it fills
    splits = splits[1:]
    run = min(RUN_MAX, max(1, len(splits) // (2 * workers)))
    for index, ok, result in parallel.map_in_pool(job, splits, workers, run=run):
        if not ok:
            job(splits[index])  # raises the worker's error here, with its own type and message
            raise RuntimeError(f"a worker failed where this process did not: {result}")
        yield result
