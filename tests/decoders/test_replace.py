"""Replace decoder vs tokenizers.decoders.Replace (String and Regex patterns)."""

from __future__ import annotations

import pytest

from ._data import assert_same, edge_texts, encoded_token_lists, ours_like

tokenizers = pytest.importorskip("tokenizers")
D = tokenizers.decoders
Regex = tokenizers.Regex

HAND = [
    [], [""], ["▁Hello", "▁world"], ["ab", "", "aab"], ["aaaa"], ["a.b.c"], ["line\nnext\n"],
    ["  x  "], ["▁▁"], ["x²y", "é"], ["ab\n", "\nab"],
]

PATTERNS = [
    ("▁", " "), ("", "x"), ("a", ""), ("aa", "b"), (".", "!"), ("$1", "y"),
    (Regex("a+"), "b"), (Regex("a*"), "-"), (Regex(""), "x"), (Regex("^"), ">"), (Regex("$"), "<"),
    (Regex(r"\s+"), " "), (Regex(r"[a-z]\d"), "_"), (Regex(r"(a)(b)"), "$2$1"), (Regex(r"b|"), "#"),
    (Regex(r"\Z"), "!"), (Regex(r"(?m).$"), "E"),
]


@pytest.mark.parametrize("pattern,content", PATTERNS, ids=[str(i) for i in range(len(PATTERNS))])
def test_hand_lists(pattern, content):
    ref = D.Replace(pattern, content)
    lists = HAND + [[t] for t in edge_texts()[:80]]
    assert_same(ref, ours_like(ref), lists)


def test_llama2_tokens():
    ref = D.Replace("▁", " ")
    assert_same(ref, ours_like(ref), encoded_token_lists("llama2"))


def test_onig_word_class():
    # onig's \w is Alphabetic|M|Nd|Pc plus only the Latin-1 No chars ²³¹¼½¾ (U+2076 ⁶ is not one)
    ref = D.Replace(Regex(r"\w"), "_")
    assert_same(ref, ours_like(ref), [["x² y³ 10⁻⁶"], ["Ⓐ①"]])
