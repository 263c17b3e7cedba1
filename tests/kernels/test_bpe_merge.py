"""The compiled BPE word loop (polytok._kernels.bpe_merge) against the pure-Python model.

Every BPE fixture (tokenizer.json, tiktoken, tekken, GGUF) is loaded twice in one process,
compiled and inside `polytok.kernels.pure_path()`, and must give the same ids on the edge
texts, bench slices, long words and random text. Small random models check the merge order
rules (rank, leftmost, HF's same-id check of stale candidates, a pair listed twice, shared
ids, tiktoken's ranking by the concatenation) where the fixtures might not reach them.
"""

from __future__ import annotations

import contextlib
import functools
import pickle
import random
from collections.abc import Callable
from pathlib import Path

import pytest
from fixtures import HF_JSON_FIXTURES, bench_slice, edge_texts, fixture_path, gguf_vocab_path
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sweeps import QUICK_GGUF, sweep

import polytok
from kernels._compiled import compiled
from polytok.kernels import pure_path
from polytok.models._bpe_word import merge_heap, merge_scan
from polytok.models.bpe import BPE

MODULE = compiled("bpe_merge")

HF = sorted(HF_JSON_FIXTURES)
TIKTOKEN = [("cl100k_base-tiktoken", "cl100k_base.tiktoken"), ("whisper-gpt2-tiktoken", "gpt2.tiktoken"),
            ("whisper-multilingual-tiktoken", "multilingual.tiktoken"), ("llama3-tiktoken", "tokenizer.model"),
            ("llama4-tiktoken", "tokenizer.model")]
TEKKEN = [("tekken-240718", "tekken.json"), ("tekken-240911", "tekken.json")]
GGUF = sorted(p.name.removesuffix(".jsonl.gz")
              for p in (Path(__file__).resolve().parents[1] / "golden" / "gguf").glob("*.jsonl.gz"))

LONG = ["a" * 5000, "ab" * 3000, "▁" * 300 + "hello" * 100, "你好世界" * 1200, " " * 5000, "é" * 70,
        "x" * 49, "y" * 48, "z" * 64, "0123456789" * 20, "▁the" * 400, "Hello▁world▁" * 50]


def _texts() -> list[str]:
    out = edge_texts() + LONG
    with contextlib.suppress(pytest.skip.Exception):
        out += [bench_slice(b, 6000) for b in ("bench_en", "bench_code", "bench_multi")]
    return out


def _outcome(call: Callable[..., object], *args: object) -> object:
    """What `call` returns, or the type of what it raises (the compiled path must fail alike)."""
    try:
        return call(*args)
    except Exception as exc:
        return type(exc)


@functools.cache
def _pair(kind: str, name: str) -> tuple[polytok.Tokenizer, polytok.Tokenizer]:
    if kind == "hf":
        path = fixture_path(name, HF_JSON_FIXTURES[name])
    elif kind == "gguf":
        path = gguf_vocab_path(name)
    else:
        path = fixture_path(name, dict(TIKTOKEN + TEKKEN)[name])
    fast = polytok.load(path)
    if not isinstance(fast.model, BPE):
        pytest.skip(f"{name}: not a BPE model")
    with pure_path():
        pure = polytok.load(path)
    assert pure.model._kernel is None
    return fast, pure


def _same_ids(fast: polytok.Tokenizer, pure: polytok.Tokenizer) -> None:
    for text in _texts():
        for _ in range(2):  # cold, then warm (the cache filled by the first pass)
            assert _outcome(fast.encode, text) == _outcome(pure.encode, text), text[:80]


CASES = ([("hf", n) for n in HF] + [("tiktoken", n) for n, _ in TIKTOKEN] + [("tekken", n) for n, _ in TEKKEN]
         + [("gguf", n) for n in GGUF])


@pytest.mark.parametrize("kind,name", sweep(CASES, [c for c in CASES if c[0] != "gguf" and c[1] != "gemma3"
                                                   or c[1] in QUICK_GGUF]), ids=[f"{k}-{n}" for k, n in CASES])
