"""Random Unicode through every fixture tokenizer: no crash, and decode(encode(x)) equals the reference's round trip.

Hypothesis draws surrogates, controls, combining sequences and mixed scripts. For each
tokenizer the reference engine runs live on the same file: tokenizers (every
tokenizer.json fixture), transformers' BertTokenizerFast (vocab.txt), sentencepiece
(.model), tiktoken (gpt2.tiktoken with tiktoken's own r50k pattern), mistral-common
(tekken.json), rwkv (TRIE_TOKENIZER), and llama.cpp through llama-cpp-python with
``vocab_only=True`` (ggml-vocab GGUFs). Ids are compared too. A text the reference cannot
take (a lone surrogate cannot cross into Rust or C++) must make polytok return ids or raise
a polytok error, never anything else.

Examples per tokenizer: POLYTOK_MAX_EXAMPLES (default 8 here, so the default run stays fast);
the default run takes 13 tokenizers (one or two per family), ``-m slow`` all 39.
"""

from __future__ import annotations

import contextlib
import functools
import os
from collections.abc import Callable
from typing import Any

import pytest
from fixtures import ALL_HF_JSON, fixture_path, gguf_vocab_path

import polytok
from polytok.errors import PolytokError

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

EXAMPLES = int(os.environ.get("POLYTOK_MAX_EXAMPLES", "8"))
COMBINING = st.characters(categories=("Mn", "Me", "Mc"))
BASE = st.characters(categories=("Lu", "Ll", "Lo", "Nd", "Zs", "Po", "So"))
SCRIPTS = st.sampled_from(["hello", "wörld", "日本語", "한국어", "Ελληνικά", "русский", "עברית", "عربي", "हिन्दी",
                           "ไทย", "🤗🦙", "👩‍👩‍👧", "\u200d", "\ufeff", "  ", "\t", "\r\n", "1234567", "<s>", "</s>",
                           "<|endoftext|>", "[CLS]", "▁", "Ġ"])
TEXT = st.one_of(
    st.text(st.characters(blacklist_categories=("Cs",)), max_size=40),
    st.text(st.characters(categories=("Cc", "Cf", "Zs", "Zl", "Zp")), max_size=20),
    st.lists(st.tuples(BASE, st.lists(COMBINING, max_size=4)).map(lambda t: t[0] + "".join(t[1])),
             max_size=10).map("".join),
    st.lists(SCRIPTS, max_size=12).map("".join),
)
WITH_SURROGATES = st.text(st.characters(categories=("Cs", "Ll", "Zs")), min_size=1, max_size=12)

# name -> (load polytok, ids and round trip of the reference, polytok's ids and round trip)
Pair = tuple[Callable[[str], tuple[list[int], str]], Callable[[str], tuple[list[int], str]]]


def _round_trip(encode: Callable[[str], list[int]], decode: Callable[[list[int]], str]
                ) -> Callable[[str], tuple[list[int], str]]:
    """text -> (its ids, the decode of those ids)."""
    def run(text: str) -> tuple[list[int], str]:
        ids = encode(text)
        return ids, decode(ids)
    return run


def _ours(tok: polytok.Tokenizer, **encode: Any) -> Callable[[str], tuple[list[int], str]]:
    return _round_trip(lambda text: tok.encode(text, **encode), tok.decode)


def _hf(name: str) -> Pair:
    tokenizers = pytest.importorskip("tokenizers")
    fixture = next(f for f in ALL_HF_JSON if f.name == name)
    path = fixture_path(name, fixture.files[0])
    ref = tokenizers.Tokenizer.from_file(str(path))
    return (_round_trip(lambda t: ref.encode(t).ids, lambda ids: ref.decode(ids, skip_special_tokens=False)),
            _ours(polytok.load(path)))


def _spm(name: str) -> Pair:
    spm = pytest.importorskip("sentencepiece")
    path = fixture_path(name, "tokenizer.model" if "mistral" in name else "spm.model")
    ref = spm.SentencePieceProcessor(model_file=str(path))
    return _round_trip(ref.encode, ref.decode), _ours(polytok.load(path))


def _tiktoken(_: str) -> Pair:
    tiktoken = pytest.importorskip("tiktoken")
    from tiktoken.load import load_tiktoken_bpe
    from tiktoken_ext.openai_public import r50k_pat_str

    path = fixture_path("whisper-gpt2-tiktoken", "gpt2.tiktoken")
    ref = tiktoken.Encoding("gpt2", pat_str=r50k_pat_str, mergeable_ranks=load_tiktoken_bpe(str(path)),
                            special_tokens={"<|endoftext|>": 50256})
    return _round_trip(ref.encode_ordinary, ref.decode), _ours(polytok.load(path))


def _tekken(name: str) -> Pair:
    tekken = pytest.importorskip("mistral_common.tokens.tokenizers.tekken")
    path = fixture_path(name, "tekken.json")
    ref = tekken.Tekkenizer.from_file(str(path))
    return (_round_trip(lambda t: ref.encode(t, bos=False, eos=False), ref.decode),
            _ours(polytok.load(path), add_special=False))


def _rwkv(_: str) -> Pair:
    rwkv_tokenizer = pytest.importorskip("rwkv.rwkv_tokenizer")
    path = fixture_path("rwkv-world-vocab", "rwkv_vocab_v20230424.txt")
    ref = rwkv_tokenizer.TRIE_TOKENIZER(str(path))
    return _round_trip(ref.encode, ref.decode), _ours(polytok.load(path))


