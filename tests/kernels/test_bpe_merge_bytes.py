"""The compiled BPE loop of ``byte_level`` models (tiktoken's: a word is text, its UTF-8 bytes
merge) against the pure-Python model: the byte merge loops (the scan up to 64 bytes, the heap
above, without the GIL from 4096), the entry table by length, and the word cache kept in C
(keyed by a str's code units and kind, bounded, cleared when full).

The tiktoken and tekken fixtures also run through tests/kernels/test_bpe_merge.py
(`test_fixture_ids_equal_the_pure_path`) and the live parity suites in tests/formats.
"""

from __future__ import annotations

import contextlib
import functools
import random
import threading
from pathlib import Path

import pytest
from fixtures import bench_slice, edge_texts, fixture_path
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import polytok
import polytok.models.bpe as bpe_module
from kernels._compiled import compiled
from polytok.errors import EncodeError
from polytok.kernels import pure_path
from polytok.models._bpe_bytes import byte_form
from polytok.models.bpe import BPE
from polytok.text.byte_alphabet import BYTES_TO_CHARS

MODULE = compiled("bpe_merge")

FILES = {"cl100k_base-tiktoken": "cl100k_base.tiktoken", "llama3-tiktoken": "tokenizer.model",
         "whisper-multilingual-tiktoken": "multilingual.tiktoken", "tekken-240718": "tekken.json"}

# words around the loops' limits (64 bytes: scan / heap; 4096: the heap without the GIL), in 1- to 4-byte chars
LONG = ["a" * 64, "a" * 65, "é" * 32, "é" * 33, "€" * 22, "😀" * 16, "😀" * 17, " " + "x" * 70, "ab" * 2100,
        "你好世界" * 400, "\u0100" * 300, "0123456789" * 9, "\x00\x01\x7f\x80" * 20, "Ġ" * 40, "ĠĠ a"]


def _outcome(call, *args):
    try:
        return call(*args)
    except Exception as exc:
        return type(exc)


@functools.cache
def _model(name: str) -> BPE:
    tok = polytok.load(fixture_path(name, FILES[name]))
    model = tok.model
    assert isinstance(model, BPE) and model._byte_level and model._kernel is not None
    return model


def _pure_ids(model: BPE, word: str) -> list[int]:
    """The pure loops on the byte form (no cache), as `BPE._byte_level_ids` runs them without a kernel."""
    return model._word_ids(byte_form(word))  # (a byte_level model's `_word_ids` never calls its kernel)


def _words() -> list[str]:
    out = list(LONG)
    for text in edge_texts():
        out += text.split(" ")
    with contextlib.suppress(pytest.skip.Exception):
        for corpus in ("bench_en", "bench_code", "bench_multi"):
            out += bench_slice(corpus, 4000).split(" ")
    return [w for w in out if w]


@pytest.mark.parametrize("name", list(FILES))
def test_word_equals_the_pure_loops(name):
    model = _model(name)
    merger = model._compiled()
    for word in _words():
        if any("\ud800" <= ch <= "\udfff" for ch in word):
            assert merger.word(word) is None  # not UTF-8: the pure loop raises
            continue
        assert merger.word(word) == _pure_ids(model, word), word[:60]


@pytest.mark.parametrize("name", ["cl100k_base-tiktoken", "llama3-tiktoken"])
def test_random_bytes_merge_as_the_pure_loops(name):
    model = _model(name)
    merger = model._compiled()
    rng = random.Random(11)
    alphabet = [chr(c) for c in [*range(32, 127), *range(0xA0, 0x250), *range(0x4E00, 0x4E40), 0x1F600, 0x10FFFF]]
    for n in [1, 2, 3, 8, 9, 16, 21, 22, 63, 64, 65, 66, 200, 1500]:
        for _ in range(30 if n < 1000 else 3):
            word = "".join(rng.choice(alphabet) for _ in range(n))
            assert merger.word(word) == _pure_ids(model, word), word[:60]


def test_lone_surrogates_go_to_the_pure_loop():
    tok = polytok.load(fixture_path("cl100k_base-tiktoken", FILES["cl100k_base-tiktoken"]))
    model = tok.model
    assert model._compiled().word("a\ud800b") is None
    with pytest.raises(EncodeError):
        model.tokenize_all(["ok", "a\ud800b"])
    assert model.tokenize_all(["ok", ""]) == model.tokenize_all(["ok"])  # no token of no bytes: none


def _tiny_byte_model(rng: random.Random, cache_size: int | None = None) -> tuple[BPE, BPE]:
    """A random ``byte_level`` model: every byte, then random entries of 2 to 10 bytes at random ranks."""
    pieces = list(BYTES_TO_CHARS)
    extra: list[str] = []
    source = "abcé€ 😀\n"
    for _ in range(rng.randrange(0, 60)):
        text = "".join(rng.choice(source) for _ in range(rng.randrange(1, 4)))
        form = byte_form(text)
        if len(form) >= 2 and form not in extra:
            extra.append(form)
    ranks = list(range(256, 256 + len(extra)))
    rng.shuffle(ranks)
    order = list(range(256))
    rng.shuffle(order)  # the single bytes need not come first either
    vocab = dict(zip(pieces, order)) | dict(zip(extra, ranks))
    fast = BPE(vocab, [], ignore_merges=rng.random() < 0.5, merge_priority="token_id", byte_level=True)
    with pure_path():
        pure = BPE(vocab, [], ignore_merges=fast._ignore_merges, merge_priority="token_id", byte_level=True)
    assert fast._kernel is not None and pure._kernel is None
    return fast, pure


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32),
       words=st.lists(st.text("abcé€ 😀\n\u00ff\u0100x", max_size=80), max_size=14))
