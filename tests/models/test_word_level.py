"""WordLevel model vs tokenizers.models.WordLevel (HF tokenizers 0.23.3)."""

from __future__ import annotations

import pytest

from polytok.errors import EncodeError, FormatError
from polytok.models import WordLevel, from_config

from ._harness import check_words, corpus_texts, edge_words, real_model, real_words, reference, reference_from_json

tokenizers = pytest.importorskip("tokenizers")
HfWordLevel = tokenizers.models.WordLevel

VOCAB = {"<unk>": 0, "hello": 1, "world": 2, "日本": 3, " ": 4, "": 5}


def test_whole_words_and_unk():
    ref, ours = reference(HfWordLevel(VOCAB, "<unk>")), WordLevel(VOCAB, "<unk>")
    check_words(ref, ours, ["hello", "world", "日本", "hello world", " ", "x", "Hello"] + edge_words())
    assert ours.tokenize_spans("xyz") == [(0, 0, 3)]


def test_missing_unk_token_raises_at_encode():
    ref, ours = reference(HfWordLevel({"a": 0}, "<unk>")), WordLevel({"a": 0}, "<unk>")
    assert ours.tokenize("a") == [0]
    with pytest.raises(Exception, match="Missing \\[UNK\\] token"):
        ref.encode("b")
    with pytest.raises(EncodeError, match="Missing \\[UNK\\] token"):
        ours.tokenize("b")


def test_from_config():
    config = {"type": "WordLevel", "vocab": VOCAB, "unk_token": "<unk>"}
    check_words(reference_from_json(config), from_config(config), ["hello", "nope"])
    untyped = {"vocab": VOCAB, "unk_token": "<unk>"}
    assert isinstance(from_config(untyped), WordLevel)
    for missing in ("vocab", "unk_token"):
        broken = dict(config)
        del broken[missing]
        with pytest.raises(Exception):  # noqa: B017 - tokenizers raises a plain Exception
            reference_from_json(broken)
        with pytest.raises(FormatError, match=missing):
            from_config(broken)


def test_protocol_accessors():
    ours = WordLevel({"a": 0, "b": 1, "c": 1}, "a")
    assert ours.vocab_size() == 3 and ours.id_to_token(1) == "c" and ours.token_to_id("b") == 1
    assert ours.get_vocab() == {"a": 0, "b": 1, "c": 1}


def test_real_vocabulary():
    full, config = real_model("wordlevel-en")
    check_words(reference(full.model), from_config(config), real_words(full, corpus_texts(8000)))
