"""The compiled SPM merge (polytok._kernels.spm_merge) against the pure-Python `SPM`, and live against
sentencepiece 0.2.3 on the synthetic BPE ``.model`` files.

Every SPM fixture (the sentencepiece BPE ``.model`` files, real and synthetic, and the GGUF SPM
vocabularies of llama.cpp), the bench slices, the edge texts, every option of `SPM` on hypothesis
text (score ties, ``-0.0``, unused pieces, whole symbols, unknown runs, byte fallback, lone
surrogates, astral characters), long words, the word cache, pickling and threads.
"""

from __future__ import annotations

import pickle
import random
import threading
from pathlib import Path

import pytest
from fixtures import bench_slice, edge_texts, fixture_path, gguf_vocab_path
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import polytok
import polytok.kernels
from polytok.errors import EncodeError
from polytok.models.spm import SPM

from ._compiled import compiled

DATA = Path(__file__).resolve().parent.parent / "data" / "sentencepiece"
MODEL_FILES = [("spm-mistral-v1", "tokenizer.model"), ("spm-mistral-v3", "tokenizer.model"),
               ("spm-bpemb-en-100k", "spm.model"), ("spm-botchan-bpe-1000", "spm.model")]
SYNTHETIC = sorted(p.name for p in DATA.glob("bpe-*.model"))
GGUF_SPM = ["baichuan", "llama-spm", "phi-3"]
CORPORA = ("en", "code", "multi")
ALPHABET = "abcdefg▁ u日😀\u0301\t\ud800é<>x!"

# A vocabulary with every case the merge distinguishes: equal scores (ties go left), a merge
# result that scores above its parts, UNUSED pieces (resegmented by sentencepiece), CONTROL,
# BYTE and UNKNOWN pieces, user-defined pieces (whole symbols), a piece listed twice.
NORMAL, UNKNOWN, CONTROL, USER, UNUSED, BYTE = 1, 2, 3, 4, 5, 6
VOCAB = [("<unk>", 0.0, UNKNOWN), ("<s>", 0.0, CONTROL), ("</s>", 0.0, CONTROL),
         *((f"<0x{b:02X}>", 0.0, BYTE) for b in (0xC3, 0xA9, 0x21, 0x0A, 0x61, 0xE6, 0x97, 0xA5)),
         ("▁", -1.0, NORMAL), ("a", -2.0, NORMAL), ("b", -2.0, NORMAL), ("c", -2.0, NORMAL), ("d", -2.0, NORMAL),
         ("ab", -3.0, NORMAL), ("bc", -3.0, NORMAL), ("cd", -2.5, NORMAL), ("abc", -4.0, NORMAL),
         ("<", -2.0, NORMAL), ("x", -2.0, NORMAL), (">", -2.0, NORMAL), ("<x", -3.0, NORMAL),
         ("<x>", 0.0, CONTROL), ("e", -2.0, NORMAL), ("f", -2.0, NORMAL), ("g", -2.0, NORMAL),
         ("fg", -5.0, NORMAL), ("ef", 5.0, NORMAL), ("aa", -1.5, NORMAL), ("aaa", -1.0, NORMAL),
         ("▁a", -1.2, USER), ("u", -2.0, NORMAL), ("uu", -1.0, UNUSED), ("uuu", -0.5, NORMAL),
         ("!", -2.0, NORMAL), ("▁▁", -0.5, NORMAL), ("ba", -3.0, NORMAL), ("ca", 0.0, NORMAL),
         ("ac", -0.0, NORMAL), ("ef", -7.0, UNUSED), ("日", -3.0, NORMAL), ("日日", -2.0, NORMAL),
         ("😀", -3.0, NORMAL), ("e\u0301", -1.0, NORMAL), ("gg", -6.0, USER), ("abab", -0.1, NORMAL),
         ("▁ab", 1.0, NORMAL), ("ggg", -6.5, USER), ("gga", 2.0, NORMAL)]
OPTIONS = {
    "llama": {},
    "unk": {"unknown": "unk", "unk_id": 0},
    "unk_unused": {"unknown": "unk", "unk_id": 0, "unused": True},
    "byte_fallback": {"unknown": "byte_fallback", "unused": True, "symbols": True},
    "unk_symbols": {"unknown": "unk", "unk_id": 0, "symbols": True},
    "llama_mergeable": {"mergeable": True},
}


@pytest.fixture(scope="module", autouse=True)
def _module():
    compiled("spm_merge")


