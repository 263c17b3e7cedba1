"""CTC decoder vs tokenizers.decoders.CTC."""

from __future__ import annotations

import random

import pytest

from ._data import assert_same, ours_like

tokenizers = pytest.importorskip("tokenizers")
D = tokenizers.decoders

HAND = [
    ["<pad>", "h", "h", "<pad>", "e", "l", "l", "<pad>", "l", "o", "|", "w"],  # §16
    [], [""], ["<pad>"], ["a", "a", "a"], ["a", "<pad>", "a"], ["|", "|", "a", "|"],
    ["x<pad>y", "x<pad>y", "<pad><pad>"], ["do", "|", "not", "|", "'", "s"], ["a", " .", " ."],
    ["a|b", "|", " n't"], ["<pad>|", "|<pad>"],
]


def _random_lists(seed: int, n: int) -> list[list[str]]:
    rng = random.Random(seed)
    alphabet = ["<pad>", "|", "a", "b", "'", "s", ".", " ", "n't", "do", "not", "<pad>a"]
    return [[rng.choice(alphabet) for _ in range(rng.randint(0, 15))] for _ in range(n)]


@pytest.mark.parametrize("pad,delim,cleanup", [
    ("<pad>", "|", True), ("<pad>", "|", False), ("", "|", True), ("a", "a", True), ("<pad>", " ", True),
])
def test_lists(pad, delim, cleanup):
    ref = D.CTC(pad_token=pad, word_delimiter_token=delim, cleanup=cleanup)
    assert_same(ref, ours_like(ref), HAND + _random_lists(4, 300))
