"""The compiled Unigram Viterbi (polytok._kernels.unigram) against the pure-Python `Unigram`, and live
against sentencepiece 0.2.3 where the float32 path is pushed past its score reset.

Every Unigram fixture (tokenizer.json, .model, the synthetic .model files of tests/data), the bench
slices, the edge texts, every option of `Unigram` on hypothesis text (ties, unknown runs, byte
fallback, lone surrogates, astral characters), hostile scores, pickling and threads.
"""

from __future__ import annotations

import math
import pickle
import random
import struct
import threading
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import polytok
import polytok.kernels
from polytok.errors import EncodeError
from polytok.models.unigram import Unigram

from ._compiled import compiled

DATA = Path(__file__).resolve().parent.parent / "data" / "sentencepiece"
FILES = [("albert-base-v2-tf5", "tokenizer.json"), ("marian-nmt", "tokenizer.json"), ("marian-nmt", "vocab.joint.spm"),
         ("spm-botchan-unigram-1000", "spm.model"), ("spm-kyoto-ja-unigram-8000", "spm.model")]
SYNTHETIC = sorted(p.name for p in DATA.glob("unigram-*.model"))
CORPORA = ("bench_en", "bench_code", "bench_multi")
ALPHABET = "ab▁c日😀\u0301 \t\ud800xé"


@pytest.fixture(scope="module", autouse=True)
def _module():
    compiled("unigram")


def _f32(x: float) -> float:
    return struct.unpack("<f", struct.pack("<f", x))[0]


def pair(*args, **options):
    """The same `Unigram`, pure and compiled."""
    with polytok.kernels.pure_path():
        pure = Unigram(*args, **options)
    fast = Unigram(*args, **options)
    assert pure._lattice is None and fast._lattice is not None
    return pure, fast


def outcome(call, text):
    """The result, or the error's type and message (a normalizer refuses lone surrogates in both paths)."""
    try:
        return call(text)
    except (EncodeError, UnicodeError) as error:
        return (type(error).__name__, str(error))


def check(pure, fast, texts):
    for text in texts:
        assert outcome(fast.tokenize, text) == outcome(pure.tokenize, text), text
        assert outcome(fast.tokenize_spans, text) == outcome(pure.tokenize_spans, text), text
        assert outcome(fast._word_ids, text) == outcome(pure._word_ids, text), text  # past the cache
        words = [text, text[:3], text, ""]
        assert outcome(fast.tokenize_all, words) == outcome(pure.tokenize_all, words), text


def load_pair(path):
    with polytok.kernels.pure_path():
        pure = polytok.load(str(path))
    fast = polytok.load(str(path))
    assert pure.model._lattice is None and fast.model._lattice is not None
    return pure, fast


def _fixture(name, filename):
    from fixtures import fixture_path

    return fixture_path(name, filename)


# -- real files ------------------------------------------------------------------------------------


@pytest.mark.parametrize(("name", "filename"), FILES)
def test_fixtures_on_bench_slices_and_edge_texts(name, filename):
    from fixtures import bench_slice, edge_texts

    pure, fast = load_pair(_fixture(name, filename))
    texts = [bench_slice(corpus, 30000) for corpus in CORPORA] + edge_texts()
    for text in texts:
        assert fast.encode(text) == pure.encode(text)
    for text in texts[3:] + [texts[0][:3000], texts[2][:3000]]:
        assert fast.encode_full(text).offsets == pure.encode_full(text).offsets
    words = [w for text in texts for w in fast.pre_tokens(fast.normalize(text))]
    assert fast.model.tokenize_all(words) == pure.model.tokenize_all(words)
    for word in words[:2000]:
        assert fast.model.tokenize_spans(word) == pure.model.tokenize_spans(word)


@pytest.mark.parametrize("name", SYNTHETIC)
def test_synthetic_sentencepiece_models(name):
    from fixtures import bench_slice, edge_texts

    pure, fast = load_pair(DATA / name)
    for text in [bench_slice(corpus, 5000) for corpus in CORPORA] + edge_texts():
        assert fast.encode(text) == pure.encode(text)


@pytest.mark.parametrize(("name", "filename"), FILES)
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.text(alphabet=st.characters(codec=None, exclude_categories=()), max_size=60))
def test_fixtures_on_random_text(name, filename, text):
    pure, fast = _loaded(name, filename)
    assert outcome(fast.encode, text) == outcome(pure.encode, text)


_LOADED: dict[tuple[str, str], tuple[polytok.Tokenizer, polytok.Tokenizer]] = {}


