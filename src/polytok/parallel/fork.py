"""The one way polytok starts workers: a bare ``fork`` of this process, one pipe per child.

A child inherits the loaded tokenizer and the texts from this process's memory (copy
on write), so nothing is pickled on the way in and no worker loads a file; it sends
back pickled outcomes and exits without returning into the caller's code. Where
``fork`` is not available (Windows, macOS's default) or other threads are running in
the process (forking a threaded process can deadlock), `can_fork` says so and callers
do the work in this process instead: the same ids, one core.

Objects are frozen (`gc.freeze`) while the children are forked (`forking`), so a
collection in a child neither walks what it inherits nor writes to its pages (each
write would copy a page the child shares with this process).

`run_shared` is the simplest user: one item per process, this process computing the
first. Against a `multiprocessing` pool its worker started measurably sooner and
nothing had to be shut down (bench/README.md, 'Measurements behind design choices').

``multiprocessing`` and ``pickle`` are imported where a process is forked or a result
sent, not with this module: `available_workers` is asked on every compiled batch.
"""

from __future__ import annotations

import gc
import os
import signal
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from functools import partial
from typing import Any

__all__ = ["available_workers", "can_fork", "end_children", "fork_child", "forking", "outcome", "run_shared",
           "shared_ints"]


def available_workers() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def can_fork() -> bool:
    """True when workers can be forked safely (see the module notes)."""
    return has_fork() and threading.active_count() == 1


def has_fork() -> bool:
    """True where ``fork`` exists (`shared_ints` needs it, even when nothing is forked)."""
    import multiprocessing

    return "fork" in multiprocessing.get_all_start_methods()


def outcome(fn: Callable[[Any], Any], item: Any) -> tuple[bool, Any]:
    """``(True, fn(item))``, or ``(False, repr(error))``: a worker's result. The caller redoes
    a failed item itself, so the error surfaces in its process with its own type."""
    try:
        return True, fn(item)
    except Exception as exc:
        return False, repr(exc)


@contextmanager
def forking() -> Iterator[None]:
    """A block that forks children: this process's objects are frozen while it runs (see the
    module notes)."""
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


def shared_ints(values: list[int]) -> Any:
    """Integers this process and the children it forks afterwards all read and write: a
    shared-memory array with a lock (``with array.get_lock(): ...``)."""
    import multiprocessing

    return multiprocessing.get_context("fork").Array("q", values)


def fork_child(body: Callable[[int], None], inherited: list[int]) -> tuple[int, int]:
    """A forked child that runs ``body(write_end)`` and exits without returning into the
    caller's code: its pid and the read end of its pipe. The child closes `inherited`
    (the read ends of its siblings' pipes)."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid:
        os.close(write_end)
        return pid, read_end
    status = 1
    try:
        for fd in (read_end, *inherited):
            os.close(fd)
        body(write_end)
        status = 0
    finally:
        os._exit(status)


def end_children(pids: list[int]) -> None:
    """Kills and reaps children that are no longer wanted (or have already ended)."""
    for pid in pids:
        for end in (partial(os.kill, pid, signal.SIGKILL), partial(os.waitpid, pid, 0)):
            with suppress(OSError):
                end()


def run_shared(fn: Callable[[Any], Any], items: Sequence[Any]) -> list[tuple[bool, Any]]:
    """``(ok, fn(item) or the error's repr)`` for each item: the first computed in this
    process while forked children compute the others, one each, at the same time.

    An error in this process's own item propagates (the children are killed first);
    callers check `can_fork`.
    """
    if len(items) < 2:
        return [(True, fn(item)) for item in items]
    import pickle  # noqa: F401  (here, so the children inherit it)

    children: list[tuple[int, int]] = []
    try:
        with forking():
            for item in items[1:]:
                children.append(fork_child(partial(_send_outcome, fn, item), [fd for _, fd in children]))
        first = fn(items[0])
        rest = []
        while children:
            rest.append(_child_outcome(*children[0]))
            children.pop(0)
    finally:  # this process failed: its children are not waited for
        for _, fd in children:
            os.close(fd)
        end_children([pid for pid, _ in children])
    return [(True, first), *rest]


def _send_outcome(fn: Callable[[Any], Any], item: Any, write_end: int) -> None:
    import pickle

    with os.fdopen(write_end, "wb") as out:
        pickle.dump(outcome(fn, item), out, pickle.HIGHEST_PROTOCOL)


def _child_outcome(pid: int, fd: int) -> tuple[bool, Any]:
    """What a `run_shared` child sent, once it has exited."""
    import pickle

    with os.fdopen(fd, "rb") as pipe:
        data = pipe.read()
    _, status = os.waitpid(pid, 0)
    if not data:
        return False, f"a worker exited without an outcome (wait status {status})"
    result: tuple[bool, Any] = pickle.loads(data)
    return result
