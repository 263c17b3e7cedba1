"""UnicodeScripts pre-tokenizer against the live `tokenizers`, incl. the leading-space drop."""

from __future__ import annotations

from ._helpers import all_texts, assert_same, ours

CONFIG = {"type": "UnicodeScripts"}
SCRIPTS = [
    "どこで生れ。Yes 123", "Apples are りんご 林檎", "  abc  def", "   ", " ", "ー カタカナ ひらがな漢字",
    "a🥰b", "🥰 a", "a 🤗 b", "Привет мир hello", "שָׁלוֹם abc ١٢٣", "e\u0301\u0300x", "ｶﾀｶﾅ ﾟ",
    "\u0378a\U000e0001", "日本語 English 한국어 ไทย",
]


def test_whole_texts():
    assert_same(CONFIG, all_texts(n_random=400) + SCRIPTS)


def test_after_added_tokens():
    # the leading-space drop applies to every split
    assert_same(CONFIG, all_texts(n_random=100, seed=10) + SCRIPTS, cuts=(1, 4))


def test_spec_vectors():
    pt = ours(CONFIG)
    assert pt.pre_tokenize("どこで生れ。Yes 123") == ["どこで生れ", "。", "Yes ", "123"]
    assert pt.pre_tokenize("  abc  def") == ["abc  def"]
    assert pt.pre_tokenize("   ") == []
