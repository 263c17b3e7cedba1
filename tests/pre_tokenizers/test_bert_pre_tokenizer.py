"""BertPreTokenizer against the live `tokenizers`."""

from __future__ import annotations

from ._helpers import all_texts, assert_same, ours

CONFIG = {"type": "BertPreTokenizer"}


def test_whole_texts():
    assert_same(CONFIG, all_texts(n_random=400))


def test_after_added_tokens():
    assert_same(CONFIG, all_texts(n_random=100, seed=7), cuts=(1, 2, 6))


def test_punctuation_is_ascii_or_old_unicode_p():
    # ASCII symbols split, non-ASCII symbols do not; P* of Unicode 8 only (U+2E42 yes, U+2E43 no)
    text = "a$b€c+d<e\u2e42f\u2e43g\u1b7dh\u0589i\u00a7j\u00b6k"
    assert_same(CONFIG, [text, "Hey friend!     How are you?!?"])


def test_spec_vector():
    assert ours(CONFIG).pre_tokenize("a$b€c\u3000d\u200be") == ["a", "$", "b€c", "d\u200be"]
