"""`Tokenizer.vocab_bytes`, `special_token_ids` and the stop ids against the live reference engines.

One fixture of each format (tests/fixtures.py): byte-level BPE, SentencePiece-style BPE with
byte fallback and Unigram tokenizer.json files, a WordPiece tokenizer.json, GGUF vocabularies,
sentencepiece ``.model`` files (BPE with byte fallback, Unigram), a tiktoken rank file and a
tekken.json. For each, from the reference engine alone:

- the reference's ids of a set of texts, each id's bytes as the reference gives them (tiktoken
  ``decode_single_token_bytes``, llama.cpp ``token_to_piece(id, lstrip=0, special=true)``,
  sentencepiece ``id_to_piece`` with ``▁`` as a space and a byte piece its byte, mistral-common
  ``id_to_byte_piece``, HF's ``ByteLevel`` table or ``▁``/``<0xHH>`` of its Metaspace and
  ByteFallback decoders) must be `vocab_bytes`' entries;
- their join must be the reference's decode of the ids, after the one space a format adds in
  front of a text (sentencepiece's dummy prefix, HF Metaspace/Strip, WordPiece), which
  `adds_prefix_space` must report;
- the control ids (HF added tokens with ``special``, llama.cpp CONTROL/UNKNOWN attributes,
  sentencepiece ``is_control``/``is_unknown``, tiktoken's special tokens, tekken's
  ``num_special_tokens``) and the stop ids (``llama_vocab_is_eog`` over every id, the EOS of
  sentencepiece / mistral-common / transformers, tiktoken's ``eot_token``).

`CASES` and `Reference` are shared with tests/test_vocab_export_engines.py.
"""

from __future__ import annotations

import ctypes
import functools
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from fixtures import GGUF_VOCAB_NAMES, HF_JSON_FIXTURES, fixture_path, gguf_vocab_path

import polytok
from polytok.vocab_bytes import adds_prefix_space, generation_config_eos, stop_token_ids

TEXTS = ["Hello world", "The quick brown fox jumps over the lazy dog.", "numbers 12345 and 3.14159",
         "naïve café déjà vu", "日本語のテキスト", "emoji 🎉 party", "tabs\tand  double  spaces",
         "end of line\nnext line", "<|endoftext|> and </s> as text", "a simple sentence of words",
         "rare 𝔘𝔫𝔦 𠀀 glyphs",  # byte-fallback pieces of a character split over several tokens
         "we are here at the end"]
_CLEANED = re.compile(r"[.,!?']")  # what llama.cpp's clean_spaces rewrites in a decode (`Reference.clean_spaces`)
_BYTE_PIECE = re.compile(r"<0x([0-9A-Fa-f]{2})>\Z")


@dataclass
class Reference:
    """What a reference engine says about one fixture (module notes)."""

    tok: polytok.Tokenizer
    ids: Callable[[str], list[int]]
    decode: Callable[[list[int]], bytes]
    piece: Callable[[int], bytes] | None  # None: the format has no per-token rule to compare (WordPiece)
    special: frozenset[int]
    stop: frozenset[int] | None
    prefix_space: bool
    #: the decode deletes spaces before punctuation across tokens (llama.cpp's clean_spaces, a WPM
    #: vocabulary): no per-token bytes can say so, and texts with such punctuation are not compared
    clean_spaces: bool = False


@functools.cache
def _byte_decoder() -> dict[str, int]:
    from transformers.convert_slow_tokenizer import bytes_to_unicode

    return {c: b for b, c in bytes_to_unicode().items()}


