"""polytok.parallel.map_in_runs: every item once, in order, whichever process computed it."""

from __future__ import annotations

import os
import signal

import pytest

from polytok import parallel
from polytok.parallel import runs

pytestmark = pytest.mark.skipif(not parallel.can_fork(), reason="no fork start method here: items stay serial")


def _who(item):
    return item * item, os.getpid()


@pytest.mark.parametrize("workers", [1, 2, 3])
@pytest.mark.parametrize("here_first", [0, 1, 5])
def test_every_item_once_in_order(workers, here_first):
    items = list(range(57))
    got = list(runs.map_in_runs(_who, items, workers, run_max=4, here_first=here_first))
    assert [index for index, _, _ in got] == items
    assert all(ok for _, ok, _ in got)
    assert [value for _, _, (value, _) in got] == [i * i for i in items]
    pids = {pid for _, _, (_, pid) in got}
    assert all(pid == os.getpid() for _, _, (_, pid) in got[:here_first])
    if workers == 1:
        assert pids == {os.getpid()}


def test_the_children_compute_too():
    def slow(item):
        import time

        time.sleep(0.01)
        return os.getpid()

    got = list(runs.map_in_runs(slow, list(range(40)), 3))
    pids = {pid for _, _, pid in got}
    assert len(pids) == 3 and os.getpid() in pids  # this process is one of the workers


def test_runs_shrink_to_single_items_at_the_end():
    claims = runs._Claims(100, 2, 8)
    sizes = []
    while run := claims.take():
        sizes.append(len(run))
    assert sum(sizes) == 100
    assert sizes[0] == 8 and sizes[-4:] == [1, 1, 1, 1]
    assert sizes == sorted(sizes, reverse=True)


def test_an_error_comes_back_as_its_repr():
    def fails_on_seven(item):
        if item == 7:
            raise ValueError("seven")
        return item

    got = list(runs.map_in_runs(fails_on_seven, list(range(20)), 2, run_max=2))
    assert got[7] == (7, False, "ValueError('seven')")
    assert [value for _, ok, value in got if ok] == [i for i in range(20) if i != 7]


def _too_long(signum, frame):
    raise TimeoutError("map_in_runs is still waiting after 20 s")


def test_a_child_that_dies_costs_only_time():
    parent = os.getpid()
    signal.signal(signal.SIGALRM, _too_long)  # a lost item must not leave this process waiting

    def dies_in_a_child(item):
        if os.getpid() != parent and item >= 3:
            os._exit(9)  # killed mid-run, with items claimed and never sent
        return item

    signal.alarm(20)
    try:
        got = list(runs.map_in_runs(dies_in_a_child, list(range(30)), 2, run_max=3))
    finally:
        signal.alarm(0)
    assert got == [(i, True, i) for i in range(30)]


def test_the_caller_stopping_early_leaves_no_child():
    def slow(item):
        import time

        time.sleep(0.02)
        return item

    results = runs.map_in_runs(slow, list(range(200)), 2)
    assert next(results) == (0, True, 0)
    results.close()
    with pytest.raises(ChildProcessError):
        os.waitpid(-1, os.WNOHANG)
