"""Whitespace pre-tokenizer (Rust regex ``\\w+|[^\\w\\s]+``) against the live `tokenizers`."""

from __future__ import annotations

from ._helpers import all_texts, assert_same, ours

CONFIG = {"type": "Whitespace"}


def test_whole_texts():
    assert_same(CONFIG, all_texts(n_random=400))


def test_after_added_tokens():
    assert_same(CONFIG, all_texts(n_random=100, seed=5), cuts=(1, 4))


def test_word_class_is_the_rust_regex_one():
    # ZWJ/ZWNJ are word chars (Join_Control); superscript digits are not (\w has Nd only);
    # U+001C is neither whitespace nor word
    texts = ["a\u200db\u200cc", "x² y³ ½", "a\x1cb", "Ⅻ ⅻ ① ⑽", "\u0300a\u0301", "snake_case‿x", "١٢٣ ௰"]
    # letters newer than the reference's tables (Unicode 17) are not word chars there
    texts += ["a\u0c5cb \U00011db0x \ua7ceZ"]
    assert_same(CONFIG, texts)


def test_spec_vector():
    assert ours(CONFIG).pre_tokenize("Hey man!  x_y") == ["Hey", "man", "!", "x_y"]
