"""Digits pre-tokenizer against the live `tokenizers`."""

from __future__ import annotations

import pytest

from polytok.errors import FormatError

from ._helpers import all_texts, assert_same, ours, reference

NUMBERS = ["a五b²c١٢x123", "½¾ 2⁵ ① ⑽ Ⅻ 〇 𝟙𝟚", "1,000.50", "x1y22z333", "٣٤ ۵۶ ߁ ௰"]


@pytest.mark.parametrize("individual", [True, False])
def test_whole_texts(individual):
    assert_same({"type": "Digits", "individual_digits": individual}, all_texts(n_random=300) + NUMBERS)


@pytest.mark.parametrize("individual", [True, False])
def test_after_added_tokens(individual):
    assert_same({"type": "Digits", "individual_digits": individual}, all_texts(n_random=80, seed=9), cuts=(2, 3))


def test_spec_vector():
    digits = ours({"type": "Digits", "individual_digits": False})
    assert digits.pre_tokenize("a五b²c١٢x123") == ["a五b", "²", "c", "١٢", "x", "123"]


@pytest.mark.parametrize("config", [{"type": "Digits"}, {"type": "Digits", "individual_digits": None},
                                    {"type": "Digits", "individual_digits": 1}])
def test_rejected_configs(config):
    with pytest.raises(Exception):  # noqa: B017 - tokenizers raises a plain Exception
        reference(config)
    with pytest.raises(FormatError):
        ours(config)
