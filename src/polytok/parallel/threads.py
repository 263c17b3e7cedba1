"""Encoding many texts on threads: the compiled batch pipeline's share of `Tokenizer.encode_batch`.

`polytok._kernels.batch.Pipeline.encode(texts, start, stop)` runs every stage of a
tokenizer on a slice of the texts with the GIL released, so threads of this process
share a batch without forking: the texts are cut into slices of similar size, more
slices than threads, and each thread takes the next slice until none is left (a slice
of long texts does not hold up the others). The ids are the pipeline's, in order; a
text it leaves to the pure pipeline comes back as None, for the caller.

Threads, not processes, because the pipeline's texts are short and cheap: a forked
worker costs more in start-up and in sending ids back than it saves on batches of
lines (bench/README.md), and threads share the loaded tokenizer as it is.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Sequence
from typing import Any

__all__ = ["THREAD_MIN_CHARS", "encode_on_threads"]

THREAD_MIN_CHARS = 100_000  # below this a batch is encoded on the calling thread
SLICES_PER_THREAD = 4


def _bounds(texts: Sequence[str], parts: int) -> list[int]:
    """Cut ``range(len(texts))`` into at most `parts` contiguous slices of similar total length."""
    total = sum(map(len, texts)) or 1
    bounds = [0]
    acc = 0
    for index, text in enumerate(texts):
        acc += len(text)
        if acc * parts >= total * len(bounds) and index + 1 > bounds[-1]:
            bounds.append(index + 1)
    if bounds[-1] != len(texts):
        bounds.append(len(texts))
    return bounds


def encode_on_threads(pipeline: Any, texts: list[str], threads: int) -> list[list[int] | None]:
    """``pipeline.encode`` of every text, on `threads` threads (this one included), in order."""
    if threads <= 1 or len(texts) < 2:
        return pipeline.encode(texts, 0, len(texts))  # type: ignore[no-any-return]
    bounds = _bounds(texts, threads * SLICES_PER_THREAD)
    results: list[list[list[int] | None]] = [[] for _ in range(len(bounds) - 1)]
    taken = itertools.count()  # next() of a count is atomic under the GIL: each slice is taken once
    failures: list[BaseException] = []

    def work() -> None:
        try:
            while (index := next(taken)) < len(results):
                results[index] = pipeline.encode(texts, bounds[index], bounds[index + 1])
        except BaseException as exc:  # re-raised in the calling thread
            failures.append(exc)

    helpers = [threading.Thread(target=work, daemon=True) for _ in range(min(threads, len(results)) - 1)]
    for helper in helpers:
        helper.start()
    work()
    for helper in helpers:
        helper.join()
    if failures:
        raise failures[0]
    return [ids for part in results for ids in part]
