"""`polytok.gc_pause`: a block runs with the collector off, and the collection it put off is paid
where the block ends, not in the caller's next call (`encode_batch` on the pure path)."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

import polytok
from polytok.gc_pause import collect_young, gc_paused


@pytest.fixture
def collector_on() -> Iterator[None]:
    was_on = gc.isenabled()
    gc.enable()
    gc.collect()
    try:
        yield
    finally:
        if not was_on:
            gc.disable()


@contextmanager
def collections() -> Iterator[list[int]]:
    """The generations the collector collects in the block, in order (its callbacks: reading
    `gc.get_count` would allocate, and set off the very collection it looks for)."""
    found: list[int] = []

    def note(phase: str, info: dict[str, int]) -> None:
        if phase == "stop":
            found.append(info["generation"])

    gc.callbacks.append(note)
    try:
        yield found
    finally:
        gc.callbacks.remove(note)


def test_the_block_runs_paused_and_restores_the_collector(collector_on: None) -> None:
    with gc_paused():
        assert not gc.isenabled()
        with gc_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # an inner block leaves the outer one's pause
    assert gc.isenabled()
    gc.disable()
    with gc_paused():
        pass
    assert not gc.isenabled()  # a caller that keeps it off is left so
    gc.enable()


def test_collect_young_collects_the_young_generation_once_and_only_with_the_collector_on(
        collector_on: None) -> None:
    gc.disable()
    kept = [[i] for i in range(5 * gc.get_threshold()[0])]  # counted, not collected
    with collections() as found:
        collect_young()
    assert found == []  # the collector is off
    with collections() as found:
        gc.enable()
        collect_young()
        probe = [[]]  # an allocation: the collection, had it been put off
    assert found == [0]
    assert len(kept) == 5 * gc.get_threshold()[0] and probe == [[]]


def test_encode_batch_leaves_no_collection_to_its_caller(collector_on: None) -> None:
    texts = [f"line {i}: the quick brown fox jumps over the lazy dog" for i in range(400)]
    with polytok.kernels.pure_path():
        tok = polytok.load("gpt2")
        tok.encode_batch(texts[:10], add_special=False, workers=1)
        gc.collect()
        with collections() as found:
            out = tok.encode_batch(texts, add_special=False, workers=1)
            inside = len(found)
            probe = [[]]  # the caller's next allocation
        assert inside >= 1  # the batch collected its own young objects
        assert len(found) == inside and probe == [[]]  # and left none to the caller
        assert out == [tok.encode(t, add_special=False) for t in texts]
