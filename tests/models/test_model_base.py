"""`ModelBase`'s defaults (polytok/models/base.py), held to the reference engines.

- ``tokenize_all`` / ``tokenize_each``: the ids of each word, from HF tokenizers 0.23.3
  live (a Tokenizer holding only the file's model, so ``encode(word)`` is
  ``Model::tokenize(word)``), on the words HF's own normalizer and pre-tokenizer make
  of the edge texts and a bench slice. Unigram and WordLevel use the defaults; BPE and
  WordPiece override both and are held to the same.
- ``token_value``: the id's vocabulary entry, checked on WordPiece against HF's
  ``Encoding.tokens`` (there an entry differs from the text it covers: ``##ing``
  covers ``ing``); and, for an id without one, the text it covers, on RWKV (which
  inherits the default) against llama-cpp-python 0.3.36 live, whose RWKV session
  gives ``-1`` for a byte no token starts with.
- ``caches``: the word cache a model fills is the one it hands out.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fixtures import bench_slice, edge_texts, fixture_path

import polytok
from polytok.models import REGISTRY
from polytok.models.base import ModelBase
from polytok.models.piece_lookup import PieceLookup
from polytok.models.plamo2 import PLaMo2
from polytok.models.rwkv import RWKV
from polytok.models.spm import SPM

from ._harness import reference_from_json

tokenizers = pytest.importorskip("tokenizers")

# (fixture, model type): the defaults first, then the overrides
FILES = [("albert-base-v2-tf5", "Unigram"), ("wordlevel-en", "WordLevel"),
         ("tortoise-tts", "BPE"), ("bert-base-uncased", "WordPiece")]


def _words(hf: tokenizers.Tokenizer, texts: list[str]) -> list[str]:
    """The words HF's own normalizer and pre-tokenizer make of `texts` (what reaches the model)."""
    words = []
    for text in texts:
        normalized = hf.normalizer.normalize_str(text) if hf.normalizer is not None else text
        if hf.pre_tokenizer is None:
            words.append(normalized)
        else:
            words += [w for w, _ in hf.pre_tokenizer.pre_tokenize_str(normalized)]
    return [w for w in words if w]


@pytest.fixture(scope="module", params=FILES, ids=[name for name, _ in FILES])
def case(request):
    name, kind = request.param
    path = fixture_path(name, "tokenizer.json")
    hf = tokenizers.Tokenizer.from_file(str(path))
    model = polytok.load(path).model
    assert type(model).__name__ == kind
    document = json.loads(Path(path).read_text(encoding="utf-8"))
    words = _words(hf, edge_texts() + bench_slice("multi", 20_000).splitlines())
    ref = reference_from_json(document["model"])
    expected = [e.ids for e in ref.encode_batch(words, add_special_tokens=False)]
    return model, words, expected


def test_tokenize_each_is_the_ids_of_each_word(case):
    model, words, expected = case
    assert len(words) > 3000
    got = model.tokenize_each(words)
    wrong = [(w, e, g) for w, e, g in zip(words, expected, got) if e != g]
    assert len(got) == len(words) and not wrong, wrong[:3]


def test_tokenize_all_is_the_ids_of_each_word_concatenated(case):
    model, words, expected = case
    assert model.tokenize_all(words) == [i for ids in expected for i in ids]
    # the same word again (cached by then) and no word at all
    assert model.tokenize_all(words[:5] * 2) == [i for ids in expected[:5] * 2 for i in ids]
    assert model.tokenize_all([]) == [] and model.tokenize_each([]) == []


def test_token_value_is_the_vocabulary_entry():
    path = fixture_path("bert-base-uncased", "tokenizer.json")
    hf = tokenizers.Tokenizer.from_file(str(path))
    model = polytok.load(path).model
    ref = reference_from_json(json.loads(Path(path).read_text(encoding="utf-8"))["model"])
    words = _words(hf, edge_texts())
    checked = 0
    for word in words:
        encoding = ref.encode(word, add_special_tokens=False)
        spans = model.tokenize_spans(word)
        assert [i for i, _, _ in spans] == encoding.ids, word
        # the base class's rule, run on this real model's tokens
        values = [ModelBase.token_value(model, i, word, a, b) for i, a, b in spans]
        assert values == encoding.tokens, word
        checked += sum(t.startswith("##") or t == "[UNK]" for t in encoding.tokens)
    assert checked > 100  # tokens whose entry is not the text they cover


