"""Decode of hostile ids: out of range, wrong type, and byte tokens that are not UTF-8.

Each format follows its reference where the reference defines the behaviour (run live):
tokenizers skips ids it does not know (``id_to_token`` is None); sentencepiece, tiktoken
and mistral-common raise, and polytok raises `DecodeError` (its message names the id).
llama.cpp throws (``id_to_token.at``): polytok raises `DecodeError`. Where a reference
raises a non-polytok error for a negative id (tokenizers, tiktoken: OverflowError)
polytok raises `DecodeError`; mistral-common decodes -1 as "" and polytok refuses it
(pinned below). Invalid UTF-8 from byte tokens: each reference's own replacement.
"""

from __future__ import annotations

import pytest
from fixtures import fixture_path, gguf_vocab_path

import polytok
from polytok.errors import DecodeError

BAD_TYPES = ["a", 1.5, None]


def _hf(name):
    tokenizers = pytest.importorskip("tokenizers")
    path = fixture_path(name, "tokenizer.json")
    return tokenizers.Tokenizer.from_file(str(path)), polytok.load(path)


@pytest.mark.parametrize("name", ["gpt2", "bert-base-uncased", "llama2"])
def test_hf_unknown_ids_are_skipped_as_tokenizers_does(name):
    ref, ours = _hf(name)
    n = ref.get_vocab_size(with_added_tokens=True)
    for ids in ([n + 5], [40, n + 1000, 41], [2**31]):
        assert ours.decode(ids) == ref.decode(ids)
    for bad in [-1, *BAD_TYPES]:
        with pytest.raises(DecodeError):
            ours.decode([bad])


@pytest.mark.parametrize("name", ["gpt2", "llama2"])
def test_hf_invalid_utf8_from_byte_tokens(name):
    ref, ours = _hf(name)
    byte_ids = [ref.token_to_id(t) for t in ("Ġ", "<0xE6>", "<0xFF>", "Ã", "¿") if ref.token_to_id(t) is not None]
    for ids in ([byte_ids[-1]], byte_ids, byte_ids[::-1], byte_ids + [40]):
        assert ours.decode(ids) == ref.decode(ids)


def test_sentencepiece_out_of_range_raises_as_sentencepiece_does():
    spm = pytest.importorskip("sentencepiece")
    path = fixture_path("spm-mistral-v1", "tokenizer.model")
    ref, ours = spm.SentencePieceProcessor(model_file=str(path)), polytok.load(path)
    for ids in ([ref.get_piece_size() + 3], [-1]):
        with pytest.raises(IndexError):
            ref.decode(ids)
        with pytest.raises(DecodeError):
            ours.decode(ids)
    # byte pieces <0xE6> <0xFF> <0x80>: sentencepiece replaces each bad sequence with U+FFFD
    byte_ids = [ref.piece_to_id(p) for p in ("<0xE6>", "<0xFF>", "<0x80>", "<0xE6>", "<0x97>")]
    for ids in (byte_ids, byte_ids[:1], byte_ids[3:], [ref.piece_to_id("▁a")] + byte_ids):
        assert ours.decode(ids) == ref.decode(ids)


def test_tiktoken_out_of_range_and_invalid_utf8():
    tiktoken = pytest.importorskip("tiktoken")
    from tiktoken.load import load_tiktoken_bpe

    path = fixture_path("whisper-gpt2-tiktoken", "gpt2.tiktoken")
    ranks = load_tiktoken_bpe(str(path))
    ref = tiktoken.Encoding("gpt2", pat_str=r"\w+|\s+|.", mergeable_ranks=ranks,
                            special_tokens={"<|endoftext|>": 50256})
    ours = polytok.load(path)
    with pytest.raises(KeyError):
        ref.decode([50300])
    for bad in ([50300], [-1], *[[b] for b in BAD_TYPES]):
        with pytest.raises(DecodeError):
            ours.decode(bad)
    bytes_ids = [ranks[bytes([b])] for b in (0xE6, 0xFF, 0x80, 0xE6, 0x97)]
    for ids in (bytes_ids, bytes_ids[:2], [ranks[b"hi"]] + bytes_ids):
        assert ours.decode(ids) == ref.decode(ids)


def test_tekken_out_of_range_and_negative():
    tekken = pytest.importorskip("mistral_common.tokens.tokenizers.tekken")
    path = fixture_path("tekken-240911", "tekken.json")
    ref, ours = tekken.Tekkenizer.from_file(str(path)), polytok.load(path)
    with pytest.raises(KeyError):
        ref.decode([ref.n_words + 5])
    with pytest.raises(DecodeError):
        ours.decode([ref.n_words + 5])
    assert ref.decode([-1]) == ""  # mistral-common: -1 falls in its special range
    with pytest.raises(DecodeError):  # polytok: a clear error instead (kept on purpose)
        ours.decode([-1])
    bytes_ids = [ref.num_special_tokens + b for b in (0xE6, 0xFF, 0x80)]
    for ids in (bytes_ids, bytes_ids[:1], [ref.num_special_tokens + 0x61] + bytes_ids):
        assert ours.decode(ids) == ref.decode(ids)


def test_rwkv_invalid_utf8_divergence_is_pinned():
    """Known divergence (formats/rwkv_vocab.py docstring): rwkv's decode gives one U+FFFD for the
    whole output; polytok replaces each bad sequence of rwkv's own decodeBytes, as the other engines do."""
    rwkv_tokenizer = pytest.importorskip("rwkv.rwkv_tokenizer")
    path = fixture_path("rwkv-world-vocab", "rwkv_vocab_v20230424.txt")
    ref, ours = rwkv_tokenizer.TRIE_TOKENIZER(str(path)), polytok.load(path)
    byte_ids = [0xE6 + 1, 0xFF + 1, 0x61 + 1]  # ids 1..256 are the single bytes
    for ids in (byte_ids, byte_ids[1:2], [ref.encode("hi")[0]] + byte_ids[:1]):
        assert ref.decode(ids) == "\ufffd"
        assert ours.decode(ids) == ref.decodeBytes(ids).decode("utf-8", "replace")
    assert ours.decode(ref.encode("héllo")) == ref.decode(ref.encode("héllo"))
    for bad in ([70000], [-1], *[[b] for b in BAD_TYPES]):
        with pytest.raises(DecodeError):
            ours.decode(bad)


@pytest.mark.parametrize("name", ["llama-spm", "gpt-2", "bert-bge"])
def test_gguf_out_of_range_and_wrong_type_raise(name):
    ours = polytok.load(gguf_vocab_path(name))
    for bad in ([len(ours)], [-1], [2**40], *[[b] for b in BAD_TYPES]):
        with pytest.raises(DecodeError):
            ours.decode(bad)
