"""The compiled batch pipeline (polytok._kernels.batch) on byte-level BPE: tiktoken's and tekken's
files (a known pattern's scanner, then each piece's UTF-8 bytes merged by the `bpe_merge`
Merger's C entry), against the pure pipeline and live against tiktoken 0.14.0 and mistral-common's
Tekkenizer.

Texts: the bench lines, the edge texts, special markers (read as text, and parsed: then no
pipeline), lone surrogates (left to the pure path, which repairs them), empty lines, long words
around the merge's limits (64 bytes: scan / heap), and hypothesis text; random byte-level models
with and without ``ignore_merges``.
"""

from __future__ import annotations

import functools
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import polytok
import polytok.kernels
from polytok.kernels import pure_path
from polytok.models._bpe_bytes import batch_merger, byte_form
from polytok.models.bpe import BPE
from polytok.parallel.threads import encode_on_threads
from polytok.text.byte_alphabet import BYTES_TO_CHARS

from ._compiled import compiled, pure_and_compiled

FILES = {"cl100k_base-tiktoken": "cl100k_base.tiktoken", "llama3-tiktoken": "tokenizer.model",
         "tekken-240718": "tekken.json", "tekken-240911": "tekken.json"}
TIKTOKEN = ["cl100k_base-tiktoken", "llama3-tiktoken"]
TEKKEN = ["tekken-240718", "tekken-240911"]
CORPORA = ("bench_en", "bench_code", "bench_multi")
LONG = ["a" * 64, "a" * 65, "é" * 32, "é" * 33, "€" * 22, "😀" * 16, "😀" * 17, "x" * 5000, "ab" * 2100,
        "你好世界" * 400, "\u0100" * 300, "0123456789" * 9, "\x00\x01\x7f\x80" * 20, "Ġ" * 40]
ODD_LINES = ["", " ", "   ", "\t", "\n", "a", "\r\n\r\n", "ok \udfff here", "\ud83d\ude00 pair", "\ud800",
             "<|endoftext|>", "x<|endoftext|>y", "<|begin_of_text|> hi <|eot_id|>", "<s>[INST] hi [/INST]</s>",
             "<unk> <SPECIAL_20>", "日本語のテキスト", "\u0301", "a\u200db", "\x00", "1234567890", "don't I'LL"]


@pytest.fixture(scope="module", autouse=True)
def _module():
    compiled("batch")


@functools.cache
def loaded(name: str) -> tuple[polytok.Tokenizer, polytok.Tokenizer]:
    """The file loaded on the pure path and with the kernels."""
    from fixtures import fixture_path

    return pure_and_compiled(str(fixture_path(name, FILES[name])))


def lines_of(text: str) -> list[str]:
    return [line for line in text.split("\n") if line]


def bench_lines(n_chars: int) -> list[str]:
    from fixtures import bench_slice

    return [line for corpus in CORPORA for line in lines_of(bench_slice(corpus, n_chars))]


def outcome(call, *args, **kwargs):
    try:
        return call(*args, **kwargs)
    except (polytok.EncodeError, UnicodeError) as error:
        return type(error).__name__, str(error)


def expected_batch(pure: polytok.Tokenizer, lines: list[str], **options):
    """The pure path's per-line ids, or the first line's error (what `encode_batch` raises)."""
    out = [outcome(pure.encode, line, **options) for line in lines]
    for item in out:
        if isinstance(item, tuple):
            return item
    return out


def no_surrogate(line: str) -> bool:
    return not any(0xD800 <= ord(c) <= 0xDFFF for c in line)


# -- real files -----------------------------------------------------------------------------------