def test_fixture_ids_equal_the_pure_model(kind, name):
    fast, pure = _pair(kind, name)
    model = fast.model
    _same_ids(fast, pure)
    if not model._prefix and not model._suffix and not model._dropout:
        assert model._kernel is not None and model._merger is not None, "the compiled loop did not run"
    # the same words straight through the model, cold and warm
    words = [w for text in _texts()[:200] for w in text.split(" ")] + ["", "\udc80", "a\ud800b"]
    for _ in range(2):
        assert _outcome(model.tokenize_all, words) == _outcome(pure.model.tokenize_all, words)
    assert [model.tokenize(w) for w in words[:300]] == [pure.model.tokenize(w) for w in words[:300]]
    assert model.tokenize_each(words[:300]) == pure.model.tokenize_each(words[:300])
    assert [model.tokenize_spans(w) for w in LONG] == [pure.model.tokenize_spans(w) for w in LONG]


@pytest.mark.parametrize("name", ["gpt2", "llama3", "llama2"])
def test_pickled_model_rebuilds_its_kernel(name):
    fast, _ = _pair("hf", name)
    fast.encode("warm the cache and build the merger")
    copy = pickle.loads(pickle.dumps(fast))
    assert copy.model._kernel is not None and copy.model._merger is None
    text = bench_slice("bench_en", 2000)
    assert copy.encode(text) == fast.encode(text)
    with pytest.raises(TypeError):
        pickle.dumps(fast.model._merger)


@pytest.mark.parametrize("name", ["gpt2", "cl100k_base-tiktoken", "llama2"])
def test_merge_loops_equal_the_pure_loops(name):
    kind = "hf" if name in HF_JSON_FIXTURES else "tiktoken"
    fast, _ = _pair(kind, name)
    model = fast.model
    if model._byte_level:  # (its kernel merges bytes: tests/kernels/test_bpe_merge_bytes.py) the id loops
        model = BPE(model._vocab, [], ignore_merges=True, merge_priority="token_id")  # of tiktoken's rule
    merger = model._compiled()
    rank_of = model._rank_of()
    singles = sorted({i for t, i in model._vocab.items() if len(t) == 1})
    rng = random.Random(7)
    text = bench_slice("bench_multi", 20000)
    for n in [2, 3, 5, 17, 47, 48, 49, 64, 65, 300, 5000]:
        for _ in range(20 if n < 1000 else 2):
            if rng.random() < 0.5:
                ids = [rng.choice(singles) for _ in range(n)]
            else:
                start = rng.randrange(len(text) - n)
                ids = [model._vocab.get(ch, singles[0]) for ch in text[start:start + n]]
            heap = merge_heap(list(ids), [1] * n, rank_of, model._results, None)[0]
            assert merger.merge(list(ids), False) == heap
            if n <= model._scan_limit:
                assert merger.merge(list(ids), True) == merge_scan(list(ids), rank_of, model._results,
                                                                   model._no_rank) == heap


def _random_model(rng: random.Random, token_id: bool, shared_ids: bool) -> tuple[dict[str, int], list[tuple[str, str]]]:
    tokens = ["a", "b", "c"]
    merges: list[tuple[str, str]] = []
    for _ in range(rng.randrange(1, 25)):
        left, right = rng.choice(tokens), rng.choice(tokens)
        if len(left + right) > 6:
            continue
        merges.append((left, right))  # repeats are kept: a pair listed twice takes its last rank
        if left + right not in tokens:
            tokens.append(left + right)
    order = list(range(len(tokens)))
    if token_id:  # random ranks, the single characters first
        rest = order[3:]
        rng.shuffle(rest)
        order[3:] = rest
    vocab = {t: i for t, i in zip(tokens, order)}
    if shared_ids and len(tokens) > 4:
        vocab[tokens[-1]] = vocab[tokens[-2]]  # two entries with one id: the scan is not exact
    return vocab, merges


UNKNOWN = st.sampled_from(["none", "unk", "unk-fused", "unk-missing", "bytes", "bytes-unk", "bytes-some",
                           "block", "block-bytes"])