def _hf(name: str, piece_rule: str | None, prefix: bool, folder: bool = False) -> Reference:
    tokenizers = pytest.importorskip("tokenizers")
    path = fixture_path(name, "tokenizer.json")
    ref = tokenizers.Tokenizer.from_file(str(path))
    special = frozenset(i for i, t in ref.get_added_tokens_decoder().items() if t.special)
    stop = None
    if folder:
        transformers = pytest.importorskip("transformers")
        fixture_path(name, "tokenizer_config.json")
        stop = frozenset({transformers.AutoTokenizer.from_pretrained(str(path.parent)).eos_token_id})

    def piece(id_: int) -> bytes:
        text = ref.id_to_token(id_)
        if piece_rule == "byte_level":
            table = _byte_decoder()
            return bytes(table[c] for c in text) if all(c in table for c in text) else text.encode()
        byte = _BYTE_PIECE.match(text)
        if byte is not None and piece_rule == "byte_fallback":
            return bytes([int(byte.group(1), 16)])
        return text.replace("\u2581", " ").encode()

    return Reference(polytok.load(path.parent if folder else path),
                     lambda text: ref.encode(text, add_special_tokens=False).ids,
                     lambda ids: ref.decode(ids, skip_special_tokens=False).encode(),
                     piece if piece_rule is not None else None, special, stop, prefix)


@functools.cache
def _llama_vocab(path: str) -> Any:
    llama_cpp = pytest.importorskip("llama_cpp")
    llama_cpp.llama_backend_init()
    params = llama_cpp.llama_model_default_params()
    params.vocab_only = True
    model = llama_cpp.llama_model_load_from_file(path.encode(), params)
    assert model, f"llama.cpp could not load {path}"
    return model  # kept for the session: its vocab is read by every case of the file


def _gguf(name: str, prefix: bool, clean_spaces: bool = False) -> Reference:
    llama_cpp = pytest.importorskip("llama_cpp")
    path = gguf_vocab_path(name)
    vocab = llama_cpp.llama_model_get_vocab(_llama_vocab(str(path)))
    n = int(llama_cpp.llama_vocab_n_tokens(vocab))
    hidden = llama_cpp.LLAMA_TOKEN_ATTR_CONTROL | llama_cpp.LLAMA_TOKEN_ATTR_UNKNOWN
    buf = ctypes.create_string_buffer(1 << 16)

    def ids(text: str) -> list[int]:
        data = text.encode()
        out = (llama_cpp.llama_token * (4 * len(data) + 8))()
        count = llama_cpp.llama_tokenize(vocab, data, len(data), out, len(out), False, False)
        assert count >= 0, (name, text)
        return list(out[:count])

    def decode(ids_: list[int]) -> bytes:
        arr = (llama_cpp.llama_token * len(ids_))(*ids_)
        size = llama_cpp.llama_detokenize(vocab, arr, len(ids_), buf, len(buf), False, True)
        assert 0 <= size <= len(buf)
        return buf.raw[:size]

    def piece(id_: int) -> bytes:
        size = llama_cpp.llama_token_to_piece(vocab, id_, buf, len(buf), 0, True)
        assert 0 <= size <= len(buf)
        return buf.raw[:size]

    special = frozenset(i for i in range(n) if llama_cpp.llama_vocab_get_attr(vocab, i) & hidden)
    stop = frozenset(i for i in range(n) if llama_cpp.llama_vocab_is_eog(vocab, i))
    return Reference(polytok.load(path), ids, decode, piece, special, stop, prefix, clean_spaces)


def _sentencepiece(name: str, filename: str) -> Reference:
    spm = pytest.importorskip("sentencepiece")
    path = fixture_path(name, filename)
    sp = spm.SentencePieceProcessor(model_file=str(path))

    def piece(id_: int) -> bytes:
        text = sp.id_to_piece(id_)
        if sp.is_byte(id_):
            return bytes([int(text[3:5], 16)])
        if sp.is_control(id_) or sp.is_unknown(id_):
            return text.encode()
        return text.replace("\u2581", " ").encode()

    special = frozenset(i for i in range(sp.get_piece_size()) if sp.is_control(i) or sp.is_unknown(i))
    return Reference(polytok.load(path), sp.encode, lambda ids: sp.decode(ids, out_type=bytes), piece, special,
                     frozenset({sp.eos_id()}), True)


