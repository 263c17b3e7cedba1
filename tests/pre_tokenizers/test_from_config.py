"""The pre-tokenizer registry: every HF type loads; bad objects name their key path."""

from __future__ import annotations

import pytest

import polytok.pre_tokenizers as pre_tokenizers
from polytok.errors import FormatError

from ._helpers import ours, reference

MINIMAL = [
    {"type": "BertPreTokenizer"}, {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True},
    {"type": "CharDelimiterSplit", "delimiter": "-"}, {"type": "Digits", "individual_digits": True},
    {"type": "FixedLength"}, {"type": "Metaspace", "replacement": "_"}, {"type": "Punctuation"},
    {"type": "Sequence", "pretokenizers": []},
    {"type": "Split", "pattern": {"String": "-"}, "behavior": "Removed", "invert": False},
    {"type": "UnicodeScripts"}, {"type": "Whitespace"}, {"type": "WhitespaceSplit"},
]


def test_registry_holds_every_type():
    assert sorted(pre_tokenizers.REGISTRY) == sorted(c["type"] for c in MINIMAL)


@pytest.mark.parametrize("config", MINIMAL, ids=lambda c: c["type"])
def test_minimal_configs_load_like_the_reference(config):
    reference(config)
    pt = ours({**config, "unknown_key": 1})  # unknown keys are ignored, as serde does
    assert type(pt).__name__ == config["type"]
    assert pt.exact_without_alignment


@pytest.mark.parametrize("config, key", [
    ({"type": "Nope"}, "pre_tokenizer.type"),
    ({"add_prefix_space": True}, "pre_tokenizer"),
    ({"type": "ByteLevel"}, "pre_tokenizer"),
    ({"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": 1}, "pre_tokenizer.trim_offsets"),
    ({"type": "ByteLevel", "add_prefix_space": None, "trim_offsets": True}, "pre_tokenizer.add_prefix_space"),
    ({"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": None},
     "pre_tokenizer.use_regex"),
])
def test_rejected_configs(config, key):
    with pytest.raises(Exception):  # noqa: B017 - tokenizers raises a plain Exception
        reference(config)
    with pytest.raises(FormatError) as info:
        ours(config)
    assert info.value.key == key


def test_not_an_object():
    with pytest.raises(FormatError) as info:
        pre_tokenizers.from_config(["ByteLevel"], "pre_tokenizer")
    assert info.value.key == "pre_tokenizer"
