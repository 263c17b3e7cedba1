"""`Tokenizer.token_bytes(id)` on every fixture of every format, id for id, against the live engines.

Expected bytes come from the reference engines, run here, never from polytok:

- tiktoken 0.14.0: ``Encoding.decode_single_token_bytes(id)``;
- mistral-common 1.13.1: ``Tekkenizer.id_to_byte_piece(id, SpecialTokenPolicy.KEEP)``;
- llama.cpp (llama-cpp-python 0.3.36): ``llama_token_to_piece(vocab, id, buf, n, lstrip=0,
  special=True)`` on every ``ggml-vocab-*.gguf`` of the sdist;
- rwkv 0.8.32: ``TRIE_TOKENIZER.idx2token[id]``;
- sentencepiece 0.2.3 (no per-token call): ``id_to_piece(id)`` with ``▁`` as a space, a byte
  piece (``is_byte``) as its byte, a control or unknown piece as it is (llama.cpp's rendering
  of the same vocabulary); and what ``decode([ctx, id], out_type=bytes)`` adds after
  ``decode([ctx])`` must be those bytes (U+FFFD for a lone byte of a character);
- HF tokenizers 0.23.3 (no per-token call): with a ``ByteLevel`` decoder, the piece
  (``id_to_token``) through transformers' ``bytes_to_unicode`` table (a piece with a character
  outside it: its UTF-8), and ``decode([id])`` must be those bytes read as UTF-8; otherwise
  what ``decode([a, id, b])`` writes between what ``decode([a])`` and ``decode([a, b])`` give,
  a ``<0xHH>`` piece of a ``ByteFallback`` chain being that byte.

Every id of a vocabulary up to `SAMPLE` ids; of a larger one the first and last 2,000
(byte tokens and specials sit there), every added token, and an even spread of the rest.
An id no token has raises `DecodeError` naming it, where the reference has no token either.
"""

from __future__ import annotations

import ctypes
import functools
import json
import re
import shutil
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import pytest
from fixtures import GGUF_VOCAB_NAMES, HF_JSON_FIXTURES, fixture_path, gguf_vocab_path

import polytok
from polytok.errors import DecodeError

MAX_REPORTS = 8
SAMPLE = 40_000
_BYTE_PIECE = re.compile(r"<0x([0-9A-Fa-f]{2}|\+[0-9A-Fa-f])>\Z")  # HF ByteFallback: u8::from_str_radix


def _check(tok: polytok.Tokenizer, ids: Iterable[int], expected: Callable[[int], bytes | None], label: str) -> None:
    """Compare every id; `expected` gives None where the reference has no token."""
    wrong: list[str] = []
    for id_ in ids:
        want = expected(id_)
        try:
            got: bytes | None = tok.token_bytes(id_)
        except DecodeError as exc:
            assert str(id_) in str(exc), (label, id_, str(exc))
            got = None
        if got != want and len(wrong) < MAX_REPORTS:
            wrong.append(f"id {id_} ({tok.id_to_token(id_)!r}): expected {want!r}, got {got!r}")
    assert not wrong, f"{label}:\n" + "\n".join(wrong)


