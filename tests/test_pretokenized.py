"""Pre-split input (a list of words, HF ``is_pretokenized=True``) against tokenizers on real files.

Each word runs through the pipeline on its own: offsets restart at 0 in every word,
word ids are the word's index, and Metaspace ``first`` / ByteLevel prefix rules fire per word.
"""

from __future__ import annotations

import functools

import pytest
from fixtures import HF_JSON_FIXTURES, fixture_path

import polytok

tokenizers = pytest.importorskip("tokenizers")
pytest.importorskip("numpy")  # the reference binding needs it for pre-split input

WORDS = [["Hello", "world", "!"], ["  spaced", "words ", "日本語"], ["<s>", "after", "</s>x"], ["a"], ["don't", "stop"]]


@functools.lru_cache(maxsize=1)
def _pair(name):
    path = fixture_path(name, HF_JSON_FIXTURES[name])
    return tokenizers.Tokenizer.from_file(str(path)), polytok.load(path)


@pytest.mark.parametrize("name", ["bert-base-uncased", "gpt2", "llama2", "mistral-v3-hf-converted", "roberta-base",
                                  "albert-base-v2-tf5", "llama3"])
def test_pretokenized_words(name):
    ref, ours = _pair(name)
    for words in WORDS:
        for pair in (None, ["second", "one"]):
            expected = ref.encode(words, pair, is_pretokenized=True)
            got = ours.encode_full(words, pair=pair)
            assert got.ids == expected.ids, (words, expected.tokens, got.tokens)
            assert got.tokens == expected.tokens
            assert got.offsets == [tuple(o) for o in expected.offsets], words
            assert got.word_ids == expected.word_ids
            assert ours.encode(words, pair=pair) == expected.ids