def _wordpiece(name: str) -> Pair:
    transformers = pytest.importorskip("transformers")
    path = fixture_path(name, "vocab.txt")
    ref = transformers.BertTokenizerFast(str(path))
    return _round_trip(lambda t: ref(t)["input_ids"], ref.decode), _ours(polytok.load(path))


def _gguf(name: str) -> Pair:
    """llama.cpp's ``llama_tokenize(add_special=True, parse_special=False)`` and its own
    ``llama_detokenize(remove_special=False, unparse_special=True)`` (llama-cpp-python's
    ``detokenize`` is a per-token loop of its own, not that call)."""
    pytest.importorskip("llama_cpp")
    from polytok.parity.engines import LlamaCppSide

    path = gguf_vocab_path(name)
    ref = LlamaCppSide(str(path), name)
    _OPEN.append(ref)
    return (_round_trip(lambda t: ref.tokenize(t, True, False), ref.decode),
            _ours(polytok.load(path), add_special=True, special="text"))


_OPEN: list[Any] = []  # llama.cpp models, closed before interpreter shutdown (their finalizer fails then)


@pytest.fixture(scope="module", autouse=True)
def _close_llama_models():
    yield
    _pair.cache_clear()
    while _OPEN:
        _OPEN.pop().close()


PAIRS: dict[str, Callable[[], Pair]] = {}
for _fixture in ALL_HF_JSON:
    PAIRS[f"hf:{_fixture.name}"] = functools.partial(_hf, _fixture.name)
for _name in ("spm-botchan-bpe-1000", "spm-botchan-unigram-1000", "spm-kyoto-ja-unigram-8000", "spm-mistral-v1",
              "spm-mistral-v3"):
    PAIRS[f"spm:{_name}"] = functools.partial(_spm, _name)
PAIRS["tiktoken:gpt2"] = functools.partial(_tiktoken, "gpt2")
for _name in ("tekken-240718", "tekken-240911"):
    PAIRS[f"tekken:{_name}"] = functools.partial(_tekken, _name)
PAIRS["rwkv:world"] = functools.partial(_rwkv, "world")
PAIRS["vocab.txt:bert-base-cased-vocab"] = functools.partial(_wordpiece, "bert-base-cased-vocab")
for _name in ("llama-spm", "gpt-2", "bert-bge", "qwen2", "deepseek-coder", "falcon", "phi-3", "command-r"):
    PAIRS[f"gguf:{_name}"] = functools.partial(_gguf, _name)


@functools.lru_cache(maxsize=4)
def _pair(name: str) -> Pair:
    return PAIRS[name]()


# the default run takes one or two tokenizers per family; -m slow takes every one
DEFAULT = {"hf:gpt2", "hf:llama2", "hf:bert-base-uncased", "hf:albert-base-v2-tf5", "spm:spm-botchan-unigram-1000",
           "spm:spm-mistral-v1", "tiktoken:gpt2", "tekken:tekken-240911", "rwkv:world",
           "vocab.txt:bert-base-cased-vocab", "gguf:llama-spm", "gguf:gpt-2", "gguf:bert-bge"}
ALL = [pytest.param(name, marks=() if name in DEFAULT else pytest.mark.slow) for name in PAIRS]


@pytest.mark.parametrize("name", ALL)
def test_round_trip_equals_reference(name):
    reference, ours = _pair(name)

    @settings(max_examples=EXAMPLES, deadline=None, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(TEXT)
    def check(text):
        try:
            expected = reference(text)
        except Exception:
            expected = None  # the reference refuses this text: polytok may refuse it too, never crash
        try:
            got = ours(text)
        except PolytokError:
            assert expected is None, f"polytok refused a text the reference took: {text!r}"
            return
        if expected is not None:
            assert got == expected, text

    check()


@pytest.mark.parametrize("name", ["hf:gpt2", "hf:llama2", "hf:qwen3", "tiktoken:gpt2", "rwkv:world", "gguf:gpt-2",
                                  "spm:spm-mistral-v1"])
def test_surrogates_never_crash(name):
    _, ours = _pair(name)

    @settings(max_examples=EXAMPLES, deadline=None, database=None)
    @given(WITH_SURROGATES)
    def check(text):
        with contextlib.suppress(PolytokError):
            ours(text)

    check()


@pytest.mark.parametrize("path", ["gpt2", ("spm-mistral-v1", "tokenizer.model"), ("llama2", None)])
def test_a_lone_surrogate_is_named_at_its_place_in_the_whole_input(path):
    """The references cannot take a lone surrogate at all; polytok refuses it too, naming the
    character where the first one sits in the input (not in the piece that met it)."""
    if isinstance(path, tuple):
        name, filename = path
        from fixtures import HF_JSON_FIXTURES

        path = fixture_path(name, filename or HF_JSON_FIXTURES[name])
    tok = polytok.load(path)
    for text in ["a\ud800b", "Hello there, world \udfff and \ud800", "\ud83d", "héllo   \ud800"]:
        at = next(i for i, c in enumerate(text) if 0xD800 <= ord(c) < 0xE000)
        with pytest.raises(polytok.EncodeError, match=f"U\\+{ord(text[at]):04X} at character {at},"):
            tok.encode(text)
        with pytest.raises(polytok.EncodeError, match=" of the pair,"):
            tok.encode("fine", pair=text)
