"""Metaspace decoder vs tokenizers.decoders.Metaspace."""

from __future__ import annotations

import pytest

from ._data import assert_same, encoded_token_lists, ours_like, random_lists, vocab_pieces

tokenizers = pytest.importorskip("tokenizers")
D = tokenizers.decoders

HAND = [
    ["▁▁Hello", "▁wo▁rld", "a▁"],  # §16: every ▁ of token 0 goes, later ones become spaces
    [], [""], ["▁"], ["▁", "▁"], ["a▁b▁", "▁"], ["", "▁x"], ["x", "▁▁"], ["▁a", "b", "▁c"],
    ["<s>", "▁Hello"], ["▁", "<0x0A>", "▁x"], ["*a*", "*"], ["a b", "▁c d"],
]


@pytest.mark.parametrize("scheme", ["always", "first", "never"])
@pytest.mark.parametrize("replacement", ["▁", "*"])
def test_hand_lists(scheme, replacement):
    ref = D.Metaspace(replacement=replacement, prepend_scheme=scheme)
    assert_same(ref, ours_like(ref), HAND)


@pytest.mark.parametrize("scheme", ["always", "first", "never"])
def test_llama2_vocab_pieces(scheme):
    ref = D.Metaspace(prepend_scheme=scheme, split=False)
    assert_same(ref, ours_like(ref), random_lists(vocab_pieces("llama2"), 300, 2))


def test_albert_encoded_edge_texts():
    ref = D.Metaspace()
    assert_same(ref, ours_like(ref), encoded_token_lists("albert-base-v2-tf5"))