def build(name):
    """The synthetic `SPM` with option set `name`, pure and compiled."""
    options = dict(OPTIONS[name])
    args = {}
    if options.pop("unused", False):
        args["unused"] = [kind == UNUSED for _, _, kind in VOCAB]
    if options.pop("symbols", False):
        args["whole_symbols"] = [piece for piece, _, kind in VOCAB if kind == USER]
    if options.pop("mergeable", False) or options.get("unknown") in ("unk", "byte_fallback"):
        args["mergeable"] = [kind in (NORMAL, USER, UNUSED) for _, _, kind in VOCAB]
    vocab = [(piece, score) for piece, score, _ in VOCAB]
    return pair(vocab, **args, **options)


def pair(*args, **options):
    """The same `SPM`, pure and compiled."""
    with polytok.kernels.pure_path():
        pure = SPM(*args, **options)
    fast = SPM(*args, **options)
    assert pure._kernel is None and fast._kernel is not None
    return pure, fast


def outcome(call, text):
    """The result, or the error's type and message."""
    try:
        return call(text)
    except (EncodeError, UnicodeError) as error:
        return (type(error).__name__, str(error))


def same(pure, fast, words):
    """Each word alone (cold and from the cache), then all at once, give the same ids on both paths."""
    for word in words:
        expected = outcome(pure.tokenize, word)
        assert outcome(fast.tokenize, word) == expected, word
        assert outcome(fast.tokenize, word) == expected, word
        assert outcome(fast._kernel.ids, word) in (expected, None), word
    expected = outcome(pure.tokenize_all, list(words))
    fast._cache.clear()
    assert outcome(fast.tokenize_all, list(words)) == expected
    assert outcome(fast.tokenize_all, list(words)) == expected


def files():
    """(label, pure, compiled) tokenizers of every SPM fixture file."""
    paths = [(name, fixture_path(name, filename)) for name, filename in MODEL_FILES]
    paths += [(name, DATA / name) for name in SYNTHETIC]
    paths += [(name, gguf_vocab_path(name)) for name in GGUF_SPM]
    return paths


@pytest.fixture(scope="module")
def tokenizers():
    out = {}
    for label, path in files():
        with polytok.kernels.pure_path():
            pure = polytok.load(path)
        fast = polytok.load(path)
        assert isinstance(fast.model, SPM), label
        assert pure.model._kernel is None and fast.model._kernel is not None, label
        out[label] = (pure, fast)
    return out


ALL_LABELS = [name for name, _ in MODEL_FILES] + SYNTHETIC + GGUF_SPM


@pytest.mark.parametrize("label", ALL_LABELS)
def test_fixture_edge_texts_and_bench_slices(tokenizers, label):
    pure, fast = tokenizers[label]
    texts = edge_texts() + [bench_slice(name, 30_000) for name in CORPORA]
    for text in texts:
        assert outcome(fast.encode, text) == outcome(pure.encode, text), text[:80]
    # the words of the model stage, cold then from the cache, one by one and in bulk
    words = [word for text in texts[-3:] for piece, at_origin, token in fast.segments(text, False) if token is None
             for word in fast.pre_tokens(piece, at_origin)]
    assert words
    same(pure.model, fast.model, words[:3000])


@pytest.mark.parametrize("label", ALL_LABELS)
def test_fixture_whole_text_as_one_word(tokenizers, label):
    """A long word (past the stack scratch and the GIL release) merges as the pure path does."""
    pure, fast = tokenizers[label]
    text = bench_slice("multi", 6000).replace(" ", "\u2581")
    same(pure.model, fast.model, [text, text[:97], text[:2048], "a" * 3000, "\u2581" * 300])


@pytest.mark.parametrize("label", [name for name, _ in MODEL_FILES] + GGUF_SPM)
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.text(alphabet=st.sampled_from(ALPHABET), max_size=40) | st.text(max_size=30))
def test_fixture_hypothesis(tokenizers, label, text):
    pure, fast = tokenizers[label]
    assert outcome(fast.encode, text) == outcome(pure.encode, text)
    same(pure.model, fast.model, [text, text.replace(" ", "\u2581")])


@pytest.mark.parametrize("name", SYNTHETIC)
def test_synthetic_models_equal_sentencepiece(name):
    spm = pytest.importorskip("sentencepiece")
    sp = spm.SentencePieceProcessor(model_file=str(DATA / name))
    tok = polytok.load(DATA / name)
    assert tok.model._kernel is not None
    for text in edge_texts()[:200] + ["abc abd uuu  xx", bench_slice("en", 3000)]:
        try:
            expected = sp.encode(text)
        except RuntimeError:
            continue
        assert tok.encode(text) == expected, text[:80]


