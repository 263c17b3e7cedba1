"""The Ray engine: the same splits and shards as the local engine, encoded by Ray Data actors.

Ray 2.60.0 (``ray[data]``, the extra ``polytok[ray]``): the splits become a Ray
dataset (``ray.data.from_items``), one row per split; ``map_batches`` runs
`_EncodeSplits` on a pool of actors (``concurrency`` = workers), each of which
unpickles the tokenizer once, in its constructor, and then reads and encodes
whole splits, returning the shard's ids and offsets. The driver iterates the
result and writes the shards and manifest exactly as the local engine does (the
same `encode_split` makes the bytes, the same `Output` writes them), so the
output is byte-identical to the local engine's.

On a cluster the actors read the inputs themselves: they must be at the same
path on every node (a shared filesystem); the output is written by the driver
only, and the tokenizer travels in the actors' constructor arguments (it need
not exist on the nodes, but polytok must be installed there). ``address`` (or
``RAY_ADDRESS``) picks the cluster; without either, a local instance is started
for the run and shut down after. A Ray instance already initialised in the
process is used as it is.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import asdict
from typing import TYPE_CHECKING, Any

from ..errors import PolytokError
from .readers import Split
from .shards import Settings, ShardResult, encode_split

if TYPE_CHECKING:
    from ..tokenizer import Tokenizer

__all__ = ["run_ray"]


class _EncodeSplits:
    """A Ray Data actor holding one tokenizer: a batch of split rows in, their shards out."""

    def __init__(self, tok: Tokenizer, settings: dict[str, Any]) -> None:
        self.tok, self.settings = tok, Settings(**settings)

    def __call__(self, batch: dict[str, Any]) -> dict[str, Any]:
        import pickle

        import numpy as np

        out = []
        for i in range(len(batch["index"])):
            split = Split(int(batch["index"][i]), int(batch["file_index"][i]), str(batch["path"][i]),
                          str(batch["kind"][i]), int(batch["start"][i]), int(batch["end"][i]))
            out.append(pickle.dumps(encode_split(self.tok, split, self.settings)))
        return {"index": batch["index"], "result": np.array(out, dtype=object)}


def _ray() -> Any:
    try:
        import ray
        import ray.data
    except ImportError:
        raise PolytokError("--engine ray needs Ray Data: pip install 'polytok[ray]'") from None
    return ray


def _start(ray: Any, address: str | None) -> None:
    """Join the cluster at `address` (or ``RAY_ADDRESS``), else start a local instance."""
    target = address or os.environ.get("RAY_ADDRESS")
    try:
        if target:
            ray.init(address=address)
        else:
            ray.init(include_dashboard=False, log_to_driver=False)
    except (ConnectionError, RuntimeError, ValueError) as exc:
        raise PolytokError(f"could not start or join Ray{' at ' + target if target else ''}: {exc}") from None


def run_ray(tok: Tokenizer, splits: list[Split], settings: Settings, workers: int | None,
            address: str | None = None) -> Iterator[ShardResult]:
    """The shards of `splits` (in any order), encoded by `workers` Ray actors (None: one per CPU of the cluster)."""
    import pickle

    ray = _ray()
    started = not ray.is_initialized()
    if started:
        _start(ray, address)
    try:
        context = ray.data.DataContext.get_current()
        context.enable_progress_bars = False
        workers = workers or max(1, int(ray.cluster_resources().get("CPU", 1)))
        rows = [asdict(s) for s in splits]
        data = ray.data.from_items(rows, override_num_blocks=len(rows))  # a block per split: results stream
        pool = ray.data.ActorPoolStrategy(size=max(1, min(workers, len(rows))))
        encoded = data.map_batches(_EncodeSplits, batch_size=1, compute=pool, num_cpus=1,
                                   fn_constructor_kwargs={"tok": tok, "settings": settings.as_dict()})
        for row in encoded.iter_rows():
            yield pickle.loads(row["result"])
    finally:
        if started:
            ray.shutdown()
