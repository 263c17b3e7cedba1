"""Split pre-tokenizer against the live `tokenizers`: every behaviour, invert, literal and regex patterns."""

from __future__ import annotations

import pytest

from polytok.errors import FormatError

from ._helpers import all_texts, assert_same, expected, ours, reference

BEHAVIORS = ["Removed", "Isolated", "MergedWithPrevious", "MergedWithNext", "Contiguous"]

LLAMA3 = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"
          r"|\s*[\r\n]+|\s+(?!\S)|\s+")
GPT4O = (r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?"
         r"|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?"
         r"|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+")

# patterns with gaps, groups, anchors and zero-width matches (the onig iteration rules)
PATTERNS = [
    {"Regex": r"\d"}, {"Regex": "[a-z]+"}, {"Regex": r"\s+"}, {"Regex": LLAMA3}, {"Regex": GPT4O},
    {"Regex": "x*"}, {"Regex": "|a"}, {"Regex": "^"}, {"Regex": "$"}, {"Regex": "(?=a)"},
    {"Regex": r"(\d)(\d)?"}, {"Regex": r"^\s+|\s+$"}, {"Regex": " ?"},
    {"String": "-"}, {"String": " "}, {"String": ""}, {"String": "ab"}, {"String": "."}, {"String": "▁"},
    {"String": "<s>"},
]


def _id(pattern):
    kind, value = next(iter(pattern.items()))
    return f"{kind}:{value[:12]!r}"


@pytest.mark.parametrize("invert", [False, True])
@pytest.mark.parametrize("behavior", BEHAVIORS)
@pytest.mark.parametrize("pattern", PATTERNS, ids=_id)
def test_behaviours(pattern, behavior, invert):
    config = {"type": "Split", "pattern": pattern, "behavior": behavior, "invert": invert}
    texts = all_texts(n_random=10, seed=3) + ["abxxc", "the-final--countdown", "aab", "ab\ncd\n", "a.b..c"]
    assert_same(config, texts)


@pytest.mark.parametrize("pattern", [{"Regex": LLAMA3}, {"Regex": r"\d"}, {"String": "-"}], ids=_id)
def test_splits_after_added_tokens(pattern):
    config = {"type": "Split", "pattern": pattern, "behavior": "MergedWithNext", "invert": False}
    assert_same(config, all_texts(n_random=60, seed=4), cuts=(2, 5))


def test_spec_vectors():
    """The spec's examples; expected pieces are HF's, run live (the literals only say what they are)."""
    digits = {"type": "Split", "pattern": {"Regex": r"\d"}, "invert": False}
    words = {"type": "Split", "pattern": {"Regex": "[a-z]+"}, "invert": True}
    for config, text, pieces in [({**digits, "behavior": "MergedWithPrevious"}, "ab1cd23", ["ab1", "cd2", "3"]),
                                 ({**digits, "behavior": "MergedWithNext"}, "ab1cd23", ["ab", "1cd", "2", "3"]),
                                 ({**digits, "behavior": "Contiguous"}, "ab1cd23", ["ab", "1", "cd", "23"]),
                                 ({**words, "behavior": "Removed"}, "ab, cd!", ["ab", "cd"]),
                                 ({**words, "behavior": "Isolated"}, "ab, cd!", ["ab", ", ", "cd", "!"])]:
        assert ours(config).pre_tokenize(text) == [p for p, _ in expected(reference(config), text)] == pieces


@pytest.mark.parametrize("config, key", [
    ({"pattern": {"String": "a"}, "behavior": "Isolated"}, "pre_tokenizer"),
    ({"pattern": {"String": "a"}, "behavior": "isolated", "invert": False}, "pre_tokenizer.behavior"),
    ({"pattern": {"String": "a", "Regex": "b"}, "behavior": "Isolated", "invert": False}, "pre_tokenizer.pattern"),
    ({"pattern": {}, "behavior": "Isolated", "invert": False}, "pre_tokenizer.pattern"),
    ({"pattern": "a", "behavior": "Isolated", "invert": False}, "pre_tokenizer.pattern"),
    ({"pattern": {"Regex": "("}, "behavior": "Isolated", "invert": False}, "pre_tokenizer.pattern.Regex"),
    ({"pattern": {"Regex": 5}, "behavior": "Isolated", "invert": False}, "pre_tokenizer.pattern.Regex"),
    ({"pattern": {"String": "a"}, "behavior": "Isolated", "invert": "no"}, "pre_tokenizer.invert"),
])
def test_rejected_configs(config, key):
    config = {"type": "Split", **config}
    with pytest.raises(Exception):  # noqa: B017 - tokenizers raises a plain Exception
        reference(config)
    with pytest.raises(FormatError) as info:
        ours(config)
    assert info.value.key == key
