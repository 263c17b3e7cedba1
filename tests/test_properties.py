"""Random text against the live reference (hypothesis; POLYTOK_MAX_EXAMPLES sets the number of examples)."""

from __future__ import annotations

import functools
import gzip
import os

import pytest
from fixtures import HF_JSON_FIXTURES, fixture_path

import polytok
from polytok.formats import BUILTIN

tokenizers = pytest.importorskip("tokenizers")
hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

EXAMPLES = int(os.environ.get("POLYTOK_MAX_EXAMPLES", "150"))

# surrogates cannot be encoded as UTF-8, so the reference cannot receive them
PARTS = list(" \t\n\r'sdtmAZ09") + ["<s>", "</s>", "<|endoftext|>", "[SEP]", "\u0301", "é", "日", "🤗", "▁", "Ġ", "  "]
TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=60) | st.lists(
    st.sampled_from(PARTS), max_size=30).map("".join)


@functools.cache
def _pair(name):
    if name == "gpt2-builtin":
        return (tokenizers.Tokenizer.from_str(gzip.decompress(BUILTIN["gpt2"].read_bytes()).decode()),
                polytok.load("gpt2"))
    path = fixture_path(name, HF_JSON_FIXTURES[name])
    return tokenizers.Tokenizer.from_file(str(path)), polytok.load(path)


@pytest.mark.parametrize("name", ["gpt2-builtin", "llama2", "bert-base-uncased", "albert-base-v2-tf5", "qwen3"])
def test_random_text_matches_reference(name):
    ref, ours = _pair(name)

    @settings(max_examples=EXAMPLES, deadline=None, database=None)
    @given(TEXT)
    def check(text):
        expected = ref.encode(text)
        assert ours.encode(text) == expected.ids
        got = ours.encode_full(text)
        assert got.offsets == [tuple(o) for o in expected.offsets]
        assert ours.decode(expected.ids) == ref.decode(expected.ids, skip_special_tokens=False)

    check()
