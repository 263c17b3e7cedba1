"""The wordpiece kernel against the pure WordPiece stage (and the BERT and llama.cpp WordPiece cuts).

Compiled vs pure (``polytok.kernels.pure_path()``) on every WordPiece fixture: tokenizer.json
(bert-base-uncased, labse-cropped), vocab.txt (bert-base-cased-vocab, bert-chinese-vocab) and
GGUF (bert-bge), over bench slices, the edge texts and hypothesis text; the model alone on
synthetic vocabularies (prefix variants, word limits, a missing unk token, a tiny cache).
"""

from __future__ import annotations

import functools
import pickle
import random

import pytest
from fixtures import bench_slice, edge_texts, fixture_path, gguf_vocab_path
from hypothesis import given, settings
from hypothesis import strategies as st

import polytok
from kernels._compiled import compiled
from polytok import kernels
from polytok.errors import EncodeError
from polytok.models import WordPiece
from polytok.models._cache import WordCache
from polytok.pre_tokenizers.bert_pre_tokenizer import BertPreTokenizer
from polytok.pre_tokenizers.llama_wordpiece_split import LlamaWordPieceSplit
from polytok.text.chars import PUNCTUATION, WHITE_SPACE

FILES = {
    "bert-base-uncased": lambda: fixture_path("bert-base-uncased", "tokenizer.json"),
    "labse-cropped": lambda: fixture_path("labse-cropped", "tokenizer.json"),
    "bert-base-cased-vocab": lambda: fixture_path("bert-base-cased-vocab", "vocab.txt"),
    "bert-chinese-vocab": lambda: fixture_path("bert-chinese-vocab", "vocab.txt"),
    "bert-bge": lambda: gguf_vocab_path("bert-bge"),
}
PARTS = ["un", "aff", "able", "##", " ", "  ", "\t", "\n", "é", "e\u0301", "日本", "🤗", "▁", "\0", "\ud800", "x" * 120,
         "[UNK]", "[CLS]", ",", "'s", "Straße", "İ", "ﬁ", "\u200b", "\ufffd"]
TEXT = st.text(max_size=80) | st.lists(st.sampled_from(PARTS), max_size=30).map("".join)


@functools.cache
def pair(name):
    path = str(FILES[name]())
    with kernels.pure_path():
        pure = polytok.load(path)
    fast = polytok.load(path)
    assert pure.model._table is None
    assert fast.model._table is not None, "the compiled table was not built"
    return pure, fast


def outcome(call, *args, **kwargs):
    """The result, or the error's type and message (labse-cropped has no unk token: both raise)."""
    try:
        return call(*args, **kwargs)
    except EncodeError as exc:
        return type(exc), str(exc)


def same(name, texts):
    pure, fast = pair(name)
    for text in texts:
        for special in ("parse", "text"):
            assert outcome(fast.encode, text, special=special) == outcome(pure.encode, text, special=special), \
                (name, text[:80])


@pytest.mark.parametrize("name", FILES)
def test_fixtures_on_bench_slices_and_edge_texts(name):
    compiled("wordpiece")
    texts = edge_texts() + [bench_slice(corpus, 20_000) for corpus in ("en", "code", "multi")]
    same(name, texts)
    lines = bench_slice("multi", 30_000).splitlines()
    pure, fast = pair(name)
    assert outcome(fast.encode_batch, lines) == outcome(pure.encode_batch, lines)
    # warm: the same words again, now from the cache the kernel filled
    same(name, texts[-3:])


@pytest.mark.parametrize("name", FILES)
@settings(max_examples=60, deadline=None)
@given(text=TEXT)
def test_fixtures_on_random_text(name, text):
    same(name, [text])


VOCAB = {"[UNK]": 0, "un": 1, "##aff": 2, "##able": 3, "a": 4, "##a": 5, "aff": 6, "##b": 7, "ab": 8, "##ab": 9,
         "é": 10, "##日": 11, "日": 12, "🤗": 13, "##🤗": 14, "\ud800": 15, "": 16, "##": 17, "b": 18,
         "@@b": 19, "@@a": 20, "aaaaaaa": 21, "##aaa": 2**32 - 1}
WORDS = ["unaffable", "unaff", "abab", "aba", "ab", "abx", "x", "日日", "é日", "aaa", "", "a" * 30, "a" * 300,
         "🤗🤗", "\ud800", "\ud800a", "##", "####", "##a", "ba", "bb", "aab", "a\0b", "a" * 7 + "b"]


