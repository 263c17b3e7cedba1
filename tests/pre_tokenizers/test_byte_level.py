"""ByteLevel pre-tokenizer against the live `tokenizers` (pieces, offsets, fast path)."""

from __future__ import annotations

import pytest

from ._helpers import all_texts, assert_same, ours, reference

CONFIGS = [
    {"type": "ByteLevel", "add_prefix_space": add, "trim_offsets": trim, "use_regex": regex}
    for add in (True, False) for trim in (True, False) for regex in (True, False)
]


@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: f"prefix={c['add_prefix_space']}-regex={c['use_regex']}"
                         f"-trim={c['trim_offsets']}")
def test_whole_texts(config):
    assert_same(config, all_texts())


def test_use_regex_defaults_to_true():
    assert_same({"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False}, all_texts(n_random=50))


@pytest.mark.parametrize("cuts", [(3,), (1, 5), (2, 4, 7)])
@pytest.mark.parametrize("add", [True, False])
def test_prefix_space_is_added_to_every_split(add, cuts):
    config = {"type": "ByteLevel", "add_prefix_space": add, "trim_offsets": True}
    assert_same(config, all_texts(n_random=100, seed=1), cuts=cuts)


def test_spec_vectors():
    pt = ours({"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True})
    assert pt.pre_tokenize("Hello  world!\n") == ["ĠHello", "Ġ", "Ġworld", "!", "Ċ"]
    pt = ours({"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True})
    assert pt.pre_tokenize("I'm 123 ok?? ") == ["I", "'m", "Ġ123", "Ġok", "??", "Ġ"]


def test_cache_does_not_change_results():
    pt = ours({"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True})
    first = [pt.pre_tokenize(t) for t in all_texts(n_random=50)]
    again = [pt.pre_tokenize(t) for t in all_texts(n_random=50)]
    assert first == again


def test_letters_newer_than_onig_are_unassigned_as_for_the_reference():
    """`regex` knows Unicode 17 letters (U+0C5C, U+A7CE, CJK Ext. J) that the reference's onig holds unassigned."""
    config = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True}
    for text in ("a\u0c5c b\ua7ce", "x\U000323b0y 12\u0295z"):
        want = [p for p, _ in reference(config).pre_tokenize_str(text)]
        assert ours(config).pre_tokenize(text, True) == want
