"""decode_stream() step by step against HF's DecodeStream, on real files."""

from __future__ import annotations

import functools

import pytest
from fixtures import HF_JSON_FIXTURES, edge_texts, fixture_path

import polytok

tokenizers = pytest.importorskip("tokenizers")
from tokenizers.decoders import DecodeStream  # noqa: E402

NAMES = ["gpt2", "llama2", "llama3", "mistral-v3-hf-converted", "bert-base-uncased", "albert-base-v2-tf5",
         "gemma3", "qwen3", "chatglm3", "marian-nmt"]
TEXTS = ["Hello  world é 日本\n x", "Hi 日本語 🤗!", "  leading",
         "a\u0301 b \U0001f468\u200d\U0001f469\u200d\U0001f467", "<s>[INST] hi [/INST]</s>", "x" * 50]


@functools.lru_cache(maxsize=1)
def _pair(name):
    path = fixture_path(name, HF_JSON_FIXTURES[name])
    return tokenizers.Tokenizer.from_file(str(path)), polytok.load(path)


@pytest.mark.parametrize("name", NAMES)
def test_stream_steps_equal_reference(name):
    ref, ours = _pair(name)
    for skip, text in [(s, t) for s in (False, True) for t in TEXTS + list(edge_texts())[::23]]:
        ids = ref.encode(text).ids
        ref_stream, our_stream = DecodeStream(skip_special_tokens=skip), ours.decode_stream(skip_special=skip)
        for i, id_ in enumerate(ids):
            expected = ref_stream.step(ref, id_)
            got = our_stream.step(id_)
            assert got == (expected or ""), (name, text, i, id_, expected, got)


def test_stream_never_emits_broken_utf8_and_loses_no_space():
    tok = polytok.load("gpt2")
    text = "Hi 日本語 🤗! and  two spaces"
    stream = tok.decode_stream()
    pieces = [stream.step(i) for i in tok.encode(text)]
    assert "".join(pieces) == text
    assert all("\ufffd" not in p for p in pieces)
