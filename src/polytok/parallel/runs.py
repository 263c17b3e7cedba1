"""Many items on every core, in order, with this process as one of the workers.

`map_in_runs` is what the corpus engine uses for its splits, `encode_batch` for its
spans of texts and ``polytok count`` for whole files. Against a `multiprocessing`
pool (this process only collecting), which all three used before:

- This process computes items too, between handing finished ones to its caller,
  so ``workers`` processes compute in all and the caller's own work (writing
  shards) fills this process's gaps instead of competing with busy workers.
- Items are claimed in runs of consecutive items (neighbouring documents share
  words, so each worker's caches serve it longer), guided: a run is a
  ``1 / (2 × workers)`` share of what is left, at most `run_max`, so the runs
  shrink to single items at the end and the workers finish within about one item
  of each other. Runs of a fixed size left one worker idle for up to a whole run.
- The workers are bare ``fork`` children sending length-prefixed pickles down a
  pipe; a thread in this process drains the pipes as results arrive, so a child
  never waits on a full pipe while this process computes.

Tried and dropped: the processes sending each other the words they add to their
caches after each item, so a word would run the merge loop once in all. Every new
word is pickled, sent and taken in, though most are met by one process only, and
the frequent ones both meet in their first item anyway: two processes reached 0.77
of twice one with it and 0.81 without (median of 6 interleaved rounds,
bench/corpus.py, gpt2; CPU time 1.19 and 1.22 of one process's, within the noise).

A child that dies without sending its items (killed, out of memory) costs only
time: this process computes what is missing itself. An item whose function
raises comes back as ``(index, False, repr(error))`` (`fork.outcome`).
"""

from __future__ import annotations

import os
import pickle
import queue
import struct
import threading
from collections.abc import Callable, Iterator, Sequence
from functools import partial
from math import ceil
from typing import Any

from .fork import end_children, fork_child, forking, outcome, shared_ints

__all__ = ["map_in_runs"]

_LENGTH = struct.Struct("<Q")


class _Claims:
    """The next unclaimed item, shared by the forked workers; runs are guided (see the module notes)."""

    def __init__(self, count: int, workers: int, run_max: int) -> None:
        self.count, self.workers, self.run_max = count, workers, run_max
        self.next = shared_ints([0])

    def take(self) -> range:
        with self.next.get_lock():
            start = self.next[0]
            size = max(1, min(self.run_max, ceil((self.count - start) / (2 * self.workers))))
            stop = min(self.count, start + size)
            self.next[0] = max(start, stop)
        return range(start, stop)


def _child(fn: Callable[[Any], Any], items: Sequence[Any], claims: _Claims, write_end: int) -> None:
    """A worker's loop: claim runs and send each item's outcome as it is done."""
    with os.fdopen(write_end, "wb", buffering=0) as out:
        while run := claims.take():
            for index in run:
                data = pickle.dumps((index, outcome(fn, items[index])), pickle.HIGHEST_PROTOCOL)
                out.write(_LENGTH.pack(len(data)) + data)


def _drain(read_end: int, number: int, arrived: queue.Queue[tuple[int, Any]]) -> None:
    """The reader thread of child `number`: ``(number, message)`` for each of its messages,
    then ``(number, None)`` at its end."""
    try:
        with os.fdopen(read_end, "rb") as pipe:
            while len(head := pipe.read(_LENGTH.size)) == _LENGTH.size:
                (size,) = _LENGTH.unpack(head)
                body = pipe.read(size)
                if len(body) != size:
                    break
                arrived.put((number, pickle.loads(body)))
    finally:
        arrived.put((number, None))


def map_in_runs(fn: Callable[[Any], Any], items: Sequence[Any], workers: int, *, run_max: int = 8,
                here_first: int = 0) -> Iterator[tuple[int, bool, Any]]:
    """``(index, ok, fn(item) or the error's repr)`` for every item, in order, computed by
    this process and ``workers - 1`` forked children (see the module notes).

    The first `here_first` items are computed here before any child is forked, so
    the children inherit the caches they filled. `fn` reaches the children through
    ``fork`` (it may be a closure); callers check `can_fork`.
    """
    count = len(items)
    start = min(here_first, count) if workers > 1 else count
    for index in range(start):
        yield (index, *outcome(fn, items[index]))
    if start == count:
        return
    rest = items[start:]
    claims = _Claims(len(rest), workers, run_max)
    arrived: queue.Queue[tuple[int, Any]] = queue.Queue()
    children: list[tuple[int, int]] = []
    readers: list[threading.Thread] = []
    try:
        with forking():
            for _ in range(workers - 1):
                children.append(fork_child(partial(_child, fn, rest, claims), [fd for _, fd in children]))
        for number, (_, fd) in enumerate(children):
            readers.append(threading.Thread(target=partial(_drain, fd, number, arrived), daemon=True))
            readers[-1].start()
        yield from _collect(fn, rest, start, claims, arrived, len(children))
    finally:
        end_children([pid for pid, _ in children])
        for reader in readers:
            reader.join()


def _collect(fn: Callable[[Any], Any], rest: Sequence[Any], start: int, claims: _Claims,
             arrived: queue.Queue[tuple[int, Any]], running: int) -> Iterator[tuple[int, bool, Any]]:
    """This process's side: hand over the next item when it is ready, else compute a run."""
    ready: dict[int, tuple[bool, Any]] = {}
    wanted = 0

    def receive(message: tuple[int, Any]) -> int:
        """Takes one child's message; 1 if it was the child's end."""
        if message[1] is None:
            return 1
        index, result = message[1]
        ready[index] = result
        return 0

    while wanted < len(rest):
        while True:  # whatever has arrived, without waiting
            try:
                running -= receive(arrived.get_nowait())
            except queue.Empty:
                break
        if wanted in ready:
            yield (start + wanted, *ready.pop(wanted))
            wanted += 1
            continue
        run = claims.take()
        if run:
            for index in run:
                ready[index] = outcome(fn, rest[index])
        elif running == 0:  # every child has ended and this item never came: a child died
            ready[wanted] = outcome(fn, rest[wanted])
        else:
            running -= receive(arrived.get())
