"""Fuse and Sequence decoders vs tokenizers.decoders, on real SentencePiece-style chains."""

from __future__ import annotations

import json

import pytest

import polytok.decoders

from ._data import assert_same, encoded_token_lists, ours_like, random_lists, tokenizer_text, vocab_pieces

tokenizers = pytest.importorskip("tokenizers")
D = tokenizers.decoders

LLAMA2_CHAIN = [D.Replace("▁", " "), D.ByteFallback(), D.Fuse(), D.Strip(" ", 1, 0)]


def test_fuse():
    ref = D.Fuse()
    assert_same(ref, ours_like(ref), [[], [""], ["a", "b", ""], ["▁x", "<0x41>"]])


def test_fuse_then_strip_on_empty_list():
    ref = D.Sequence([D.Fuse(), D.Strip(" ", 1, 0)])
    assert_same(ref, ours_like(ref), [[], [" "], ["", " a"]])


def test_empty_sequence():
    ref = D.Sequence([])
    assert_same(ref, ours_like(ref), [[], ["a", "b"]])


@pytest.mark.parametrize("name", ["llama2", "chatglm3", "mistral-v3-hf-converted"])
def test_real_file_chains(name):
    text = tokenizer_text(name)
    if text is None:
        pytest.skip(f"shared fixture {name} absent")
    config = json.loads(text)["decoder"]
    ref = tokenizers.Tokenizer.from_str(text).decoder
    ours = polytok.decoders.from_config(config, "decoder")
    pieces = vocab_pieces(name)
    lists = encoded_token_lists(name) + random_lists(pieces[:600], 200, 7) + random_lists(pieces, 200, 8)
    assert_same(ref, ours, lists)


def test_llama2_chain_nested():
    ref = D.Sequence([D.Sequence(LLAMA2_CHAIN[:2]), D.Sequence(LLAMA2_CHAIN[2:])])
    assert_same(ref, ours_like(ref), encoded_token_lists("llama2"))
