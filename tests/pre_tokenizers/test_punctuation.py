"""Punctuation pre-tokenizer against the live `tokenizers`, every behaviour."""

from __future__ import annotations

import pytest

from polytok.errors import FormatError

from ._helpers import all_texts, assert_same, ours, reference

BEHAVIORS = ["Removed", "Isolated", "MergedWithPrevious", "MergedWithNext", "Contiguous"]
RUNS = ["a,,b", ",a", "a,", ",,", "x!?y.z", "the-final--countdown", "¿Qué? ¡Sí!", "a\u2e42\u2e43b"]


@pytest.mark.parametrize("behavior", BEHAVIORS)
def test_whole_texts(behavior):
    assert_same({"type": "Punctuation", "behavior": behavior}, all_texts(n_random=250) + RUNS)


def test_default_behaviour_is_isolated():
    assert_same({"type": "Punctuation"}, all_texts(n_random=50) + RUNS)
    assert ours({"type": "Punctuation"}).pre_tokenize("Hey, you!?") == ["Hey", ",", " you", "!", "?"]


def test_after_added_tokens():
    assert_same({"type": "Punctuation", "behavior": "MergedWithNext"}, all_texts(n_random=80, seed=8), cuts=(3,))


@pytest.mark.parametrize("behavior", [None, "isolated", 3])
def test_rejected_behaviour(behavior):
    config = {"type": "Punctuation", "behavior": behavior}
    with pytest.raises(Exception):  # noqa: B017 - tokenizers raises a plain Exception
        reference(config)
    with pytest.raises(FormatError) as info:
        ours(config)
    assert info.value.key == "pre_tokenizer.behavior"
