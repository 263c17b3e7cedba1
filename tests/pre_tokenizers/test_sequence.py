"""Sequence pre-tokenizer against the live `tokenizers`, incl. the pipelines of real tokenizer files."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from polytok.errors import FormatError

from ._helpers import aligned, all_texts, assert_same, ours, reference

FIXTURES = Path(__file__).resolve().parents[2].parent / "shared" / "fixtures" / "tokenizers"
REAL = ["llama3", "gpt4o", "qwen3", "gemma3", "albert-base-v2-tf5", "bert-base-uncased", "chatglm3", "clip",
        "falcon", "gpt2", "marian-nmt", "mistral-v3-hf-converted", "olmo-dolma2", "tortoise-tts", "whisper-tiny"]

METASPACE_FIRST = {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "first", "split": True}
SEQUENCES = [
    {"type": "Sequence", "pretokenizers": []},
    {"type": "Sequence", "pretokenizers": [{"type": "WhitespaceSplit"},
                                           {"type": "Metaspace", "replacement": "\u2581"}]},
    {"type": "Sequence", "pretokenizers": [{"type": "Punctuation", "behavior": "Contiguous"},
                                           {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True},
                                           {"type": "Digits", "individual_digits": True}]},
    {"type": "Sequence", "pretokenizers": [{"type": "UnicodeScripts"}, {"type": "FixedLength", "length": 3},
                                           {"type": "Sequence", "pretokenizers": [{"type": "Whitespace"}]}]},
    {"type": "Sequence", "pretokenizers": [METASPACE_FIRST, {"type": "Digits", "individual_digits": False}]},
]


def _real_config(name: str) -> dict:
    folder = FIXTURES / name
    if (folder / "tokenizer.json").is_file():
        text = (folder / "tokenizer.json").read_text(encoding="utf-8")
    elif (folder / "tokenizer.json.gz").is_file():
        text = gzip.decompress((folder / "tokenizer.json.gz").read_bytes()).decode("utf-8")
    else:
        pytest.skip(f"shared fixture {name} absent")
    # decode only the pre_tokenizer object (its key comes before the large vocabulary in these files)
    start = text.index(":", text.index('"pre_tokenizer"')) + 1
    while text[start].isspace():
        start += 1
    config, _ = json.JSONDecoder().raw_decode(text, start)
    return config


@pytest.mark.parametrize("name", REAL)
def test_real_pipelines(name):
    config = _real_config(name)
    assert ours(config).exact_without_alignment
    assert_same(config, all_texts(n_random=200))
    assert_same(config, all_texts(n_random=50, seed=12), cuts=(2, 7))


@pytest.mark.parametrize("config", SEQUENCES, ids=lambda c: "+".join(p["type"] for p in c["pretokenizers"]))
def test_sequences(config):
    assert ours(config).exact_without_alignment
    assert_same(config, all_texts(n_random=150))
    assert_same(config, all_texts(n_random=50, seed=13), cuts=(1, 5))


@pytest.mark.parametrize("first", [
    {"type": "WhitespaceSplit"},
    {"type": "Split", "pattern": {"String": "x"}, "behavior": "Isolated", "invert": False},
    {"type": "Sequence", "pretokenizers": [{"type": "Digits", "individual_digits": True}]},
])
def test_metaspace_first_after_a_split_needs_alignment(first):
    config = {"type": "Sequence", "pretokenizers": [first, METASPACE_FIRST]}
    pt = ours(config)
    assert not pt.exact_without_alignment
    # the aligned path still matches; leading whitespace moves the first piece off offset 0
    texts = all_texts(n_random=150) + ["  Hello world", "Hello world", " x", "x1 2"]
    assert_same(config, texts, check_fast=False)
    assert_same(config, texts, cuts=(3,), check_fast=False)


def test_whitespace_split_then_metaspace_first():
    config = {"type": "Sequence", "pretokenizers": [{"type": "WhitespaceSplit"}, METASPACE_FIRST]}
    ref, pt = reference(config), ours(config)
    # only a piece at original offset 0 gets the prefix: none once leading whitespace is dropped
    for text, want in [("  Hello world", ["Hello", "world"]), ("Hello world", ["\u2581Hello", "world"])]:
        assert [p for p, _ in ref.pre_tokenize_str(text)] == want
        assert [p for p, _ in aligned(pt, text)] == want


def test_metaspace_first_after_non_splitting_members_is_exact():
    config = {"type": "Sequence", "pretokenizers": [
        {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": False},
        {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "first", "split": False},
        METASPACE_FIRST]}
    assert ours(config).exact_without_alignment
    assert_same(config, all_texts(n_random=100), cuts=(2,))


def test_fast_path_first_piece_keeps_at_origin():
    # the fast path's rule (exact while nothing dropped text): only the first piece of an
    # at-origin input, and only while it survives, is at origin
    digits = {"type": "Digits", "individual_digits": True}
    cases = [
        ([METASPACE_FIRST, METASPACE_FIRST], "a b", ["▁a", "▁b"]),
        ([digits, METASPACE_FIRST], "1a", ["▁1", "a"]),
        ([digits, {"type": "UnicodeScripts"}, {**METASPACE_FIRST, "split": False}], " 1a", ["1", "a"]),
    ]
    for members, text, want in cases:
        config = {"type": "Sequence", "pretokenizers": members}
        pt = ours(config)
        assert not pt.exact_without_alignment
        assert [p for p, _ in reference(config).pre_tokenize_str(text)] == want
        assert pt.pre_tokenize(text, True) == want
    pt = ours({"type": "Sequence", "pretokenizers": [METASPACE_FIRST, METASPACE_FIRST]})
    assert pt.pre_tokenize("a b", False) == ["a", "▁b"]


@pytest.mark.parametrize("config, key", [
    ({"type": "Sequence"}, "pre_tokenizer"),
    ({"type": "Sequence", "pretokenizers": None}, "pre_tokenizer.pretokenizers"),
    ({"type": "Sequence", "pretokenizers": [{"type": "Digits"}]}, "pre_tokenizer.pretokenizers[0]"),
    ({"type": "Sequence", "pretokenizers": [{"type": "Whitespace"}, {"type": "Nope"}]},
     "pre_tokenizer.pretokenizers[1].type"),
    ({"type": "Sequence", "pretokenizers": [{"type": "Whitespace"}, 3]}, "pre_tokenizer.pretokenizers[1]"),
])
def test_rejected_configs(config, key):
    with pytest.raises(Exception):  # noqa: B017 - tokenizers raises a plain Exception
        reference(config)
    with pytest.raises(FormatError) as info:
        ours(config)
    assert info.value.key == key