def _loaded(name, filename):
    if (name, filename) not in _LOADED:
        _LOADED[name, filename] = load_pair(_fixture(name, filename))
    return _LOADED[name, filename]


# -- every option on synthetic vocabularies -----------------------------------------------------------

BYTES = [(f"<0x{b:02X}>", -7.0) for b in range(256)]
TIES = [("<unk>", -5.0), ("a", -1.0), ("b", -1.0), ("ab", -2.0), ("▁", -0.5), ("▁a", -1.5), ("c", -1.0),
        ("bc", -2.0), ("abc", -3.0), ("日", -2.0), ("日▁", -2.5), ("😀", -1.0), ("e\u0301", -1.0), ("\ud800", -3.0),
        ("\ud800a", -4.0), ("", 5.0), ("ab", -1.75), ("x", -4.0)]
OPTIONS = {
    "hf": {},
    "hf-unk-none": dict(unk=None),
    "hf-bytes": dict(byte_fallback=True),
    "hf-bytes-partial": dict(byte_fallback=True, partial_bytes=True),
    "llama-ugm": dict(matchable=True, zero_score=True, unk_score=-9.0, unknown_runs="collapse"),
    "llama-ugm-unk-none": dict(unk=None, matchable=True, unknown_runs="collapse"),
    "spm": dict(matchable=True, unk_score=_f32(-11.3), unknown_runs="collapse", float32=True),
    "spm-bytes": dict(matchable=True, unknown_runs="collapse", float32=True, byte_fallback=True),
    "spm-bytes-partial": dict(unknown_runs="collapse", float32=True, byte_fallback=True, partial_bytes=True),
    "spm-unk-none": dict(unk=None, unknown_runs="collapse", float32=True),
    "f32-fuse": dict(float32=True),
    "f32-fuse-unk-none": dict(unk=None, float32=True),
    "collapse-bytes-f64": dict(unknown_runs="collapse", byte_fallback=True),
}


def build(vocab, options):
    options = dict(options)
    unk = options.pop("unk", 0)
    vocab = list(vocab)
    if options.get("byte_fallback"):
        vocab += BYTES[::2] if options.pop("partial_bytes", False) else BYTES
    if options.get("matchable") is True:
        options["matchable"] = [i % 5 != 3 for i in range(len(vocab))]
    if options.get("zero_score") is True:
        options["zero_score"] = [i % 7 == 2 for i in range(len(vocab))]
    return pair(vocab, unk, options.pop("byte_fallback", False), **options)


EDGE = ["", "a", "ab", "abab", "abc", "▁a▁a", "xyz", "qqq", "qaq", "日日▁", "😀😀q😀", "e\u0301e\u0301",
        "\ud800a\ud800", "\udfff", "a\x00b", "é", "q\ud800q", "  \t ", "ab" * 300, "qz" * 200]


@pytest.mark.parametrize("option", list(OPTIONS))
def test_options_on_edge_words(option):
    pure, fast = build(TIES, OPTIONS[option])
    check(pure, fast, EDGE)


@pytest.mark.parametrize("option", list(OPTIONS))
@settings(max_examples=150, deadline=None)
@given(text=st.text(alphabet=ALPHABET + "qz\U0001F600", max_size=40))
def test_options_on_random_words(option, text):
    pure, fast = _built(option)
    check(pure, fast, [text])


_BUILT: dict[str, tuple[Unigram, Unigram]] = {}


def _built(option):
    if option not in _BUILT:
        _BUILT[option] = build(TIES, OPTIONS[option])
    return _BUILT[option]


SCORES = st.sampled_from([0.0, -0.0, -1.0, -2.0, -0.5, -1.5, -3.0, 1.0, -35000.0, -35000.5, -70000.0, 2.5e-7,
                          -1e-30, -1e9, _f32(-0.1), -12.25])


@settings(max_examples=300, deadline=None)
@given(pieces=st.lists(st.tuples(st.text(alphabet="ab▁c日😀\ud800", max_size=4), SCORES), min_size=1, max_size=25),
       text=st.text(alphabet="ab▁c日😀\ud800q", max_size=50), option=st.sampled_from(list(OPTIONS)))
def test_random_vocabularies(pieces, text, option):
    """Random vocabularies: ties everywhere, duplicated pieces, large scores (float32's score reset)."""
    pure, fast = build([("<unk>", -3.0), *pieces], OPTIONS[option])
    check(pure, fast, [text, text * 3])