@pytest.mark.parametrize("name", list(FILES))
def test_every_bench_line_runs_in_c(name):
    """The pipeline decides every bench line itself (so the comparisons test C, not the fallback)."""
    pure, fast = loaded(name)
    pipeline = fast.batch_pipeline(False)
    assert pipeline is not None
    # parsing markers: a text holding the first character of a special token goes to the pure path
    stops = set("<[" if name.startswith("tekken") else "<")
    texts = ["<s>", "[INST]", "ab", "a<b"]
    assert fast.batch_pipeline(True).encode(texts, 0, len(texts)) == \
        [None if stops & set(text) else pure.encode(text, add_special=False, special="parse") for text in texts]
    lines = bench_lines(60000) + LONG
    found = pipeline.encode(lines, 0, len(lines))
    assert None not in found
    assert found == [pure.encode(line, add_special=False) for line in lines]


@pytest.mark.parametrize("name", list(FILES))
def test_files_against_the_pure_path(name):
    from fixtures import edge_texts

    pure, fast = loaded(name)
    lines = bench_lines(30000) + edge_texts() + ODD_LINES + LONG
    for options in ({}, {"add_special": False}, {"special": "text"}, {"special": "parse"}):
        want = expected_batch(pure, lines, **options)
        assert outcome(fast.encode_batch, lines, **options) == want
        assert outcome(fast.encode_batch, lines, workers=2, **options) == want
    pipeline = fast.batch_pipeline(False)
    found = pipeline.encode(ODD_LINES, 0, len(ODD_LINES))
    assert [ids is None for ids in found] == [not no_surrogate(line) for line in ODD_LINES]


@pytest.mark.parametrize("name", TIKTOKEN)
def test_tiktoken_files_against_tiktoken(name):
    tiktoken = pytest.importorskip("tiktoken")
    from fixtures import edge_texts, fixture_path
    from tiktoken.load import load_tiktoken_bpe

    from polytok.formats.tiktoken_known import KNOWN_RANKS

    _, fast = loaded(name)
    path = str(fixture_path(name, FILES[name]))
    known = KNOWN_RANKS[fast.facts.details["sha256"]]
    ref = tiktoken.Encoding(known.name, pat_str=known.pattern, mergeable_ranks=load_tiktoken_bpe(path),
                            special_tokens=known.special_tokens)
    lines = bench_lines(30000) + edge_texts() + ODD_LINES + LONG
    assert fast.encode_batch(lines, workers=2) == ref.encode_ordinary_batch(lines, num_threads=1)


@pytest.mark.parametrize("name", TEKKEN)
def test_tekken_files_against_tekkenizer(name):
    pytest.importorskip("mistral_common")
    from fixtures import edge_texts, fixture_path
    from mistral_common.tokens.tokenizers.tekken import Tekkenizer

    _, fast = loaded(name)
    ref = Tekkenizer.from_file(str(fixture_path(name, FILES[name])))
    lines = bench_lines(30000) + edge_texts() + ODD_LINES + LONG
    lines = [line for line in lines if no_surrogate(line)]  # (mistral-common refuses them)
    assert fast.encode_batch(lines, workers=2) == [ref.encode(line, bos=True, eos=False) for line in lines]
    assert fast.encode_batch(lines, add_special=False) == [ref.encode(line, bos=False, eos=False) for line in lines]


@pytest.mark.parametrize("name", ["cl100k_base-tiktoken", "tekken-240718"])
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lines=st.lists(st.text(alphabet=st.characters(codec=None, exclude_categories=()), max_size=40), max_size=12))
def test_random_lines(name, lines):
    pure, fast = loaded(name)
    assert outcome(fast.encode_batch, lines, workers=2) == expected_batch(pure, lines)


def test_threads_give_the_one_thread_ids():
    _, fast = loaded("cl100k_base-tiktoken")
    pipeline = fast.batch_pipeline(False)
    lines = bench_lines(50000)
    one = pipeline.encode(lines, 0, len(lines))
    for threads in (2, 3, 8):
        assert encode_on_threads(pipeline, lines, threads) == one


# -- random byte-level models ----------------------------------------------------------------------