def test_random_byte_models_merge_as_the_pure_model(seed, words):
    fast, pure = _tiny_byte_model(random.Random(seed))
    for _ in range(2):  # cold, then warm (the C cache)
        assert fast.tokenize_all(words) == pure.tokenize_all(words)
    assert [fast.tokenize(w) for w in words] == [pure.tokenize(w) for w in words]


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(words=st.lists(st.text(max_size=12), min_size=1, max_size=40), rounds=st.integers(1, 4))
def test_small_cache_clears_and_stays_exact(monkeypatch_cache, words, rounds):
    """A cache of 3 words, cleared whenever full, over words of every kind (1, 2 and 4 bytes a char)."""
    fast, pure = monkeypatch_cache
    words = [w for w in words if not any("\ud800" <= ch <= "\udfff" for ch in w)]
    for _ in range(rounds):
        assert fast.tokenize_all(words) == pure.tokenize_all(words)


@pytest.fixture(scope="module")
def monkeypatch_cache():
    saved = bpe_module.CACHE_SIZE
    bpe_module.CACHE_SIZE = 3
    try:
        fast, pure = _tiny_byte_model(random.Random(5))
        fast._compiled()  # built with the small bound
    finally:
        bpe_module.CACHE_SIZE = saved
    return fast, pure


def test_keys_of_each_kind_are_told_apart():
    """The same code units in two kinds, and a key that is a prefix of another, are different words."""
    fast, pure = _tiny_byte_model(random.Random(3))
    words = ["\u0100", "\x00\x01", "ab", "abc", "abcdefgh", "abcdefghi", "abcdefgh\u0100", "\U0001F600", "\u00ff",
             "\u00ff\u00ff\u00ff\u00ff", "\u0100\u0100"]
    for _ in range(3):
        assert fast.tokenize_all(words + words[::-1]) == pure.tokenize_all(words + words[::-1])


def test_long_words_are_not_cached_and_stay_exact():
    model = _model("cl100k_base-tiktoken")
    word = " " + "token" * 80  # 401 chars: over the cached length
    ids = model.tokenize_all([word, word])
    assert ids == _pure_ids(model, word) * 2


def test_threads_share_the_cache():
    model = _model("llama3-tiktoken")
    words = _words()
    expected = [_pure_ids(model, w) for w in words]
    failures: list[str] = []

    def run(seed: int) -> None:
        order = list(range(len(words)))
        random.Random(seed).shuffle(order)
        for i in order[:400]:
            if model.tokenize_all([words[i]]) != expected[i]:
                failures.append(words[i])

    threads = [threading.Thread(target=run, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failures


def test_byte_level_takes_token_id():
    with pytest.raises(ValueError):
        BPE({c: i for i, c in enumerate(BYTES_TO_CHARS)}, [], byte_level=True)


def test_byte_level_without_every_byte_keeps_the_pure_loop():
    vocab = {c: i for i, c in enumerate(BYTES_TO_CHARS[:200])} | {"ab": 300}
    model = BPE(vocab, [], merge_priority="token_id", byte_level=True)
    assert model._kernel is None
    assert model.tokenize("ab") == [300]


def test_merger_checks_its_arguments():
    model = _model("cl100k_base-tiktoken")
    with pytest.raises(TypeError):
        model._compiled().merge([1, 2], True)  # byte_level merges bytes, not ids
    vocab = {c: i for i, c in enumerate(BYTES_TO_CHARS[:255])}
    with pytest.raises(ValueError):  # a byte without an entry
        MODULE.Merger(vocab, {i: c for c, i in vocab.items()}, 254, [], [], [], True, True, 48, "", [], 8, 10, 256,
                      None, -1, False, False, True)
    full = {c: i for i, c in enumerate(BYTES_TO_CHARS)}
    with pytest.raises(ValueError):  # not injective
        MODULE.Merger(full | {"xy": 3}, {i: c for c, i in full.items()}, 255, [], [], [], True, True, 48, "", [], 8,
                      10, 256, None, -1, False, False, True)
    with pytest.raises(ValueError):  # byte_level takes token_id
        MODULE.Merger(full, {i: c for c, i in full.items()}, 255, [], [], [], False, True, 48, "", [], 8, 10, 256,
                      None, -1, False, False, True)


def test_pickled_tiktoken_rebuilds_its_kernel():
    import pickle

    tok = polytok.load(fixture_path("llama3-tiktoken", FILES["llama3-tiktoken"]))
    text = bench_slice("bench_multi", 3000)
    ids = tok.encode(text)
    copy = pickle.loads(pickle.dumps(tok))
    assert copy.model._byte_level and copy.model._kernel is not None and copy.model._merger is None
    assert copy.encode(text) == ids


def test_fixture_paths_exist():
    for name, filename in FILES.items():
        assert Path(fixture_path(name, filename)).exists()
