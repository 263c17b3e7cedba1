"""Ids going in (decode, decode_stream().step, id_to_token) and the vocabulary's two sizes, against the engines.

HF tokenizers 0.23.3 and tiktoken 0.14.0 are run live on the same ids: both read
an id through ``__index__`` (numpy integers and ``bool`` are taken; float,
``numpy.float64``, ``str``, ``numpy.bool_`` raise TypeError, a negative id
OverflowError). polytok takes the same ids, with the same results, and raises
`DecodeError` naming the position where they raise.

``len(tok)`` is HF's ``get_vocab_size(with_added_tokens=True)``; ``tok.n_vocab``
is tiktoken's ``Encoding.n_vocab`` (the largest id + 1), and for tokenizer.json
files the largest id of HF's ``get_vocab(with_added_tokens=True)`` + 1.
"""

from __future__ import annotations

import gzip

import numpy as np
import pytest
from fixtures import fixture_path

import polytok
from polytok.errors import DecodeError
from polytok.formats import BUILTIN

tokenizers = pytest.importorskip("tokenizers")
tiktoken = pytest.importorskip("tiktoken")

TAKEN = [np.int64(31373), np.int32(995), np.uint16(11), np.uint8(40), True, False, 50256]
REFUSED = [1.0, np.float64(3.0), "5", np.bool_(True), None, -1, np.int64(-2)]


@pytest.fixture(scope="module")
def gpt2() -> tuple[polytok.Tokenizer, object]:
    ref = tokenizers.Tokenizer.from_str(gzip.decompress(BUILTIN["gpt2"].read_bytes()).decode())
    return polytok.load("gpt2"), ref


@pytest.fixture(scope="module")
def ranks() -> tuple[polytok.Tokenizer, object]:
    from tiktoken.load import load_tiktoken_bpe

    from polytok.formats.tiktoken_known import KNOWN_RANKS

    path = fixture_path("whisper-gpt2-tiktoken", "gpt2.tiktoken")
    tok = polytok.load(path)
    known = KNOWN_RANKS[tok.facts.details["sha256"]]
    ref = tiktoken.Encoding(known.name, pat_str=known.pattern, mergeable_ranks=load_tiktoken_bpe(str(path)),
                            special_tokens=known.special_tokens)
    return tok, ref


def test_decode_takes_what_hf_takes(gpt2):
    tok, ref = gpt2
    assert tok.decode(TAKEN) == ref.decode(TAKEN, skip_special_tokens=False)
    assert tok.decode(np.array([31373, 995, 50256], dtype=np.int64)) == ref.decode([31373, 995, 50256],
                                                                                  skip_special_tokens=False)
    assert tok.decode(tuple(TAKEN)) == tok.decode(iter(TAKEN)) == tok.decode(TAKEN)
    for value in TAKEN:
        assert tok.id_to_token(value) == ref.id_to_token(value)


def test_decode_takes_what_tiktoken_takes(ranks):
    tok, ref = ranks
    assert tok.decode(TAKEN) == ref.decode(TAKEN)
    stream = tok.decode_stream()
    assert "".join(stream.step(i) for i in TAKEN) + stream.flush() == ref.decode(TAKEN)


@pytest.mark.parametrize("bad", REFUSED, ids=repr)
def test_decode_refuses_what_the_references_refuse_naming_the_position(gpt2, ranks, bad):
    for tok, ref in (gpt2, ranks):
        ids = [31373, 995, bad]
        with pytest.raises((TypeError, OverflowError)):
            ref.decode(ids)
        with pytest.raises(DecodeError, match="position 2: token ids must be"):
            tok.decode(ids)
        with pytest.raises(DecodeError, match="position 0: token ids must be"):
            tok.decode_stream().step(bad)


@pytest.mark.parametrize("bad", [1.0, "5", np.bool_(True), None], ids=repr)
def test_id_to_token_refuses_what_hf_refuses(gpt2, bad):
    tok, ref = gpt2
    with pytest.raises(TypeError):
        ref.id_to_token(bad)
    with pytest.raises(DecodeError, match="token ids must be integers"):
        tok.id_to_token(bad)


def test_decode_stream_takes_numpy_ids_as_hfs_stream_does(gpt2):
    from tokenizers.decoders import DecodeStream

    tok, ref = gpt2
    ids = [np.int64(i) for i in ref.encode("héllo wörld, 日本語 🙂 <|endoftext|>!").ids]
    ours, theirs = tok.decode_stream(), DecodeStream(skip_special_tokens=False)
    assert [ours.step(i) for i in ids] == [theirs.step(ref, i) or "" for i in ids]
    ours = tok.decode_stream()
    with pytest.raises(DecodeError, match="position 1: token ids must be non-negative"):
        ours.step([ids[0], -1])
    assert ours.step(ids[0]) == ref.decode([int(ids[0])])  # a refused step leaves the stream as it was


@pytest.mark.parametrize("name, filename", [("cl100k_base-tiktoken", "cl100k_base.tiktoken"),
                                            ("whisper-gpt2-tiktoken", "gpt2.tiktoken"),
                                            ("llama3-tiktoken", "tokenizer.model"),
                                            ("llama4-tiktoken", "tokenizer.model")])
def test_n_vocab_is_tiktokens(name, filename):
    from tiktoken.load import load_tiktoken_bpe

    from polytok.formats.tiktoken_known import KNOWN_RANKS

    path = fixture_path(name, filename)
    tok = polytok.load(path)
    known = KNOWN_RANKS[tok.facts.details["sha256"]]
    mergeable = load_tiktoken_bpe(str(path))
    ref = tiktoken.Encoding(known.name, pat_str=known.pattern, mergeable_ranks=mergeable,
                            special_tokens=known.special_tokens)
    assert tok.n_vocab == ref.n_vocab
    assert len(tok) == len(mergeable) + len(ref.special_tokens_set)  # distinct tokens, not ids
    if name == "cl100k_base-tiktoken":
        assert (len(tok), tok.n_vocab, tok.token_to_id("<|endofprompt|>")) == (100_261, 100_277, 100_276)


@pytest.mark.parametrize("name", ["gpt2", "bert-base-uncased", "llama3", "roberta-base", "whisper-tiny",
                                  "albert-base-v2-tf5"])
def test_len_and_n_vocab_of_tokenizer_json(name):
    path = fixture_path(name, "tokenizer.json")
    ref = tokenizers.Tokenizer.from_file(str(path))
    tok = polytok.load(path)
    assert len(tok) == ref.get_vocab_size(with_added_tokens=True)
    assert tok.n_vocab == max(ref.get_vocab(with_added_tokens=True).values()) + 1