def _options(unknown: str, vocab: dict[str, int]) -> dict[str, object]:
    """BPE keyword arguments for the rule `unknown` (characters missing from `vocab`); adds the tokens it needs."""
    top = max(vocab.values()) + 1
    options: dict[str, object] = {}
    if unknown.startswith("unk") or unknown == "bytes-unk":
        options["unk_token"] = "<unk>"
        options["fuse_unk"] = unknown == "unk-fused"
        if unknown != "unk-missing":
            vocab["<unk>"] = top
            top += 1
    if unknown.startswith("bytes") or unknown == "block-bytes":
        options["byte_fallback"] = True
        # all bytes, or those of d and é only (then 😀 and è are unknown even in bytes)
        wanted = range(256) if unknown not in ("bytes-some", "bytes-unk") else [0x64, 0xC3, 0xA9]
        for b in wanted:
            vocab[f"<0x{b:02X}>"] = top
            top += 1
    if unknown.startswith("block"):
        options["unknown_chars"] = "block"
    return options


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32), token_id=st.booleans(), shared=st.booleans(), ignore=st.booleans(),
       unknown=UNKNOWN, words=st.lists(st.text("abcabcdé\u00e8\ud800😀", max_size=90), max_size=12))
def test_random_models_merge_as_the_pure_model(seed, token_id, shared, ignore, unknown, words):
    vocab, merges = _random_model(random.Random(seed), token_id, shared)
    if token_id and unknown.startswith("block"):
        unknown = "none"  # llama.cpp's rule takes a merges list
    kwargs = _options(unknown, vocab)
    if token_id:
        kwargs["merge_priority"] = "token_id"
    fast = BPE(vocab, [] if token_id else merges, ignore_merges=ignore, **kwargs)  # type: ignore[arg-type]
    with pure_path():
        pure = BPE(vocab, [] if token_id else merges, ignore_merges=ignore, **kwargs)  # type: ignore[arg-type]
    assert fast._kernel is not None
    for _ in range(2):  # cold, then warm
        assert _outcome(fast.tokenize_all, words) == _outcome(pure.tokenize_all, words)
    for word in words:
        assert _outcome(fast.tokenize, word) == _outcome(pure.tokenize, word)
        assert _outcome(fast.tokenize_spans, word) == _outcome(pure.tokenize_spans, word)
    merger = fast._compiled()
    rank_of = pure._rank_of()
    for word in words:
        ids = [vocab[ch] for ch in word if ch in vocab]
        assert merger.merge(list(ids), False) == merge_heap(list(ids), [1] * len(ids), rank_of, pure._results,
                                                            None)[0]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=st.text(st.characters(codec=None, blacklist_categories=()), max_size=300))
def test_random_text_gpt2_cl100k_llama2(text):
    for kind, name in (("hf", "gpt2"), ("tiktoken", "cl100k_base-tiktoken"), ("hf", "llama2")):
        fast, pure = _pair(kind, name)
        assert _outcome(fast.encode, text) == _outcome(pure.encode, text)


@pytest.mark.parametrize("vocab,merges,options,word", [
    # a pair listed twice ranks by its last line: b c (line 1) merges before a b (line 2)
    ({"a": 0, "b": 1, "c": 2, "ab": 3, "bc": 4}, [("a", "b"), ("b", "c"), ("a", "b")], {}, "abc"),
    # HF writes byte-fallback tokens before a pending unk symbol
    ({"a": 0, "<unk>": 1, "<0xC3>": 2, "<0xA9>": 3}, [], {"unk_token": "<unk>", "byte_fallback": True}, "a😀éa"),
    ({"a": 0, "<unk>": 1, "<0xC3>": 2, "<0xA9>": 3}, [], {"unk_token": "<unk>", "byte_fallback": True,
                                                          "fuse_unk": True}, "😀😀é😀a"),
    # llama.cpp: no merge crosses a blocked character, which is then spelled in bytes
    ({"a": 0, "b": 1, "ab": 2, "<0x78>": 3}, [("a", "b")], {"unknown_chars": "block", "byte_fallback": True}, "axbab"),
])
def test_rules_one_by_one(vocab, merges, options, word):
    fast = BPE(vocab, merges, **options)
    with pure_path():
        pure = BPE(vocab, merges, **options)
    assert fast.tokenize_all([word]) == pure.tokenize_all([word])
    assert fast._compiled().word(word) == pure._word_ids(word)


