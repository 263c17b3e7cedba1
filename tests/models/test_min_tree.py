"""MinTree (the queue of the long-word merge loops) against a plain scan of its ranks.

After every change the tree's lowest rank and position must be the lowest rank of
the row and its leftmost position: the order HF tokenizers' heap (word.rs,
``Word::merge_all``) and llama.cpp's bigram queue pop pairs in.
"""

from __future__ import annotations

import random
from array import array

import pytest

from polytok.models._min_tree import FAN, MinTree

NONE = (1 << 31) - 1


def _scan(ranks: list[int]) -> tuple[int, int]:
    best = min(ranks, default=NONE)
    return (best, ranks.index(best)) if best != NONE else (NONE, -1)


@pytest.mark.parametrize("size", [0, 1, 2, FAN - 1, FAN, FAN + 1, FAN * FAN, FAN * FAN + 3, 5000])
def test_lowest_is_the_leftmost_lowest_after_every_change(size):
    rng = random.Random(size)
    ranks = [rng.choice([NONE, rng.randrange(6)]) for _ in range(size)]
    tree = MinTree(array("i", ranks), NONE)
    assert tree.lowest() == _scan(ranks)
    for _ in range(3 * size):
        at = rng.randrange(size)
        ranks[at] = rng.choice([NONE, NONE, rng.randrange(6), rng.randrange(1000)])
        tree.put(at, ranks[at])
        assert tree.lowest() == _scan(ranks)
