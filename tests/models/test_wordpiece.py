"""WordPiece model vs tokenizers.models.WordPiece (HF tokenizers 0.23.3): greedy longest match, whole-word unk."""

from __future__ import annotations

import random

import pytest

from polytok.errors import EncodeError, FormatError
from polytok.models import WordPiece, from_config

from ._harness import (
    check_words,
    corpus_texts,
    edge_words,
    random_words,
    real_model,
    real_words,
    reference,
    reference_from_json,
)

tokenizers = pytest.importorskip("tokenizers")
HfWordPiece = tokenizers.models.WordPiece

VOCAB = {"[UNK]": 0, "un": 1, "##aff": 2, "##able": 3, "a": 4, "##a": 5, "aff": 6, "##b": 7, "ab": 8, "##ab": 9,
         "é": 10, "##日": 11, "日": 12}


def both(vocab, **options):
    return reference(HfWordPiece(vocab, **options)), WordPiece(vocab, **options)


def test_greedy_longest_match_and_whole_word_unk():
    ref, ours = both(VOCAB)
    check_words(ref, ours, ["unaffable", "unaff", "abab", "aba", "ab", "abx", "x", "日日", "é日", "aaa"])
    assert ours.tokenize_spans("unaffable") == [(1, 0, 2), (2, 2, 5), (3, 5, 9)]
    assert ours.tokenize_spans("abx") == [(0, 0, 3)]  # one failing position: the whole word is unk


def test_max_input_chars_per_word():
    for limit in (0, 3, 4, 100):
        ref, ours = both(VOCAB, max_input_chars_per_word=limit)
        check_words(ref, ours, ["abab", "aba", "ab", "a", "日日日日"])


def test_prefix_variants():
    vocab = {"[UNK]": 0, "a": 1, "b": 2, "@@b": 3, "ab": 4, "@@a": 5}
    for prefix in ("##", "@@", ""):
        check_words(*both(vocab, continuing_subword_prefix=prefix), ["ab", "abab", "ba", "bb", "aab"])


def test_missing_unk_token_raises_at_encode():
    ref, ours = both({"a": 0, "##b": 1}, unk_token="<unk>")
    assert ours.tokenize("ab") == [0, 1]
    with pytest.raises(Exception, match="Missing \\[UNK\\] token"):
        ref.encode("ax")
    with pytest.raises(EncodeError, match="Missing \\[UNK\\] token"):
        ours.tokenize("ax")


@pytest.mark.parametrize("seed", range(3))
def test_random_vocabularies(seed):
    rng = random.Random(seed)
    tokens = {"".join(rng.choice("abc") for _ in range(rng.randint(1, 4))) for _ in range(15)}
    tokens |= {"##" + t for t in list(tokens)[:10]}
    vocab = {t: i for i, t in enumerate(["[UNK]"] + sorted(tokens))}
    check_words(*both(vocab, max_input_chars_per_word=12), random_words(rng, "abc", 150, 15))


def test_protocol_accessors_and_edge_words():
    ref, ours = both(VOCAB)
    check_words(ref, ours, edge_words())
    assert ours.vocab_size() == len(VOCAB) and ours.token_to_id("##b") == 7 and ours.id_to_token(7) == "##b"
    assert ours.tokenize("") == []


@pytest.mark.parametrize("missing", ["unk_token", "continuing_subword_prefix", "max_input_chars_per_word", "vocab"])
def test_all_fields_are_required(missing):
    config = {"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##",
              "max_input_chars_per_word": 100, "vocab": VOCAB}
    check_words(reference_from_json(config), from_config(config), ["unaffable"])
    del config[missing]
    with pytest.raises(Exception):  # noqa: B017 - tokenizers raises a plain Exception
        reference_from_json(config)
    with pytest.raises(FormatError, match=missing):
        from_config(config)


def test_bad_field_types():
    config = {"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##",
              "max_input_chars_per_word": -1, "vocab": VOCAB}
    with pytest.raises(FormatError, match=r"model\.max_input_chars_per_word"):
        from_config(config)
    with pytest.raises(FormatError, match=r"model\.vocab\.x"):
        from_config(dict(config, max_input_chars_per_word=5, vocab={"x": "1"}))


@pytest.mark.parametrize("name", ["bert-base-uncased", "labse-cropped"])
def test_real_vocabularies(name):
    """bert-base-uncased is an untyped (old serialization) WordPiece model."""
    full, config = real_model(name)
    ours = from_config(config)
    assert isinstance(ours, WordPiece)
    check_words(reference(full.model), ours, real_words(full, corpus_texts(8000)))
