"""FixedLength pre-tokenizer against the live `tokenizers`."""

from __future__ import annotations

import pytest

from polytok.errors import EncodeError, FormatError

from ._helpers import all_texts, assert_same, ours, reference


@pytest.mark.parametrize("length", [1, 2, 5, 7, 100])
def test_whole_texts(length):
    assert_same({"type": "FixedLength", "length": length}, all_texts(n_random=100))


def test_default_length_and_splits():
    assert_same({"type": "FixedLength"}, all_texts(n_random=60, seed=11), cuts=(3, 4))


def test_zero_length_loads_but_cannot_split():
    config = {"type": "FixedLength", "length": 0}
    reference(config)  # HF loads it and panics on non-empty text
    pt = ours(config)
    assert pt.pre_tokenize("") == []
    with pytest.raises(EncodeError):
        pt.pre_tokenize("abc")


@pytest.mark.parametrize("length", [-1, None, 2.0, True])
def test_rejected_lengths(length):
    config = {"type": "FixedLength", "length": length}
    with pytest.raises(Exception):  # noqa: B017 - tokenizers raises a plain Exception
        reference(config)
    with pytest.raises(FormatError) as info:
        ours(config)
    assert info.value.key == "pre_tokenizer.length"