def _tiktoken(name: str, filename: str) -> Reference:
    tiktoken = pytest.importorskip("tiktoken")
    from tiktoken.load import load_tiktoken_bpe

    from polytok.formats.tiktoken_known import KNOWN_RANKS

    path = fixture_path(name, filename)
    tok = polytok.load(path)
    known = KNOWN_RANKS[tok.facts.details["sha256"]]
    ref = tiktoken.Encoding(known.name, pat_str=known.pattern, mergeable_ranks=load_tiktoken_bpe(str(path)),
                            special_tokens=known.special_tokens)
    return Reference(tok, ref.encode_ordinary, ref.decode_bytes, ref.decode_single_token_bytes,
                     frozenset(map(ref.encode_single_token, ref.special_tokens_set)), frozenset({ref.eot_token}), False)


def _tekken(name: str) -> Reference:
    pytest.importorskip("mistral_common")
    from mistral_common.tokens.tokenizers.base import SpecialTokenPolicy
    from mistral_common.tokens.tokenizers.tekken import Tekkenizer

    path = fixture_path(name, "tekken.json")
    ref = Tekkenizer.from_file(path)
    return Reference(polytok.load(path), lambda text: ref.encode(text, bos=False, eos=False),
                     lambda ids: ref.decode(ids, SpecialTokenPolicy.KEEP).encode(),
                     lambda id_: bytes(ref.id_to_byte_piece(id_, SpecialTokenPolicy.KEEP)),
                     frozenset(range(ref.num_special_tokens)), frozenset({ref.eos_id}), False)


CASES: dict[str, Callable[[], Reference]] = {
    "json-byte-level-gpt2": lambda: _hf("gpt2", "byte_level", False),
    "json-byte-level-qwen3-folder": lambda: _hf("qwen3", "byte_level", False, folder=True),
    "json-bpe-byte-fallback-llama2": lambda: _hf("llama2", "byte_fallback", True),
    "json-unigram-albert": lambda: _hf("albert-base-v2-tf5", "metaspace", True),
    "json-wordpiece-bert": lambda: _hf("bert-base-uncased", None, True),
    "gguf-llama-spm": lambda: _gguf("llama-spm", True),
    "gguf-llama-bpe": lambda: _gguf("llama-bpe", False),
    "gguf-qwen2": lambda: _gguf("qwen2", False),
    "gguf-bert-bge": lambda: _gguf("bert-bge", False, clean_spaces=True),
    "model-bpe-byte-fallback-mistral-v3": lambda: _sentencepiece("spm-mistral-v3", "tokenizer.model"),
    "model-unigram-botchan": lambda: _sentencepiece("spm-botchan-unigram-1000", "spm.model"),
    "tiktoken-cl100k": lambda: _tiktoken("cl100k_base-tiktoken", "cl100k_base.tiktoken"),
    "tekken-240911": lambda: _tekken("tekken-240911"),
}


@functools.cache
def reference(case: str) -> Reference:
    return CASES[case]()


@functools.cache
def table_of(case: str) -> list[bytes | None]:
    return reference(case).tok.vocab_bytes()


def usable_texts(ref: Reference) -> list[tuple[str, list[int]]]:
    """The texts whose reference ids hold no control token (no unknown token): those a model can write."""
    out = []
    for text in TEXTS:
        ids = ref.ids(text)
        if ids and ref.special.isdisjoint(ids):
            out.append((text, ids))
    return out


@pytest.mark.parametrize("case", sorted(CASES))
def test_joined_bytes_are_the_reference_decode(case: str) -> None:
    ref, table = reference(case), table_of(case)
    assert len(table) == ref.tok.n_vocab
    assert adds_prefix_space(ref.tok) is ref.prefix_space
    texts = usable_texts(ref)
    assert len(texts) >= 3, case
    for text, ids in texts:
        if ref.piece is not None:
            assert [table[i] for i in ids] == [ref.piece(i) for i in ids], (case, text)
        joined = b"".join(table[i] or b"" for i in ids)
        if ref.clean_spaces and _CLEANED.search(text):
            continue
        assert joined == (b" " if ref.prefix_space else b"") + ref.decode(ids), (case, text, joined)


@pytest.mark.parametrize("case", sorted(CASES))
def test_special_ids_are_the_reference_control_ids(case: str) -> None:
    ref = reference(case)
    assert ref.tok.special_token_ids == ref.special
    table = table_of(case)
    assert all(table[i] is not None for i in ref.special)


