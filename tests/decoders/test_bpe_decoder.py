"""BPEDecoder vs tokenizers.decoders.BPEDecoder."""

from __future__ import annotations

import pytest

from ._data import assert_same, ours_like

tokenizers = pytest.importorskip("tokenizers")
D = tokenizers.decoders

HAND = [
    ["hel", "lo</w>", "wor</w>ld</w>"],  # §16: every occurrence, '' in the last token
    [], [""], ["</w>"], ["a</w>", "</w>b</w>"], ["a", "b"], ["x</w></w>", "y</w></w>"],
    ["</w", ">"], ["a</w>b", ""], ["ab", "cd"],
]


@pytest.mark.parametrize("suffix", ["</w>", "", "w", "</w></w>"])
def test_hand_lists(suffix):
    ref = D.BPEDecoder(suffix=suffix)
    assert_same(ref, ours_like(ref), HAND)