EDGE_CHARS = "a\x01\xff\u0100\u0101\u01ff\u0200\u2581\ufffe\uffff\U00010000\U0010ffff"


@settings(max_examples=200, deadline=None)
@given(pieces=st.lists(st.tuples(st.text(alphabet=EDGE_CHARS, min_size=1, max_size=3), SCORES), min_size=1,
                       max_size=20),
       text=st.text(alphabet=EDGE_CHARS + "\xfe\u0102\u3042", max_size=40), option=st.sampled_from(list(OPTIONS)))
def test_first_characters_at_the_root_table_edges(pieces, text, option):
    """Pieces starting at the edges of the root's direct table (its pages of 256 code points, its end
    at U+FFFF) and past it match as in the pure loop."""
    pure, fast = build([("<unk>", -3.0), *pieces], OPTIONS[option])
    check(pure, fast, [text])


def test_float32_score_reset_on_a_long_text():
    """Scores near -35000 make the best path leave [-100000, 100000] every few characters."""
    vocab = [("<unk>", 0.0), ("a", -35000.0), ("b", -35000.5), ("ab", -70000.5), ("ba", -70000.0), ("▁", -1.0),
             ("▁a", -35001.0), ("aba", -105000.5)]
    pure, fast = pair(vocab, 0, matchable=[True] * len(vocab), unk_score=-105000.0, unknown_runs="collapse",
                      float32=True)
    rng = random.Random(5)
    texts = ["".join(rng.choice("ab▁q") for _ in range(n)) for n in (1, 5, 50, 500, 5000)]
    check(pure, fast, texts)


def test_hostile_scores_and_unknown_ids():
    """NaN and infinite scores (a constructor call, not a reader) give the pure path's answer, no crash."""
    vocab = [("<unk>", math.nan), ("a", math.inf), ("b", -math.inf), ("ab", math.nan), ("c", -1e308), ("cc", -1e308),
             ("<0x71>", 0.0)]
    texts = ["a", "ab", "abab", "ccc", "qcq", "ba", "cab" * 50]
    for options in ({}, dict(float32=True), dict(unknown_runs="collapse"), dict(unk_score=math.nan),
                    dict(unknown_runs="collapse", float32=True, unk_score=math.inf)):
        for byte_fallback in (False, True):
            pure, fast = pair(vocab, 0, byte_fallback, **options)
            check(pure, fast, texts)
    check(*pair([], None), ["", "a"])
    check(*pair([], None, unknown_runs="collapse"), ["", "a"])
    check(*pair([("a", 0.0)], None, float32=True), ["", "a", "ba"])


def test_unknown_without_unk_id_raises_the_same_error():
    pure, fast = pair([("a", -1.0), ("b", -1.0)], None)
    with pytest.raises(EncodeError, match="character 'q' has no piece"):
        fast.tokenize("abq")
    check(pure, fast, ["abq", "q", "\ud800", "😀a"])


def test_byte_fallback_with_a_missing_byte_raises_the_same_error():
    pure, fast = pair([("<unk>", 0.0), ("a", -1.0), ("<0x71>", -2.0)], 0, True, unknown_runs="collapse", float32=True)
    assert fast.tokenize("aqa") == [1, 2, 1]
    with pytest.raises(EncodeError, match="no piece '<0xE6>'"):
        fast.tokenize("a日")
    check(pure, fast, ["aqa", "a日", "\ud800"])