def models(**options):
    with kernels.pure_path():
        pure = WordPiece(VOCAB, **options)
    fast = WordPiece(VOCAB, **options)
    assert fast._table is not None
    return pure, fast


def check_model(pure, fast, words):
    assert fast.tokenize_all(words) == pure.tokenize_all(words)
    assert fast.tokenize_each(words) == pure.tokenize_each(words)
    for word in words:
        assert fast.tokenize(word) == pure.tokenize(word), word


@pytest.mark.parametrize("prefix", ["##", "@@", "", "#", "zz"])
@pytest.mark.parametrize("limit", [0, 3, 100, 2**70])
def test_model_options(prefix, limit):
    pure, fast = models(continuing_subword_prefix=prefix, max_input_chars_per_word=limit)
    rng = random.Random(7)
    words = WORDS + ["".join(rng.choice("ab日é🤗#\ud800x") for _ in range(rng.randrange(12))) for _ in range(400)]
    check_model(pure, fast, words)
    check_model(pure, fast, words)  # now from the cache


def test_missing_unk_token_raises_as_the_pure_stage():
    vocab = {"a": 0, "##b": 1}
    fast = WordPiece(vocab, unk_token="<unk>")
    assert fast._table is not None
    assert fast.tokenize_all(["ab", "a"]) == [0, 1, 0]
    for call in (fast.tokenize, lambda w: fast.tokenize_all([w]), lambda w: fast.tokenize_each(["a", w])):
        with pytest.raises(EncodeError, match="Missing \\[UNK\\] token"):
            call("ax")


def test_results_are_fresh_lists_and_the_cache_holds_lists(monkeypatch):
    monkeypatch.setattr(WordCache, "limit", 5)
    pure, fast = models()
    words = [f"a{'b' * i}" for i in range(40)] * 3
    check_model(pure, fast, words)
    assert len(fast._cache) <= 5
    ids = fast.tokenize("unaffable")
    ids.append(99)
    assert fast.tokenize("unaffable") == [1, 2, 3]
    fast._cache["odd"] = (1,)  # not a list: the pure loop answers the call
    assert fast.tokenize_all(["odd"]) == [1]


def test_long_words_are_not_cached():
    pure, fast = models()
    word = "a" * 7 * 40
    check_model(pure, fast, [word, "a" * 255, "a" * 256])
    assert word not in fast._cache and "a" * 256 not in fast._cache
    assert fast._cache.keys() == pure._cache.keys()


def test_pickled_model_rebuilds_its_table():
    _, fast = models()
    again = pickle.loads(pickle.dumps(fast))
    assert again._table is not None
    assert again.tokenize_all(WORDS) == fast.tokenize_all(WORDS)


def test_split_prefixed_matches_the_pure_split():
    module = compiled("wordpiece")
    rng = random.Random(3)
    alphabet = "\0\0ab é日🤗\ud800\x7f\xff"
    for _ in range(2000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randrange(15)))
        for prefix in ("▁", "", "\xe9", "🤗", "x"):
            got = module.split_prefixed(text, prefix)
            assert got == [prefix + w for w in text.split("\0") if w]  # == also needs the same str kind


@settings(max_examples=150, deadline=None)
@given(text=TEXT, lowercase=st.booleans(), strip_accents=st.booleans())
def test_llama_wordpiece_split_matches_pure(text, lowercase, strip_accents):
    with kernels.pure_path():
        pure = LlamaWordPieceSplit(lowercase=lowercase, strip_accents=strip_accents)
    fast = LlamaWordPieceSplit(lowercase=lowercase, strip_accents=strip_accents)
    assert fast._split_prefixed is not None
    assert fast.pre_tokenize(text) == pure.pre_tokenize(text)


@settings(max_examples=300, deadline=None)
@given(text=TEXT | st.text(st.sampled_from(sorted(PUNCTUATION | WHITE_SPACE) + ["a", "\U00010100", "\ud800"]),
                          max_size=40))
def test_bert_pre_tokenizer_matches_pure(text):
    with kernels.pure_path():
        pure = BertPreTokenizer()
    fast = BertPreTokenizer()
    assert fast._compiled is not None
    assert fast.pre_tokenize(text) == pure.pre_tokenize(text)


def test_bert_pre_tokenizer_on_every_character_and_pickled():
    with kernels.pure_path():
        pure = BertPreTokenizer()
    fast = pickle.loads(pickle.dumps(BertPreTokenizer()))
    assert fast._compiled is not None
    every = "".join(chr(c) + "a" for c in range(0x110000))
    assert fast.pre_tokenize(every) == pure.pre_tokenize(every)
