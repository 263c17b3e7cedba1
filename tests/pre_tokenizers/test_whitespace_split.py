"""WhitespaceSplit pre-tokenizer against the live `tokenizers`."""

from __future__ import annotations

from ._helpers import all_texts, assert_same, ours

CONFIG = {"type": "WhitespaceSplit"}


def test_whole_texts():
    assert_same(CONFIG, all_texts(n_random=400))


def test_after_added_tokens():
    assert_same(CONFIG, all_texts(n_random=100, seed=6), cuts=(2, 3))


def test_white_space_not_isspace():
    # str.split() would also cut at U+001C..U+001F
    assert ours(CONFIG).pre_tokenize("a\x1cb\x1f c\u3000d\x85e\u200bf") == ["a\x1cb\x1f", "c", "d", "e\u200bf"]
    assert_same(CONFIG, ["a\x1cb\x1f c\u3000d\x85e\u200bf", "\u180e x \u2028\u2029y"])
