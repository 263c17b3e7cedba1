"""The special_scan kernel against the pure special-token scans of polytok.special.

Compiled vs pure (``polytok.kernels.pure_path()``): `TokenTrie.find_all` and
`LongestFirstPartition.split` on random marker sets (overlapping, nested, duplicated, with
lstrip/rstrip/always), and the special stage of every tokenizer.json and GGUF fixture on bench
slices with every marker inserted (bare, in words, between spaces), edge texts and hypothesis
text, in both parse modes.
"""

from __future__ import annotations

import functools
import pickle
import random

import pytest
from fixtures import GGUF_VOCAB_NAMES, HF_JSON_FIXTURES, bench_slice, edge_texts, fixture_path, gguf_vocab_path
from hypothesis import given, settings
from hypothesis import strategies as st
from sweeps import QUICK_GGUF, sweep

import polytok
from kernels._compiled import compiled
from polytok import kernels
from polytok.errors import EncodeError
from polytok.special import AddedVocabulary, LongestFirstPartition, PartitionEntry, TokenTrie

ALPHABET = "ab<>| \t\n\r\x0b\x0c\x85\u3000\u00e9\u65e5\U0001f917\ud800"


def random_markers(rng, count, alphabet=ALPHABET):
    return ["".join(rng.choice(alphabet) for _ in range(rng.randint(1, 4))) for _ in range(count)]


def random_text(rng, markers, size):
    parts = [rng.choice(markers) if rng.random() < 0.4 else rng.choice(ALPHABET) for _ in range(size)]
    return "".join(parts)


def test_trie_matches_pure_on_random_marker_sets():
    compiled("special_scan")
    rng = random.Random(11)
    for _ in range(300):
        markers = random_markers(rng, rng.randint(1, 12))
        entries = {m: i for i, m in enumerate(markers)}
        with kernels.pure_path():
            pure = TokenTrie(entries)
        fast = TokenTrie(entries)
        assert fast._compiled is not None
        for _ in range(10):
            text = random_text(rng, markers, rng.randrange(30))
            assert fast.find_all(text) == pure.find_all(text), (entries, text)


def partitions(entries):
    with kernels.pure_path():
        pure = LongestFirstPartition(entries)
    fast = LongestFirstPartition(entries)
    assert fast._compiled is not None
    return pure, fast


def test_partition_matches_pure_on_random_marker_sets():
    rng = random.Random(12)
    for _ in range(400):
        markers = random_markers(rng, rng.randint(1, 10), ALPHABET[:-1])  # GGUF texts are valid UTF-8
        markers += rng.sample(markers, min(2, len(markers)))  # the same text under two ids
        entries = [PartitionEntry(i, m, rng.random() < 0.3, rng.random() < 0.4, rng.random() < 0.4)
                   for i, m in enumerate(markers)]
        pure, fast = partitions(entries)
        for _ in range(10):
            text = random_text(rng, markers, rng.randrange(40))
            for parse_special in (True, False):
                assert fast.split(text, parse_special) == pure.split(text, parse_special), (entries, text)


def test_partition_with_too_many_occurrences_runs_the_pure_loop():
    entries = [PartitionEntry(i, " " * i, True, False, True) for i in range(1, 41)]
    pure, fast = partitions(entries)
    text = " " * 5000 + "x" + " " * 7
    assert fast._compiled.split(text, True) is None
    assert fast.split(text, True) == pure.split(text, True)
    assert fast._compiled.split(" " * 100, True) is not None  # under the cap


def test_giving_up_on_too_many_occurrences_holds_little_memory():
    """GPT-NeoX's whitespace entries (2..24 spaces) find 23 occurrences a character in a run of spaces:
    the kernel gives up (the pure loop answers) before holding more than 3 of them a character."""
    import tracemalloc

    entries = [PartitionEntry(i, " " * i, True, False, False) for i in range(2, 25)]
    _, fast = partitions(entries)
    text = " " * 200_000
    tracemalloc.start()
    try:
        assert fast._compiled.split(text, True) is None
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 60 * len(text), peak / len(text)


def test_long_texts_scan_without_the_gil_and_agree():
    rng = random.Random(5)
    markers = ["<|im_start|>", "<|im_end|>", "<s>", "</s>", "<", "|"]
    text = random_text(rng, markers, 30_000)
    with kernels.pure_path():
        pure_trie = TokenTrie({m: i for i, m in enumerate(markers)})
    assert TokenTrie({m: i for i, m in enumerate(markers)}).find_all(text) == pure_trie.find_all(text)
    pure, fast = partitions([PartitionEntry(i, m, i % 2 == 0, True, i == 3) for i, m in enumerate(markers)])
    assert fast.split(text, True) == pure.split(text, True)
    assert fast.split(text, False) == pure.split(text, False)