# RWKV token texts as stored in the GGUF (escaped); ids 9-10 are one escaped byte each
RWKV_TOKENS = ["<s>", "\\n", "a", "b", "ab", "abc", "\\xc3", "é", " ", "\\x41", "\\t"]
RWKV_TEXTS = ["abd", "\u00c3x", "a\nb", "zA", "\u00e9 ab\tc", "dd"]


def _llama_cpp_rwkv(tmp_path: Path) -> dict[str, list[tuple[int, str | None]]]:
    """text -> [(id, llama.cpp's text of the id, or None for -1)] from a GGUF of `RWKV_TOKENS`."""
    gguf = pytest.importorskip("gguf")
    llama_cpp = pytest.importorskip("llama_cpp")
    path = tmp_path / "rwkv.gguf"
    writer = gguf.GGUFWriter(str(path), "rwkv6")
    writer.add_tokenizer_model("rwkv")
    writer.add_token_list(RWKV_TOKENS)
    writer.add_token_types([3] + [1] * (len(RWKV_TOKENS) - 1))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.close()
    llama_cpp.llama_backend_init()
    params = llama_cpp.llama_model_default_params()
    params.vocab_only = True
    model = llama_cpp.llama_model_load_from_file(str(path).encode(), params)
    assert model, f"llama.cpp could not load {path}"
    try:
        vocab = llama_cpp.llama_model_get_vocab(model)
        out = {}
        for text in RWKV_TEXTS:
            data = text.encode("utf-8")
            buf = (llama_cpp.llama_token * 64)()
            n = llama_cpp.llama_tokenize(vocab, data, len(data), buf, len(buf), False, False)
            out[text] = [(i, llama_cpp.llama_vocab_get_text(vocab, i).decode("utf-8") if i >= 0 else None)
                         for i in buf[:n]]
        return out
    finally:
        llama_cpp.llama_model_free(model)


def test_token_value_of_an_id_without_entry_is_the_covered_text(tmp_path):
    expected = _llama_cpp_rwkv(tmp_path)
    model = RWKV(RWKV_TOKENS)
    assert type(model).token_value is ModelBase.token_value
    unknown = 0
    for text, tokens in expected.items():
        spans = model.tokenize_spans(text)
        assert [i for i, _, _ in spans] == [i for i, _ in tokens], text
        values = [model.token_value(i, text, a, b) for i, a, b in spans]
        assert values == [found if found is not None else text[a:b] for (_, found), (_, a, b) in zip(tokens, spans)]
        unknown += sum(found is None for _, found in tokens)
    assert unknown >= 4


CACHED = [("tortoise-tts", "tokenizer.json"), ("bert-base-uncased", "tokenizer.json"),
          ("albert-base-v2-tf5", "tokenizer.json"), ("spm-botchan-bpe-1000", "spm.model"),
          ("spm-botchan-unigram-1000", "spm.model")]


@pytest.mark.parametrize("name, filename", CACHED, ids=[name for name, _ in CACHED])
def test_caches_hand_out_the_word_cache_the_model_fills(name, filename):
    model = polytok.load(fixture_path(name, filename)).model
    [cache] = model.caches()
    word = "\u2581hello" if filename == "spm.model" else "hello"
    assert word not in cache
    ids = model.tokenize(word)
    assert cache[word] == ids and cache.limit > 0 and model.caches() == [cache]


def test_caches_of_rwkv_and_of_a_model_without_one():
    model = RWKV(RWKV_TOKENS)
    model.tokenize("abab")
    [cache] = model.caches()
    assert cache["abab"] == model.tokenize("abab")
    assert polytok.load(fixture_path("wordlevel-en", "tokenizer.json")).model.caches() == []


def test_every_model_inherits_the_base():
    for cls in [*REGISTRY.values(), SPM, RWKV, PLaMo2, PieceLookup]:
        assert issubclass(cls, ModelBase), cls.__name__