def _tiny_byte_model(rng: random.Random, ignore_merges: bool) -> tuple[BPE, BPE]:
    """A random ``byte_level`` model: every byte, then random entries of 2 to 10 bytes at random ranks."""
    extra: list[str] = []
    source = "abcé€ 😀\n"
    for _ in range(rng.randrange(0, 80)):
        form = byte_form("".join(rng.choice(source) for _ in range(rng.randrange(1, 6))))
        if len(form) >= 2 and form not in extra:
            extra.append(form)
    ranks = list(range(256, 256 + len(extra)))
    rng.shuffle(ranks)
    order = list(range(256))
    rng.shuffle(order)
    vocab = dict(zip(BYTES_TO_CHARS, order)) | dict(zip(extra, ranks))
    fast = BPE(vocab, [], ignore_merges=ignore_merges, merge_priority="token_id", byte_level=True)
    with pure_path():
        pure = BPE(vocab, [], ignore_merges=ignore_merges, merge_priority="token_id", byte_level=True)
    return fast, pure


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32), ignore_merges=st.booleans(),
       lines=st.lists(st.text("abcé€ 😀\n\u00ff\u0100x", max_size=90), max_size=10))
def test_random_byte_models_merge_as_the_pure_model(seed, ignore_merges, lines):
    """Each piece of the scanner (cl100k's pattern) merged by the C entry, words over 64 bytes
    through its heap, ``ignore_merges`` taking a word that spells an entry whole."""
    split = compiled("split")
    module = compiled("batch")
    fast, pure = _tiny_byte_model(random.Random(seed), ignore_merges)
    scanner = split.SCANNERS["cl100k"]
    pipeline = module.Pipeline(None, "", False, False, False, scanner, fast.batch_kernel())
    want = [pure.tokenize_all(split.scan(scanner, line)) if line else [] for line in lines]
    assert pipeline.encode(lines, 0, len(lines)) == want


def test_ignore_merges_takes_a_whole_word_the_merge_would_not_make():
    """A word spelling an entry that no merge order reaches is that entry with ``ignore_merges``."""
    module = compiled("batch")
    vocab = {c: i for i, c in enumerate(BYTES_TO_CHARS)} | {"abc": 300, "xy": 256}
    for ignore, want in ((True, [300]), (False, [ord("a"), ord("b"), ord("c")])):
        model = BPE(vocab, [], ignore_merges=ignore, merge_priority="token_id", byte_level=True)
        with pure_path():
            pure = BPE(vocab, [], ignore_merges=ignore, merge_priority="token_id", byte_level=True)
        assert pure.tokenize("abc") == want
        pipeline = module.Pipeline(None, "", False, False, False, "", model.batch_kernel())
        assert pipeline.encode(["abc"], 0, 1) == [want]


# -- which models have a batch form ------------------------------------------------------------------


def test_only_the_plain_byte_level_model_has_a_batch_form():
    vocab = {c: i for i, c in enumerate(BYTES_TO_CHARS)} | {"ab": 256}
    assert BPE(vocab, [], merge_priority="token_id", byte_level=True).batch_kernel() is not None
    assert BPE(vocab, [], merge_priority="token_id", byte_level=True, ignore_merges=True).batch_kernel() is not None
    assert BPE(vocab, [], merge_priority="token_id", byte_level=True, dropout=0.5).batch_kernel() is None
    with pure_path():
        assert BPE(vocab, [], merge_priority="token_id", byte_level=True).batch_kernel() is None
    assert batch_merger(True, None, lambda: 1) is None


def test_a_merger_the_entry_does_not_cover_is_refused():
    """A Merger over spelt words with ignore_merges (its whole-word lookup reads the vocabulary
    dict) is not a batch model."""
    module = compiled("batch")
    vocab = {c: i for i, c in enumerate(BYTES_TO_CHARS)} | {"ab": 256}
    model = BPE(vocab, [("a", "b")], ignore_merges=True)
    model.tokenize("ab")
    assert model.batch_kernel() is None
    merger = model._compiled()
    assert not merger.batch_covered()
    with pytest.raises(TypeError, match="model must be"):
        module.Pipeline(None, "", False, False, False, "", merger)
