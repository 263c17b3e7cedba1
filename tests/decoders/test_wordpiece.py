"""WordPiece decoder vs tokenizers.decoders.WordPiece (and its cleanup table)."""

from __future__ import annotations

import pytest

from ._data import assert_same, encoded_token_lists, ours_like, random_lists, vocab_pieces

tokenizers = pytest.importorskip("tokenizers")
D = tokenizers.decoders

HAND = [
    ["hello", "##world", "!", "do", "not", "'", "s"],  # §16
    [], [""], ["##a"], ["a", "##"], ["a", "###b"], ["a", "b ##c"],
    ["i", "do", "not", "know", "."], ["it", "'", "s", "a", "dog", "'", "s", "life", "?"],
    ["can", "n't", ",", "we", "'", "re", "'", "ve", "'", "m", "!"], ["x .", "y ?", " do not"],
    ["a", " .", " ' "], ["@@a", "@@b", "c"], ["  ,", "a", " 're"],
]


@pytest.mark.parametrize("prefix", ["##", "", "@@", " "])
@pytest.mark.parametrize("cleanup", [True, False])
def test_hand_lists(prefix, cleanup):
    ref = D.WordPiece(prefix=prefix, cleanup=cleanup)
    assert_same(ref, ours_like(ref), HAND)


@pytest.mark.parametrize("cleanup", [True, False])
def test_bert_vocab_pieces(cleanup):
    ref = D.WordPiece(cleanup=cleanup)
    pieces = vocab_pieces("bert-base-uncased")
    punct = [".", ",", "?", "!", "'", "s", "m", "t", "n", "re", "ve", "do", "not"]
    assert_same(ref, ours_like(ref), random_lists(pieces + punct * 200, 400, 3, 12))


def test_bert_encoded_edge_texts():
    ref = D.WordPiece()
    assert_same(ref, ours_like(ref), encoded_token_lists("bert-base-uncased"))