@pytest.mark.parametrize("name", list(OPTIONS))
def test_synthetic_options_fixed_words(name):
    pure, fast = build(name)
    words = ["abc", "abcd", "bcd", "abab", "ababab", "<x>", "a<x>b", "efg", "aa", "aaa", "aaaa", "aaaaa", "é", "aéb",
             "!", "a!", "uu", "uuu", "uuuu", "▁a", "▁▁a", "a▁▁b", "ab▁cd", "▁▁▁", "<x", "x>", "éé", "ca", "cac",
             "acac", "caca", "ef", "efef", "gg", "ggg", "g", "gggg", "ggggg", "gga", "▁ab", "▁abc",
             "日日日", "日本", "😀😀", "e\u0301", "\ud800", "a\ud800b",
             "", "zzz", "zaz", "qq日q", "\x00", "a\u0301", "bac", "abcabcab"]
    same(pure, fast, words)


@pytest.mark.parametrize("name", list(OPTIONS))
@settings(max_examples=150, deadline=None)
@given(st.text(alphabet=st.sampled_from("abcdefgux<>!▁日😀\u0301z\ud800é"), max_size=60))
def test_synthetic_options_hypothesis(name, text):
    pure, fast = build(name)
    same(pure, fast, [text])


def test_long_words_all_options():
    rng = random.Random(7)
    for name in OPTIONS:
        pure, fast = build(name)
        sizes = (95, 96, 97, 500, 2047, 2048, 9000)
        words = ["".join(rng.choice("abcdefgu▁日é") for _ in range(size)) for size in sizes]
        words += ["a" * 5000, "ab" * 3000, "u" * 4001]
        same(pure, fast, words)


def test_whole_symbols_are_frozen_and_cut_longest_first():
    pure, fast = build("unk_symbols")
    same(pure, fast, ["▁ab", "▁abc", "gggg", "ggga", "gga"])
    ids = {piece: i for i, (piece, _, _) in enumerate(VOCAB)}
    assert fast.tokenize("▁ab") == [ids["▁a"], ids["b"]]  # not "▁ab": "▁a" is frozen
    assert fast.tokenize("gggga") == [ids["ggg"], ids["g"], ids["a"]]  # "ggg", the longest symbol at 0


def test_score_ties_go_to_the_leftmost_pair():
    pure, fast = pair([("a", -1.0), ("b", -1.0), ("ab", -2.0), ("ba", -2.0), ("aba", -1.0), ("bab", -1.0)])
    same(pure, fast, ["aba", "bab", "abab", "babab", "ababab", "b" + "ab" * 60])
    assert fast.tokenize("abab") == [4, 1]  # "ab" (left) first, then "aba"; the right tie would give a, bab


def test_negative_zero_and_infinities():
    vocab = [("a", 0.0), ("b", 0.0), ("ab", -5e-324), ("ba", 0.0), ("bb", float("inf")), ("aa", float("-inf"))]
    same(*pair(vocab), ["ab", "aba", "bab", "abba", "aabb", "bbaa", "aaaa"])


PIECES3 = [a + b + c for a in "abc" for b in ("", *"abc") for c in ("", *"abc") if b or not c]
SCORES = st.sampled_from([3.0, 1.0, 0.0, -0.0, -5e-324, -1.0, -2.5, -1e9, float("inf"), float("-inf")])


def _scores_in_part_order(draw):
    """Scores for PIECES3: descending but for a few drawn out of place (the -1e9 pieces of
    sentencepiece files), or in no order at all."""
    scores = sorted(draw(st.lists(SCORES, min_size=len(PIECES3), max_size=len(PIECES3))), reverse=True)
    if draw(st.booleans()):
        return draw(st.permutations(scores))
    for _ in range(draw(st.integers(0, 6))):
        i, j = draw(st.integers(0, len(scores) - 1)), draw(st.integers(0, len(scores) - 1))
        scores.insert(j, scores.pop(i))
    return scores


@settings(max_examples=150, deadline=None)
@given(st.data(), st.lists(st.text(alphabet="abc", min_size=1, max_size=14), min_size=1, max_size=8))
def test_scores_out_of_order_rank_as_the_pure_path(data, words):
    """Ranks follow the scores whatever the entries' order: equal scores (0.0 and -0.0) share one,
    and a few entries breaking a descending order rank as a full sort would."""
    scores = _scores_in_part_order(data.draw)
    vocab = list(zip(PIECES3, scores))
    same(*pair(vocab), words)


def test_nan_score_keeps_the_pure_path():
    with polytok.kernels.pure_path():
        pure = SPM([("a", 0.0), ("b", 0.0), ("ab", float("nan")), ("ba", -1.0)])
    fast = SPM([("a", 0.0), ("b", 0.0), ("ab", float("nan")), ("ba", -1.0)])
    assert fast._kernel is None
    assert fast.tokenize("abab") == pure.tokenize("abab")