def test_a_long_word_and_threads():
    pure, fast = build(TIES, OPTIONS["spm-bytes"])
    rng = random.Random(7)
    long_word = "".join(rng.choice(ALPHABET + "q") for _ in range(200000))
    expected = pure._word_ids(long_word)
    results: list[list[int]] = []

    def run():
        results.append(fast._word_ids(long_word))

    threads = [threading.Thread(target=run) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results == [expected] * 4
    assert fast._word_ids("ab" * 500000) == pure._word_ids("ab" * 500000)


def test_pickle_keeps_the_compiled_path():
    pure, fast = build(TIES, OPTIONS["spm"])
    again = pickle.loads(pickle.dumps(fast))
    assert again._lattice is not None
    check(pure, again, EDGE)
    with polytok.kernels.pure_path():
        plain = pickle.loads(pickle.dumps(fast))
    assert plain._lattice is None and plain._viterbi32 is not None
    check(plain, again, EDGE)
    with pytest.raises(TypeError):
        pickle.dumps(fast._lattice)


def test_lattice_refuses_bad_arguments():
    module = compiled("unigram")
    with pytest.raises(ValueError):
        module.Lattice(["a"], [5], [0.0], -1, 0.0, False, False, False, None)
    with pytest.raises(ValueError):
        module.Lattice([], [], [0.0], 3, 0.0, False, False, False, None)
    with pytest.raises(TypeError):
        module.Lattice([1], [0], [0.0], -1, 0.0, False, False, False, None)
    with pytest.raises(TypeError):
        module.Lattice([], [], [0.0], -1, 0.0, False, False, False, [0] * 3)
    lattice = module.Lattice.__new__(module.Lattice)
    with pytest.raises(RuntimeError):
        lattice.nodes("a", False)
    lattice = module.Lattice(["a"], [0], [0.0], -1, 0.0, False, False, False, None)
    with pytest.raises(RuntimeError):
        lattice.__init__(["a"], [0], [0.0], -1, 0.0, False, False, False, None)
    with pytest.raises(TypeError):
        lattice.nodes(b"a", False)
    class Shrinks:  # converting it empties the list it sits in
        def __init__(self, into):
            self.into = into

        def __index__(self):
            self.into.clear()
            return 0

        def __float__(self):
            self.into.clear()
            return 0.0

    scores = [0.0] * 3
    scores[0] = Shrinks(scores)
    lattice = module.Lattice(["a", "b", "c"], [0, 1, 2], scores, -1, 0.0, False, False, False, None)
    assert lattice.nodes("abc", True) == ([0, 1, 2], [1, 2, 3])
    ids = [0, 1, 2]
    ids[1] = Shrinks(ids)
    with pytest.raises(TypeError):  # ids must be ints
        module.Lattice(["a", "b", "c"], ids, [0.0] * 3, -1, 0.0, False, False, False, None)
    byte_ids = [None] * 256
    byte_ids[0] = Shrinks(byte_ids)
    with pytest.raises(TypeError):
        module.Lattice(["a"], [0], [0.0], -1, 0.0, False, False, True, byte_ids)
    twice = module.Lattice(["a", "ab", "a"], [0, 1, 2], [0.0, -5.0, -1.0], -1, -9.0, False, False, True, None)
    assert twice.nodes("aab", True) == ([2, 1], [1, 3])  # a piece given twice matches as its last id
    assert twice.nodes("bb", False) == ([-1], None)  # one unknown run, collapsed


# -- live: sentencepiece past its score reset -----------------------------------------------------


@pytest.fixture(scope="module")
def scaled_model(tmp_path_factory):
    """kyoto-ja's .model with every score times 4000 (still float32 values): sentencepiece's best path
    leaves [-100000, 100000] every few characters, so its score reset runs all the time."""
    spm = pytest.importorskip("sentencepiece")
    from sentencepiece import sentencepiece_model_pb2

    proto = sentencepiece_model_pb2.ModelProto()
    proto.ParseFromString(_fixture("spm-kyoto-ja-unigram-8000", "spm.model").read_bytes())
    for piece in proto.pieces:
        piece.score = _f32(piece.score * 4000.0)
    path = tmp_path_factory.mktemp("spm") / "scaled.model"
    path.write_bytes(proto.SerializeToString())
    return spm.SentencePieceProcessor(model_file=str(path)), polytok.load(str(path))


def test_score_reset_equals_sentencepiece_on_bench_slices(scaled_model):
    from fixtures import bench_slice

    sp, tok = scaled_model
    assert tok.model._lattice is not None
    for corpus in CORPORA:
        text = bench_slice(corpus, 20000)
        assert tok.encode(text) == sp.encode(text)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.text(alphabet="日本語のテキストabc ▁\u3000東京と京都。", max_size=80))
def test_score_reset_equals_sentencepiece_on_random_text(scaled_model, text):
    sp, tok = scaled_model
    assert tok.encode(text) == sp.encode(text)


@pytest.mark.parametrize("option", ["hf", "hf-unk-none", "spm-bytes", "llama-ugm"])
def test_words_past_the_kernel_limit_run_the_pure_loop(option, monkeypatch):
    """A word longer than the kernel's int32 positions takes the pure loop (its tables built then)."""
    import polytok.models.unigram as unigram

    pure, fast = build(TIES, OPTIONS[option])
    monkeypatch.setattr(unigram, "_COMPILED_MAX_CHARS", 4)
    assert fast._reach is None
    check(pure, fast, EDGE)
    assert fast._reach is not None


# -- HF's unknown runs rewritten in C, and the word loop ---------------------------------------------------


