"""The local engine: every core of this machine, through `polytok.parallel.map_in_pool`.

One task is one split (one shard): a worker reads the split itself, encodes its
documents and sends back only the shard's ids and offsets, so the tasks are a
few dozen bytes each and a shard is one large batch (~``shard_bytes`` of text).
The tokenizer reaches the workers through ``fork`` (the job is a closure over
it): it is loaded once, in this process, and no worker loads or unpickles it.
This is the same pool `Tokenizer.encode_batch` uses; it suits a corpus because
its items are only the split descriptors (the inputs are never read into this
process) and its results arrive in input order, as the manifest takes them.

Each worker fills its own word cache over its first shard; with shards of
several MB that costs a few percent of the first shard only.

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


def run_local(tok: "Tokenizer", splits: list[Split], settings: Settings, workers: int) -> Iterator[ShardResult]:
    """The shards of `splits`, in order, encoded by `workers` processes."""
    workers = min(workers, len(splits))
    if workers <= 1 or not parallel.can_fork():
        for split in splits:
            yield encode_split(tok, split, settings)
        return

    def job(split: Split) -> ShardResult:
        return encode_split(tok, split, settings)

    for index, ok, result in parallel.map_in_pool(job, splits, workers):
        if not ok:
            job(splits[index])  # raises the worker's error here, with its own type and message
            raise RuntimeError(f"a worker failed where this process did not: {result}")
        yield result