def test_tables_pickle_and_rebuild():
    trie = TokenTrie({"<a>": 1, "<ab>": 2})
    again = pickle.loads(pickle.dumps(trie))
    assert again._compiled is not None and again.find_all("<ab><a>") == [(0, 4, 2), (4, 7, 1)]
    part = LongestFirstPartition([PartitionEntry(3, "<s>", False, True, True)])
    again = pickle.loads(pickle.dumps(part))
    assert again._compiled is not None and again.split(" <s> x", True) == [(1, 4, 3), (5, 6, None)]


# -- every fixture, through the tokenizer's special stage ---------------------------------

FIXTURES = [("hf", name) for name in HF_JSON_FIXTURES] + [("gguf", name) for name in GGUF_VOCAB_NAMES]


@functools.cache
def pair(kind, name):
    path = str(fixture_path(name, HF_JSON_FIXTURES[name]) if kind == "hf" else gguf_vocab_path(name))
    with kernels.pure_path():
        pure = polytok.load(path)
    return pure, polytok.load(path)


def markers_of(tok):
    stage = tok.special_split
    if isinstance(stage, AddedVocabulary):
        return sorted(set(stage.content_to_id) | set(stage.normalized_form.values()))
    return sorted({e.text for e in stage._entries})


def marked_texts(tok, seed):
    rng = random.Random(seed)
    markers = markers_of(tok)
    base = bench_slice(rng.choice(["en", "code", "multi"]), 4000)
    texts = []
    for glue in ("", " ", "  \n", "x"):
        cut = list(base)
        for marker in rng.sample(markers, min(len(markers), 60)) + markers[:5] * 3:
            at = rng.randrange(len(cut) + 1)
            cut.insert(at, glue + marker + glue[::-1])
        texts.append("".join(cut))
    texts.append("".join(markers))  # every marker, back to back
    texts.append(" ".join(markers))
    return texts, markers


def check_stage(pure, fast, texts):
    for text in texts:
        for parse_special in (True, False):
            assert fast.split_special(text, parse_special) == pure.split_special(text, parse_special), text[:120]
            assert fast.segments(text, parse_special) == pure.segments(text, parse_special), text[:120]


def outcome(call, *args, **kwargs):
    """The result, or the error's type and message (labse-cropped has no unk token: both raise)."""
    try:
        return call(*args, **kwargs)
    except EncodeError as exc:
        return type(exc), str(exc)


def kernel_objects(tok):
    stage = tok.special_split
    if isinstance(stage, AddedVocabulary):
        return [t._compiled for t in (stage._raw, stage._normed) if t is not None]
    return [stage._compiled]


@pytest.mark.parametrize(("kind", "name"), sweep(FIXTURES, [c for c in FIXTURES if c[0] != "gguf" and c[1] != "gemma3"
                                                           or c[1] in QUICK_GGUF]))
def test_fixture_special_stage_matches_pure(kind, name):
    pure, fast = pair(kind, name)
    assert all(k is not None for k in kernel_objects(fast))
    assert all(k is None for k in kernel_objects(pure))
    texts, markers = marked_texts(fast, seed=len(name))
    check_stage(pure, fast, texts + edge_texts())
    for text in texts[:1]:
        for special in ("parse", "text"):
            assert outcome(fast.encode, text, special=special) == outcome(pure.encode, text, special=special)
    lines = texts[1].splitlines()[:200]
    assert outcome(fast.encode_batch, lines) == outcome(pure.encode_batch, lines)


MARKED = st.lists(st.sampled_from([" ", "  ", "\n", "a", "b", "é", "日", "🤗", "\ud800", "<", "|", ">", "[", "]"]) |
                  st.integers(0, 10_000), max_size=25)


@pytest.mark.parametrize(("kind", "name"), [("hf", "llama3"), ("hf", "bert-base-uncased"), ("hf", "qwen3"),
                                             ("hf", "gemma3"), ("gguf", "bert-bge"), ("gguf", "gemma-4"),
                                             ("gguf", "llama-bpe"), ("gguf", "phi-3")])
@settings(max_examples=40, deadline=None)
@given(parts=MARKED)
def test_random_marked_text(kind, name, parts):
    pure, fast = pair(kind, name)
    markers = markers_of(fast)
    text = "".join(p if isinstance(p, str) else markers[p % len(markers)] for p in parts)
    check_stage(pure, fast, [text])