def test_a_key_with_a_colliding_hash_is_not_the_piece():
    # "a\U000943d5" and "a\U000dcbc8" share the high 32 bits and the low 4 bits of the kernel's
    # hash (FNV-1a + the MurmurHash3 finaliser): in a 16-slot table the word's pair probes the
    # piece's slot, and only the key compare tells them apart.
    piece, word = "a\U000943d5", "a\U000dcbc8"
    pure, fast = pair([("<unk>", 0.0), ("a", -1.0), (piece, -1.0)], unknown="unk", unk_id=0)
    same(pure, fast, [word, piece, word + piece])
    assert fast.tokenize(word) == [1, 0]


def test_duplicate_piece_uses_the_last_id():
    vocab = [("a", -1.0), ("b", -1.0), ("ab", -9.0), ("c", -1.0), ("ab", -0.5), ("bc", -1.0)]
    pure, fast = pair(vocab)
    same(pure, fast, ["abc", "ab", "cab"])
    assert fast.tokenize("ab") == [4]


def test_missing_byte_piece_raises_as_the_pure_path():
    pure, fast = pair([("a", -1.0), ("<0xC3>", 0.0)])
    with pytest.raises(EncodeError):
        fast.tokenize("aé")
    same(pure, fast, ["aé", "a", "é", "ab"])
    pure, fast = pair([("a", -1.0), ("<0xC3>", 0.0)], unknown="byte_fallback")
    same(pure, fast, ["aé", "a", "é", "ab"])


def test_returned_lists_are_fresh():
    _, fast = build("llama")
    first = fast.tokenize("abc")
    first.append(99)
    assert fast.tokenize("abc") == fast._fresh_ids("abc")
    fast.tokenize_all(["abc", "abc"]).append(7)
    assert fast.tokenize("abc") == fast._fresh_ids("abc")


def test_cache_bounded_and_cleared_when_full(monkeypatch):
    """The compiled path fills and clears the word cache exactly as `WordCache.remember` does."""
    pure, fast = pair([("a", -1.0), ("b", -1.0), ("ab", -0.5)])
    monkeypatch.setattr("polytok.models.spm.CACHE_SIZE", 4)
    monkeypatch.setattr("polytok.models._cache.CACHE_SIZE", 4)
    fast._kernel = fast._compiled()
    words = ["ab" * k for k in range(1, 12)] + ["b" * 255, "b" * 256, "a"]
    for word in words:
        assert fast.tokenize(word) == pure.tokenize(word)
        assert fast._cache == pure._cache
    fast._cache.clear()
    pure._cache.clear()
    assert fast.tokenize_all(words) == pure.tokenize_all(words)
    assert fast._cache == pure._cache


def test_pickle_rebuilds_the_kernel():
    pure, fast = build("byte_fallback")
    fast.tokenize("abcabc")
    again = pickle.loads(pickle.dumps(fast))
    assert again._kernel is not None and len(again._cache) == 0
    same(pure, again, ["abcabc", "uuu", "éa", "▁a▁a"])


def test_threads_share_one_model():
    pure, fast = build("unk_unused")
    rng = random.Random(3)
    batches = [["".join(rng.choice("abcdefgu▁日") for _ in range(rng.choice((5, 50, 3000)))) for _ in range(40)]
               for _ in range(4)]
    expected = [pure.tokenize_all(batch) for batch in batches]
    results: list[list[int] | None] = [None] * len(batches)

    def run(index):
        for _ in range(3):
            fast._cache.clear()
            results[index] = fast.tokenize_all(batches[index])

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(batches))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results == expected


def test_hostile_arguments_do_not_crash():
    module = compiled("spm_merge")
    merger = module.Merger.__new__(module.Merger)
    assert merger.ids("abc") is not None  # never initialised: an empty table spells bytes
    with pytest.raises(TypeError):
        module.Merger({1: 2}, {}, (), (), [None] * 256, 0, -1, 10, 10)
    with pytest.raises(ValueError):
        module.Merger({}, {}, (), (), [None] * 255, 0, -1, 10, 10)
    with pytest.raises(ValueError):
        module.Merger({}, {}, (), (), [None] * 256, 7, -1, 10, 10)
    with pytest.raises(ValueError):
        module.Merger({"a": 0}, {"a": float("nan")}, (), (), [None] * 256, 0, -1, 10, 10)
    merger = module.Merger({"a": 0}, {"a": 0.0}, (), (), [None] * 256, 0, -1, 10, 10)
    with pytest.raises(TypeError):
        merger.ids(b"a")
    with pytest.raises(TypeError):
        merger.tokenize("a", [], lambda w: [])
    assert merger.ids("b") is None  # no piece for the byte: the pure path decides
    assert merger.tokenize_all(["b", "a"], {}, lambda w: [-7]) == [-7, 0]
