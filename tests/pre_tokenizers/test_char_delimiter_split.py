"""CharDelimiterSplit pre-tokenizer against the live `tokenizers`."""

from __future__ import annotations

import pytest

from polytok.errors import FormatError

from ._helpers import all_texts, assert_same, ours, reference


@pytest.mark.parametrize("delimiter", ["-", " ", "▁", "]", "^", "\\", "a", "🤗"])
def test_whole_texts(delimiter):
    assert_same({"type": "CharDelimiterSplit", "delimiter": delimiter},
                all_texts(n_random=150) + ["a-b--c-", "]]x^^y\\\\z", "🤗a🤗"])


@pytest.mark.parametrize("config, key", [
    ({"type": "CharDelimiterSplit"}, "pre_tokenizer"),
    ({"type": "CharDelimiterSplit", "delimiter": "ab"}, "pre_tokenizer.delimiter"),
    ({"type": "CharDelimiterSplit", "delimiter": ""}, "pre_tokenizer.delimiter"),
    ({"type": "Delimiter", "delimiter": "a"}, "pre_tokenizer.type"),
])
def test_rejected_configs(config, key):
    with pytest.raises(Exception):  # noqa: B017 - tokenizers raises a plain Exception
        reference(config)
    with pytest.raises(FormatError) as info:
        ours(config)
    assert info.value.key == key