def _sample(ids: list[int], keep: Iterable[int] = ()) -> list[int]:
    if len(ids) <= SAMPLE:
        return ids
    return sorted(set(ids[:2000]) | set(ids[-2000:]) | set(ids[::len(ids) // SAMPLE + 1]) | set(keep))


def test_not_an_integer_is_a_decode_error() -> None:
    tok = polytok.load(fixture_path("whisper-gpt2-tiktoken", "gpt2.tiktoken"))
    for bad in (1.0, "1", None):
        with pytest.raises(DecodeError):
            tok.token_bytes(bad)  # type: ignore[arg-type]
    assert tok.token_bytes(True) == tok.token_bytes(1)  # any integer type, as decode takes ids


# -- tiktoken ------------------------------------------------------------------------------------

TIKTOKEN = [("cl100k_base-tiktoken", "cl100k_base.tiktoken"), ("whisper-gpt2-tiktoken", "gpt2.tiktoken"),
            ("whisper-multilingual-tiktoken", "multilingual.tiktoken"), ("llama3-tiktoken", "tokenizer.model"),
            ("llama4-tiktoken", "tokenizer.model")]


@pytest.mark.parametrize("name,filename", TIKTOKEN, ids=[n for n, _ in TIKTOKEN])
def test_tiktoken(name: str, filename: str) -> None:
    tiktoken = pytest.importorskip("tiktoken")
    from tiktoken.load import load_tiktoken_bpe

    from polytok.formats.tiktoken_known import KNOWN_RANKS

    path = fixture_path(name, filename)
    tok = polytok.load(path)
    known = KNOWN_RANKS[tok.facts.details["sha256"]]  # the pattern and specials tiktoken's own tables give
    ref = tiktoken.Encoding(known.name, pat_str=known.pattern, mergeable_ranks=load_tiktoken_bpe(str(path)),
                            special_tokens=known.special_tokens)

    def expected(id_: int) -> bytes | None:
        try:
            return bytes(ref.decode_single_token_bytes(id_))
        except KeyError:
            return None

    specials = map(ref.encode_single_token, ref.special_tokens_set)
    _check(tok, _sample(list(range(ref.n_vocab + 2)), specials), expected, name)


# -- tekken --------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["tekken-240718", "tekken-240911"])
def test_tekken(name: str) -> None:
    pytest.importorskip("mistral_common")
    from mistral_common.tokens.tokenizers.base import SpecialTokenPolicy
    from mistral_common.tokens.tokenizers.tekken import Tekkenizer

    path = fixture_path(name, "tekken.json")
    tok, ref = polytok.load(path), Tekkenizer.from_file(path)

    def expected(id_: int) -> bytes | None:
        return bytes(ref.id_to_byte_piece(id_, SpecialTokenPolicy.KEEP)) if id_ < ref.n_words else None

    _check(tok, _sample(list(range(ref.n_words + 2)), range(ref.num_special_tokens)), expected, name)


# -- llama.cpp -----------------------------------------------------------------------------------


@pytest.mark.parametrize("name", GGUF_VOCAB_NAMES)
def test_gguf(name: str) -> None:
    llama_cpp = pytest.importorskip("llama_cpp")
    path = gguf_vocab_path(name)
    tok = polytok.load(path)
    llama_cpp.llama_backend_init()
    params = llama_cpp.llama_model_default_params()
    params.vocab_only = True
    model = llama_cpp.llama_model_load_from_file(str(path).encode(), params)
    assert model, f"llama.cpp could not load {path}"
    try:
        vocab = llama_cpp.llama_model_get_vocab(model)
        n = int(llama_cpp.llama_vocab_n_tokens(vocab))
        buf = ctypes.create_string_buffer(1024)

        def expected(id_: int) -> bytes | None:
            if id_ >= n:
                return None  # llama.cpp: id_to_token.at(id) throws
            size = llama_cpp.llama_token_to_piece(vocab, id_, buf, len(buf), 0, True)
            assert 0 <= size <= len(buf), (id_, size)
            return buf.raw[:size]

        _check(tok, _sample(list(range(n + 2))), expected, name)
    finally:
        llama_cpp.llama_model_free(model)


# -- rwkv ----------------------------------------------------------------------------------------


def test_rwkv_world() -> None:
    rwkv_tokenizer = pytest.importorskip("rwkv.rwkv_tokenizer")
    path = fixture_path("rwkv-world-vocab", "rwkv_vocab_v20230424.txt")
    tok, ref = polytok.load(path), rwkv_tokenizer.TRIE_TOKENIZER(str(path))
    top = max(ref.idx2token)
    _check(tok, _sample(list(range(top + 3))), lambda i: ref.idx2token.get(i), "rwkv")


# -- sentencepiece -------------------------------------------------------------------------------

SENTENCEPIECE = [("spm-botchan-bpe-1000", "spm.model"), ("spm-botchan-unigram-1000", "spm.model"),
                 ("spm-kyoto-ja-unigram-8000", "spm.model"), ("spm-bpemb-en-100k", "spm.model"),
                 ("spm-mistral-v1", "tokenizer.model"), ("spm-mistral-v2", "tokenizer.model"),
                 ("spm-mistral-v3", "tokenizer.model"), ("spm-mistral-v7", "tokenizer.model")]


@pytest.mark.parametrize("name,filename", SENTENCEPIECE, ids=[n for n, _ in SENTENCEPIECE])
def test_sentencepiece(name: str, filename: str) -> None:
    spm = pytest.importorskip("sentencepiece")
    path = fixture_path(name, filename)
    tok, sp = polytok.load(path), spm.SentencePieceProcessor(model_file=str(path))
    n = sp.get_piece_size()

    def expected(id_: int) -> bytes | None:
        if id_ >= n:
            return None
        piece = sp.id_to_piece(id_)
        if sp.is_byte(id_):
            return bytes([int(piece[3:5], 16)])
        if sp.is_control(id_) or sp.is_unknown(id_):
            return piece.encode("utf-8")
        return piece.replace("\u2581", " ").encode("utf-8")

    sample = _sample(list(range(n)))
    _check(tok, sample + [n, n + 1], expected, name)
    # the rule above, held to sentencepiece's decode: what an id adds after visible text
    ctx = next(i for i in range(n) if not (sp.is_byte(i) or sp.is_control(i) or sp.is_unknown(i))
               and sp.decode([i], out_type=bytes) and sp.decode([i], out_type=bytes).isalpha())
    head = sp.decode([ctx], out_type=bytes)
    wrong = []
    for id_ in sample:
        if sp.is_control(id_) or sp.is_unknown(id_):
            continue
        added = sp.decode([ctx, id_], out_type=bytes)
        assert added.startswith(head), (id_, added, head)
        want = tok.token_bytes(id_)
        if added[len(head):] != want.decode("utf-8", "replace").encode("utf-8") and len(wrong) < MAX_REPORTS:
            wrong.append((id_, sp.id_to_piece(id_), added[len(head):], want))
    assert not wrong, wrong


# -- HF tokenizers -------------------------------------------------------------------------------


def _decoder_types(node: object) -> set[str]:
    if isinstance(node, dict):
        found = {node["type"]} if isinstance(node.get("type"), str) else set()
        return found.union(*(_decoder_types(v) for v in node.values()))
    if isinstance(node, list):
        return set().union(*(_decoder_types(v) for v in node))
    return set()


@functools.cache
def _byte_decoder() -> dict[str, int]:
    from transformers.convert_slow_tokenizer import bytes_to_unicode

    return {c: b for b, c in bytes_to_unicode().items()}


def _plain_pair(id_to_token: Callable[[int], str | None], ids: list[int]) -> tuple[int, int]:
    """Two ids of different pieces of three letters or more, no word-start mark (the context of a middle token)."""
    pieces = (id_to_token(i) or "" for i in ids)
    picked = [i for i, p in zip(ids, pieces) if p.isalpha() and len(p) > 2 and not p.startswith("\u0120")][:2]
    assert len(picked) == 2
    return picked[0], picked[1]


def _hf_expected(decode: Callable[[list[int]], str], id_to_token: Callable[[int], str | None],
                 decoder: object, ids: list[int]) -> Callable[[int], bytes | None]:
    """HF's bytes of an id (see the module notes); `decode` is the reference's, special tokens kept."""
    types = _decoder_types(decoder)
    if "ByteLevel" in types:
        table = _byte_decoder()

        def byte_level(id_: int) -> bytes | None:
            piece = id_to_token(id_)
            if piece is None:
                return None
            data = bytes(table[c] for c in piece) if all(c in table for c in piece) else piece.encode("utf-8")
            assert decode([id_]) == data.decode("utf-8", "replace"), id_
            return data

        return byte_level
    a, b = _plain_pair(id_to_token, ids)
    head = decode([a])
    tail = decode([a, b])[len(head):]

    def between(id_: int) -> bytes | None:
        piece = id_to_token(id_)
        if piece is None:
            return None
        whole = decode([a, id_, b])
        assert whole.startswith(head) and whole.endswith(tail), (id_, whole, head, tail)
        written = whole[len(head):len(whole) - len(tail)]
        byte = _BYTE_PIECE.match(piece)
        if "ByteFallback" in types and byte is not None:
            data = bytes([int(byte.group(1).lstrip("+"), 16)])
            assert written == data.decode("utf-8", "replace"), (id_, written)
            return data
        return written.encode("utf-8")

    return between


@pytest.mark.parametrize("name", sorted(HF_JSON_FIXTURES))
def test_hf_tokenizer_json(name: str) -> None:
    tokenizers = pytest.importorskip("tokenizers")
    path = fixture_path(name, HF_JSON_FIXTURES[name])
    tok = polytok.load(path)
    ref = tokenizers.Tokenizer.from_file(str(path))
    ids = sorted(set(ref.get_vocab(with_added_tokens=True).values()))
    expected = _hf_expected(lambda i: ref.decode(i, skip_special_tokens=False), ref.id_to_token,
                            json.loads(ref.to_str()).get("decoder"), ids)
    _check(tok, _sample(ids, ref.get_added_tokens_decoder()) + [ids[-1] + 1, ids[-1] + 1000], expected, name)


def _transformers_fast(tok: polytok.Tokenizer, ref: Any, name: str) -> None:
    ids = sorted(set(ref.get_vocab().values()))
    expected = _hf_expected(lambda i: ref.decode(i, skip_special_tokens=False),
                            ref.backend_tokenizer.id_to_token,
                            json.loads(ref.backend_tokenizer.to_str()).get("decoder"), ids)
    _check(tok, _sample(ids) + [ids[-1] + 1], expected, name)


@pytest.mark.parametrize("name", ["bert-base-cased-vocab", "bert-chinese-vocab"])
def test_wordpiece_vocab_file(name: str) -> None:
    """vocab.txt against transformers' BertTokenizerFast (its decode cleans up spaces, as polytok's)."""
    transformers = pytest.importorskip("transformers")
    path = fixture_path(name, "vocab.txt")
    _transformers_fast(polytok.load(path), transformers.BertTokenizerFast(str(path)), name)


def test_gpt2_vocab_files(tmp_path: Path) -> None:
    """vocab.json + merges.txt against transformers' GPT2TokenizerFast (the class defaults, no config)."""
    transformers = pytest.importorskip("transformers")
    for filename in ("vocab.json", "merges.txt"):
        shutil.copy(fixture_path("gpt2", filename), tmp_path / filename)
    ref = transformers.GPT2TokenizerFast(str(tmp_path / "vocab.json"), str(tmp_path / "merges.txt"))
    _transformers_fast(polytok.load(tmp_path / "vocab.json"), ref, "gpt2 vocab.json")