@pytest.mark.parametrize("byte_fallback", [False, True])
def test_fused_runs_that_spell_a_piece(byte_fallback):
    """A run of unknown nodes (a literal unknown piece among them) whose text is a piece takes that
    piece's last id; else its bytes when all exist; else the unknown id."""
    vocab = [("<unk>", 20.0), ("<unk>q", -5.0), ("a", -1.0), ("<unk>q", -6.0), ("<", -1.0), ("u", -1.0),
             ("n", -1.0), ("k", -1.0), (">", -1.0), *(BYTES[::3] if byte_fallback else [])]
    pure, fast = pair(vocab, 0, byte_fallback)
    assert fast._lattice is not None
    texts = ["<unk>q", "a<unk>qa", "q<unk>", "qq<unk>q", "<unk>\u00e9", "<unk>日q", "\x03", "\x00a", "<unk><unk>q",
             "a\x00\x03\x01", "\x00\x03\x06\x01", "\x01\x00\x03"]  # bytes whose pieces exist, then one missing
    check(pure, fast, texts)
    assert fast._word_ids("<unk>q") == pure._word_ids("<unk>q") == [3]


def test_word_loop_keeps_the_cache_rules(monkeypatch):
    """`tokenize_all` stores a new word shorter than CACHED_WORD_CHARS, empties a full cache first,
    and gives what `tokenize` gives, a word the kernel leaves out included."""
    from polytok.models import _cache

    pure, fast = build(TIES, OPTIONS["hf"])
    words = ["ab", "qq", "ab", "x" * 300, "日▁", "", "qq", "y" * 255, "y" * 256]
    assert fast.tokenize_all(words) == pure.tokenize_all(words) == [i for w in words for i in pure.tokenize(w)]
    assert set(fast._cache) == {"ab", "qq", "日▁", "", "y" * 255}
    fast._cache["ab"] = [99]  # a cached word is answered from the cache, as `tokenize` does
    assert fast.tokenize_all(["ab"]) == fast.tokenize("ab") == [99]
    fast._cache.clear()
    limit = 3
    fast._lattice.ids_all(["a", "b", "c"], fast._cache, limit, _cache.CACHED_WORD_CHARS, fast._word_ids)
    assert set(fast._cache) == {"a", "b", "c"}
    fast._lattice.ids_all(["ab"], fast._cache, limit, _cache.CACHED_WORD_CHARS, fast._word_ids)
    assert set(fast._cache) == {"ab"}
    calls = []

    def fallback(word):
        calls.append(word)
        return [7]

    assert fast._lattice.ids_all(["xyz"], {}, 10, 256, fallback) == fast._word_ids("xyz")  # final in C
    assert calls == []
    with pytest.raises(TypeError):
        fast._lattice.ids_all(["a", 5], {}, 10, 256, fallback)
    with pytest.raises(TypeError):
        fast._lattice.ids_all(["a"], {"a": (1,)}, 10, 256, fallback)
    unfused = polytok.kernels.compiled_module("unigram").Lattice(["<unk>", "a"], [0, 1], [-1.0, -1.0], 0, -11.0,
                                                                 False, False, False, None)
    assert unfused.ids_all(["aqa", "a"], {}, 10, 256, fallback) == [7, 1]  # a run left to the caller
    assert calls == ["aqa"]
    with pytest.raises(TypeError):
        unfused.ids_all(["q"], {}, 10, 256, lambda word: (1,))
    with pytest.raises(ValueError):
        polytok.kernels.compiled_module("unigram").Lattice(["a"], [0], [-1.0], 0, -11.0, False, False, True, None,
                                                            True)


def test_lattice_ids_none_are_the_pieces_indexes():
    lattice_type = polytok.kernels.compiled_module("unigram").Lattice
    pieces, scores = ["<unk>", "a", "ab", "a", "b"], [-1.0, -1.0, -1.5, -2.0, -1.0]
    given = lattice_type(pieces, list(range(5)), scores, 0, -12.0, False, False, False, None, True)
    positional = lattice_type(pieces, None, scores, 0, -12.0, False, False, False, None, True)
    for word in ("a", "ab", "abab", "bqa", "q"):
        assert positional.nodes(word, True) == given.nodes(word, True)
    assert positional.nodes("a", False)[0] == [3]  # a repeated piece: its last index
    with pytest.raises(TypeError):
        lattice_type(pieces, (0, 1, 2, 3, 4), scores, 0, -12.0, False, False, False, None)
    with pytest.raises(ValueError):
        lattice_type(pieces, None, scores[:3], 0, -1.0, False, False, False, None)