@pytest.mark.parametrize("case", sorted(c for c in CASES if not c.startswith("json-") or c.endswith("-folder")))
def test_stop_ids_are_the_reference_end_of_generation(case: str) -> None:
    ref = reference(case)
    assert ref.stop is not None
    assert set(stop_token_ids(ref.tok)) == ref.stop


def test_holes_are_none_where_the_reference_has_no_token() -> None:
    ref = reference("tiktoken-cl100k")
    table = table_of("tiktoken-cl100k")
    holes = [i for i, data in enumerate(table) if data is None]
    assert ref.piece is not None
    missing = []
    for i in range(len(table)):
        try:
            ref.piece(i)
        except KeyError:
            missing.append(i)
    assert holes == missing and len(holes) == 16


def test_generation_config_eos_list_is_added(tmp_path: Path) -> None:
    """A model folder's generation_config.json ``eos_token_id`` list, as transformers' GenerationConfig reads it."""
    transformers = pytest.importorskip("transformers")
    for filename in ("tokenizer.json", "tokenizer_config.json"):
        (tmp_path / filename).write_bytes(fixture_path("qwen3", filename).read_bytes())
    (tmp_path / "generation_config.json").write_text(json.dumps({"eos_token_id": [151645, 151643]}))
    tok = polytok.load(tmp_path)
    expected = transformers.GenerationConfig.from_pretrained(str(tmp_path)).eos_token_id
    assert generation_config_eos(tmp_path) == expected
    assert set(stop_token_ids(tok)) == set(tok.eog_ids) | set(expected)


@pytest.mark.parametrize("name", GGUF_VOCAB_NAMES)
def test_gguf_control_and_stop_ids_of_every_vocab(name: str) -> None:
    """Every ggml-vocab GGUF of the sdist: CONTROL/UNKNOWN attributes and ``llama_vocab_is_eog``, id by id."""
    llama_cpp = pytest.importorskip("llama_cpp")
    path = gguf_vocab_path(name)
    vocab = llama_cpp.llama_model_get_vocab(_llama_vocab(str(path)))
    n = int(llama_cpp.llama_vocab_n_tokens(vocab))
    hidden = llama_cpp.LLAMA_TOKEN_ATTR_CONTROL | llama_cpp.LLAMA_TOKEN_ATTR_UNKNOWN
    tok = polytok.load(path)
    assert tok.special_token_ids == {i for i in range(n) if llama_cpp.llama_vocab_get_attr(vocab, i) & hidden}
    assert set(stop_token_ids(tok)) == {i for i in range(n) if llama_cpp.llama_vocab_is_eog(vocab, i)}


@pytest.mark.parametrize("name", sorted(HF_JSON_FIXTURES))
def test_control_ids_of_every_tokenizer_json(name: str) -> None:
    """Every tokenizer.json fixture: HF's added tokens with ``special``."""
    tokenizers = pytest.importorskip("tokenizers")
    path = fixture_path(name, HF_JSON_FIXTURES[name])
    ref = tokenizers.Tokenizer.from_file(str(path))
    expected = {i for i, t in ref.get_added_tokens_decoder().items() if t.special}
    assert polytok.load(path).special_token_ids == expected


SENTENCEPIECE = [("spm-botchan-bpe-1000", "spm.model"), ("spm-botchan-unigram-1000", "spm.model"),
                 ("spm-kyoto-ja-unigram-8000", "spm.model"), ("spm-bpemb-en-100k", "spm.model"),
                 ("spm-mistral-v1", "tokenizer.model"), ("spm-mistral-v2", "tokenizer.model"),
                 ("spm-mistral-v3", "tokenizer.model"), ("spm-mistral-v7", "tokenizer.model")]


@pytest.mark.parametrize("name,filename", SENTENCEPIECE, ids=[n for n, _ in SENTENCEPIECE])
def test_control_and_stop_ids_of_every_model_file(name: str, filename: str) -> None:
    """Every .model fixture: ``is_control`` or ``is_unknown``; the stop id is ``eos_id``."""
    ref = _sentencepiece(name, filename)
    assert ref.tok.special_token_ids == ref.special
    assert set(stop_token_ids(ref.tok)) == ref.stop
