"""A Unigram read from a tokenizer.json ``model`` builds its piece-to-id lookups on first use:
until then `token_to_id` scans the pieces. Both answers must be those of the lookups built at
once (the class constructor), a repeated piece answering its last id as HF's vocab map does."""

from __future__ import annotations

import pickle

from polytok.models.unigram import Unigram

VOCAB = [["<unk>", 0.0], ["a", -1.0], ["b", -2.0], ["a", -3.0], ["ab", -0.5], ["<0x41>", -9.0]]
QUERIES = ["a", "b", "ab", "<unk>", "c", "", "<0x41>", "A"] * 4  # more than the scans before the build


def _read() -> Unigram:
    return Unigram.from_config({"type": "Unigram", "unk_id": 0, "vocab": VOCAB}, "model")


def _built() -> Unigram:
    return Unigram([(piece, score) for piece, score in VOCAB], unk_id=0)


def test_token_to_id_before_and_after_the_lookups_are_built() -> None:
    model, built = _read(), _built()
    assert [model.token_to_id(q) for q in QUERIES] == [built.token_to_id(q) for q in QUERIES]
    assert model.token_to_id("a") == 3


def test_get_vocab_and_encode_build_the_lookups() -> None:
    built = _built()
    assert _read().get_vocab() == built.get_vocab()
    model = _read()
    for word in ("ab", "aab", "xa", "bx", "xyz", ""):
        assert model.tokenize(word) == built.tokenize(word), word
    assert model.get_vocab() == built.get_vocab() and model.vocab_size() == built.vocab_size()


def test_byte_fallback_reads_byte_pieces() -> None:
    model = Unigram.from_config({"type": "Unigram", "unk_id": 0, "byte_fallback": True, "vocab": VOCAB}, "model")
    built = Unigram([(piece, score) for piece, score in VOCAB], unk_id=0, byte_fallback=True)
    assert model.tokenize("xA") == built.tokenize("xA")


def test_pickled_before_the_lookups_are_built() -> None:
    model = pickle.loads(pickle.dumps(_read()))
    built = _built()
    assert model.get_vocab() == built.get_vocab()
    assert [model.token_to_id(q) for q in QUERIES] == [built.token_to_id(q) for q in QUERIES]
    assert model.tokenize("aabx") == built.tokenize("aabx")
