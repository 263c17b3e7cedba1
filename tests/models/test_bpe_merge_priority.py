"""BPE(merge_priority="token_id"): tiktoken's merge rule, against tiktoken 0.14.0 run live.

Vocabularies are small and synthetic (all 256 bytes, then merges of existing tokens in a
seeded random order, as BPE training makes them); each word is one regex piece, so the
reference is ``encode_ordinary`` with the pattern ``[a-d]+``. Words run past 48 symbols
(polytok's heap) and 100 bytes (tiktoken's ``_byte_pair_merge_large``).
"""

from __future__ import annotations

import random

import pytest
import tiktoken

from polytok.models.bpe import BPE
from polytok.pre_tokenizers.byte_level import to_byte_level


def _vocab(seed: int, size: int) -> dict[bytes, int]:
    rng = random.Random(seed)
    ranks = {bytes([b]): b for b in range(256)}
    tokens = [b"a", b"b", b"c", b"d"]
    while len(ranks) < 256 + size:
        merged = rng.choice(tokens) + rng.choice(tokens)
        if merged not in ranks and len(merged) <= 12:
            ranks[merged] = len(ranks)
            tokens.append(merged)
    return ranks


def _pair(ranks: dict[bytes, int]) -> tuple[BPE, tiktoken.Encoding]:
    model = BPE({to_byte_level(t.decode("latin-1")) if max(t) > 127 else t.decode(): r
                 for t, r in ranks.items()}, [], ignore_merges=True, merge_priority="token_id")
    ref = tiktoken.Encoding("synthetic", pat_str=r"[a-d]+", mergeable_ranks=ranks, special_tokens={})
    return model, ref


@pytest.mark.parametrize("seed", range(6))
def test_random_words_equal_tiktoken(seed):
    model, ref = _pair(_vocab(seed, 60 + 40 * seed))
    rng = random.Random(1000 + seed)
    for _ in range(400):
        word = "".join(rng.choice("abcd") for _ in range(rng.choice([2, 3, 5, 9, 20, 47, 49, 60, 101, 160])))
        assert model.tokenize(word) == ref.encode_ordinary(word), word
        assert [i for i, _, _ in model.tokenize_spans(word)] == ref.encode_ordinary(word), word


def test_lowest_merged_rank_first_and_leftmost_on_ties():
    ranks = {bytes([b]): b for b in range(256)}
    ranks.update({b"bc": 256, b"ab": 257, b"aa": 258, b"abca": 259})
    model, ref = _pair(ranks)
    # "abc": bc (256) merges before ab (257), and a+bc is not a token: [a, bc]
    # "aaa": two equal candidates (aa at 0 and at 1): the left one merges
    for word in ["abc", "aaa", "aaaa", "aabc", "abcabc"]:
        assert model.tokenize(word) == ref.encode_ordinary(word), word
    assert model.tokenize("abc") == [ord("a"), 256]
    assert model.tokenize("aaa") == [258, ord("a")]


def test_a_pair_merges_whenever_its_concatenation_is_a_token():
    """No merges list: 'ab' + 'c' makes 'abc' although 'abc' was never recorded as that pair."""
    ranks = {bytes([b]): b for b in range(256)}
    ranks.update({b"bc": 256, b"ab": 257, b"abc": 258, b"cab": 259})
    model, ref = _pair(ranks)
    for word in ["abcab", "cabc", "ccab"]:
        assert model.tokenize(word) == ref.encode_ordinary(word), word


def test_token_id_priority_takes_no_merges():
    with pytest.raises(ValueError):
        BPE({"a": 0, "b": 1, "ab": 2}, [("a", "b")], merge_priority="token_id")
    with pytest.raises(ValueError):
        BPE({"a": 0}, [], merge_priority="rank")  # type: ignore[arg-type]
