"""The `bpe_merge` kernel's ``cut_mark`` against `polytok.models._bpe_cut.cut_mark`'s pure loop:
the real files' vocabularies and random ones (ties for the most common first character, the
mark in runs, astral characters, empty and one-character tokens), and bad input."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from polytok.kernels import pure_path
from polytok.models._bpe_cut import cut_mark

from ._compiled import compiled

FILES = ("gemma3", "llama2", "gpt2", "mistral-v3-hf-converted", "phi-3-mini", "clip")


def pure(vocab: dict[str, int]) -> tuple[str, frozenset[str]]:
    with pure_path():
        return cut_mark(vocab)


@pytest.mark.parametrize("name", FILES)
def test_real_vocabularies(name):
    module = compiled("bpe_merge")
    from fixtures import HF_JSON_FIXTURES, fixture_path

    with open(fixture_path(name, HF_JSON_FIXTURES[name]), encoding="utf-8") as f:
        vocab = json.load(f)["model"]["vocab"]
    found = module.cut_mark(vocab)
    assert found == pure(vocab)
    assert cut_mark(vocab) == found
    assert isinstance(found[1], frozenset)


EXAMPLES = [
    {}, {"a": 0}, {"ab": 0}, {"ab": 0, "a": 1}, {"": 0, "ab": 1, "a": 2},
    {"ba": 0, "ab": 1, "a": 2, "b": 3},  # a tie: "b" first seen
    {"ab": 0, "ba": 1, "a": 2, "b": 3},  # a tie: "a" first seen
    {"a": 0, "b": 1, "bx": 2, "ax": 3, "ay": 4, "by": 5},  # a tie, "b" first among multi-char tokens
    {"▁": 0, "▁▁▁": 1, "x▁": 2, "▁a": 3, "a▁▁b▁": 4},
    {"😀": 0, "😀a": 1, "b😀": 2, "😀😀": 3, "\x00😀": 4},
]


@pytest.mark.parametrize("vocab", EXAMPLES)
def test_examples(vocab):
    assert compiled("bpe_merge").cut_mark(vocab) == pure(vocab)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.text(alphabet="ab▁😀\x00", max_size=5), max_size=40))
def test_random_vocabularies(tokens):
    vocab = {token: i for i, token in enumerate(tokens)}
    assert compiled("bpe_merge").cut_mark(vocab) == pure(vocab)


def test_bad_input():
    module = compiled("bpe_merge")
    with pytest.raises(TypeError, match="dict"):
        module.cut_mark(["ab"])
    with pytest.raises(TypeError, match="str"):
        module.cut_mark({b"ab": 0})
    with pytest.raises(TypeError, match="str"):
        module.cut_mark({"ab": 0, 3: 1})
