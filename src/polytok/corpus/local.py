"""The local engine: every core of this machine, through `polytok.parallel_runs.map_in_runs`.

One task is one split (one shard): a worker reads the split itself, encodes its
documents and sends back only the shard's ids and offsets, so a task is a few
dozen bytes and a shard is one large batch (~``shard_bytes`` of text). The
tokenizer reaches the workers through ``fork`` (the job is a closure over it):
it is loaded once, in this process, and no worker loads or unpickles it. This
process is one of the workers, between writing the shards that are ready.

This process encodes the first split before forking, so the workers inherit the
word caches it filled. Measured (bench/corpus.py, gpt2, 5.3 MB of bench text in
0.25 MB shards): with each worker filling its own caches from nothing, two
workers spent 13 % more CPU time than one process (3.09 s against 2.74 s); with
the first split encoded here first, the same 2.76 s as one process.

Workers take guided runs of consecutive splits, at most `RUN_MAX` (neighbouring
documents share words, so the workers' caches overlap less; the runs shrink to
one split at the end, so the workers finish together). Measured with
bench/corpus.py's single runs interleaved on 2 cores, as a share of twice one
process: one split at a time through a `multiprocessing` pool, 0.79 (median of
6 rounds) and 0.73 (best); runs of a fixed size, 0.91 and 0.82; the README has
the numbers for this scheme.

Where ``fork`` is not safe (`parallel.can_fork`: no fork, or other threads
running), or one worker is asked for, the splits are encoded in this process:
the same bytes, one core.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterator

from .. import parallel, parallel_runs
from .readers import Split
from .shards import Settings, ShardResult, encode_split

if TYPE_CHECKING:
    from ..tokenizer import Tokenizer

__all__ = ["run_local"]

RUN_MAX = 8  # consecutive splits a worker claims at most (their shards wait in memory for the writer)


def run_local(tok: "Tokenizer", splits: list[Split], settings: Settings, workers: int) -> Iterator[ShardResult]:
    """The shards of `splits`, in order, encoded by `workers` processes."""
    workers = min(workers, len(splits))
    if workers <= 1 or not parallel.can_fork():
        for split in splits:
            yield encode_split(tok, split, settings)
        return

    def job(split: Split) -> ShardResult:
        return encode_split(tok, split, settings)

    for index, ok, result in parallel_runs.map_in_runs(job, splits, workers, run_max=RUN_MAX, here_first=1):
        if not ok:
            job(splits[index])  # raises the worker's error here, with its own type and message
            raise RuntimeError(f"a worker failed where this process did not: {result}")
        yield result