def _merger(vocab: dict[str, int], *, cache_size: int = 10, unk_id: int = -1,
            byte_ids: list[int | None] | None = None) -> object:
    """A Merger of the one merge ``a b`` over `vocab` (``{"a": 0, "b": 1, "ab": 2}``)."""
    return MODULE.Merger(vocab, {i: t for t, i in vocab.items()}, max(vocab.values()), [0], [1], [2], False, False,
                         48, "", [], 8, cache_size, 5, byte_ids, unk_id, False, False)


def test_cache_stays_bounded_and_skips_long_words():
    vocab = {"a": 0, "b": 1, "ab": 2}
    model = BPE(vocab, [("a", "b")])
    merger = _merger(vocab, cache_size=3)
    cache: dict[str, list[int]] = {}
    words = ["ab", "a", "b", "abab", "ba", "bab", "aaaaab"]
    assert merger.tokenize_all(words, cache, model.tokenize) == [2, 0, 1, 2, 2, 1, 0, 1, 2, 0, 0, 0, 0, 2]
    assert len(cache) <= 3 and "aaaaab" not in cache
    assert set(cache) <= set(words)


def test_words_left_to_the_pure_loop():
    calls: list[str] = []

    def fallback(word: str) -> list[int]:
        calls.append(word)
        return [99]

    vocab = {"a": 0, "b": 1, "ab": 2}
    merger = _merger(vocab, unk_id=-2)  # an unk token missing from the vocabulary: the pure loop raises
    assert merger.tokenize_all(["ab", "", "ax", "\ud800", "ab", "x" * 20, "abab"], {}, fallback) == [2, 99, 99, 99,
                                                                                                    2, 99, 2, 2]
    assert calls == ["", "ax", "\ud800", "x" * 20]
    assert merger.word("ax") is None and merger.word("") is None and merger.word("abab") == [2, 2]
    spelled = _merger(vocab, byte_ids=[None] * 256)  # byte_fallback: a surrogate is not UTF-8
    assert spelled.word("\ud800") is None and spelled.word("axb") == [2]  # x dropped, a b merged across it
    with pytest.raises(ZeroDivisionError):
        merger.tokenize_all(["q"], {}, lambda w: 1 / 0)
    with pytest.raises(TypeError):
        merger.tokenize_all(["q"], {}, lambda w: 7)


def test_bad_tables_are_refused():
    rest = (8, 10, 5, None, -1, False, False)
    with pytest.raises(ValueError):
        MODULE.Merger({"a": 5}, {5: "a"}, 2, [], [], [], False, False, 48, "", [], *rest)
    with pytest.raises(ValueError):
        MODULE.Merger({"a": 0}, {0: "a"}, 0, [0], [0], [], False, False, 48, "", [], *rest)
    with pytest.raises(ValueError):
        MODULE.Merger({"a": 0}, {0: "a"}, 0, [0], [3], [0], False, False, 48, "", [], *rest)
    with pytest.raises(ValueError):
        MODULE.Merger({"a": 0}, {0: "b"}, 0, [], [], [], True, False, 48, "", [], *rest)
    with pytest.raises(TypeError):
        MODULE.Merger({1: 0}, {0: "a"}, 0, [], [], [], False, False, 48, "", [], *rest)
    with pytest.raises(ValueError):
        MODULE.Merger({"a": 0}, {0: "a"}, 0, [], [], [], False, False, 48, "", [], 8, 10, 5, [0] * 255, -1, False,
                      False)
    with pytest.raises(ValueError):
        MODULE.Merger({"a": 0}, {0: "a"}, 0, [], [], [], False, False, 48, "", [], 8, 10, 5, None, 7, False, False)
    merger = MODULE.Merger.__new__(MODULE.Merger)
    with pytest.raises(RuntimeError):
        merger.tokenize_all([], {}, len)
