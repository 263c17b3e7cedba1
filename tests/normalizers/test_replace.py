"""Replace normalizer vs tokenizers.normalizers.Replace (String and Regex, Oniguruma iteration)."""

from __future__ import annotations

import json

import pytest

from polytok.errors import FormatError
from polytok.normalizers import Replace, from_config

from ._harness import aligned, check, edge_texts

tokenizers = pytest.importorskip("tokenizers")
Regex = tokenizers.Regex

PATTERNS = [
    ("▁", " "), (" ", "▁"), ("", "x"), ("a", ""), ("aa", "b"), ("ab", "xyz"), (".", "!"),
    (Regex(" {2,}"), "▁"), (Regex("a*"), "-"), (Regex("x*"), "-"), (Regex(""), "x"), (Regex("^"), ">"),
    (Regex("$"), "<"), (Regex(r"\s+"), " "), (Regex(r"b|"), "#"), (Regex(r"\Z"), "!"), (Regex(r"(?m).$"), "E"),
    (Regex(r"[a-z]+"), "W"), (Regex("[\u0300-\u036f]"), ""), (Regex(r"(?<=a)b"), "B"), (Regex(r"\p{Lu}"), "^"),
]
TARGETED = ["abc", "abxxc", "aab ab  b", "  Hello   world  ", "a\nb\n", "\n", "é\u0301ab", "ÀB日本", "bbb", ""]


@pytest.mark.parametrize("pattern,content", PATTERNS, ids=[str(i) for i in range(len(PATTERNS))])
def test_texts_and_offsets(pattern, content):
    ref = tokenizers.normalizers.Replace(pattern, content)
    ours = from_config(json.loads(ref.__getstate__()))  # the reference's own serialization
    check(ref, ours, TARGETED + edge_texts())


def test_content_maps_to_last_char_of_match():
    assert aligned(Replace("ab", "x"), "abc") == ("xc", [(1, 2), (2, 3)])
    assert aligned(Replace("b", "xy"), "abc", start=3) == ("axyc", [(3, 4), (4, 5), (4, 5), (5, 6)])


def test_from_config_errors():
    with pytest.raises(FormatError, match=r"normalizer\.pattern"):
        from_config({"type": "Replace", "pattern": {"String": "a", "Regex": "b"}, "content": ""})
    with pytest.raises(FormatError, match=r"normalizer\.pattern\.Regex"):
        from_config({"type": "Replace", "pattern": {"Regex": "("}, "content": ""})
    with pytest.raises(FormatError, match="content"):
        from_config({"type": "Replace", "pattern": {"String": "a"}})
