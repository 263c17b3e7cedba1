"""The compiled batch pipeline (polytok._kernels.batch) against the pure pipeline, and live against
sentencepiece 0.2.3.

`Tokenizer.encode_batch` runs every stage in C, on threads, where each stage has a compiled form
(the `.model` files: sentencepiece's charsmap walk, the "▁+" split, SPM's merge or Unigram's
lattice). Every real and synthetic `.model` file, the bench lines, the edge texts and hypothesis
text; what the pipeline leaves to the pure path (lone surrogates, words the merge does not
decide, unknown pieces without a rule in C), every post-processing setting, threads, and the
object's own errors.
"""

from __future__ import annotations

import pickle
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import polytok
import polytok.kernels
from polytok.parallel.threads import encode_on_threads
from polytok.truncation import Padding, Truncation

from ._compiled import compiled, pure_and_compiled

DATA = Path(__file__).resolve().parent.parent / "data" / "sentencepiece"
REAL = [("spm-mistral-v1", "tokenizer.model"), ("spm-mistral-v3", "tokenizer.model"),
        ("spm-bpemb-en-100k", "spm.model"), ("spm-botchan-unigram-1000", "spm.model"),
        ("spm-botchan-bpe-1000", "spm.model"), ("spm-kyoto-ja-unigram-8000", "spm.model"),
        ("marian-nmt", "vocab.joint.spm")]
BENCH_ROWS = REAL[:4] + [REAL[5]]  # the benchmark's .model rows, and mistral v3
SYNTHETIC = sorted(p.name for p in DATA.glob("*.model"))
CORPORA = ("bench_en", "bench_code", "bench_multi")
ODD_LINES = ["", " ", "   ", "\t", "a", "▁", "▁▁x", "x▁", "a  b   c", "\ud800", "ok \udfff here", "<s>", "</s> <unk>",
             "x" * 5000, "é" * 300, "😀 " * 50, "日本語のテキスト", "\u0301", "a\u200db", "\x00", "1234567890"]


@pytest.fixture(scope="module", autouse=True)
def _module():
    compiled("batch")


def loaded(path: Path) -> tuple[polytok.Tokenizer, polytok.Tokenizer]:
    """The same file loaded on the pure path and with the kernels."""
    return pure_and_compiled(str(path))


def real(name: str, filename: str) -> Path:
    from fixtures import fixture_path

    return fixture_path(name, filename)


def lines_of(text: str) -> list[str]:
    return [line for line in text.split("\n") if line]


def outcome(call, *args, **kwargs):
    try:
        return call(*args, **kwargs)
    except (polytok.EncodeError, UnicodeError) as error:
        return type(error).__name__, str(error)


def pure_batch(pure: polytok.Tokenizer, lines: list[str], **options) -> list:
    return [outcome(pure.encode, line, **options) for line in lines]


def fast_batch(fast: polytok.Tokenizer, lines: list[str], **options) -> list:
    """The batch through the pipeline; a batch that raises is compared line by line (the pure
    path raises at the first failing line; so must the batch)."""
    return outcome(fast.encode_batch, lines, **options)


def expected_batch(pure: polytok.Tokenizer, lines: list[str], **options):
    """The pure path's per-line ids, or the first line's error (what `encode_batch` raises)."""
    out = pure_batch(pure, lines, **options)
    for item in out:
        if isinstance(item, tuple):
            return item
    return out


# -- real files ---------------------------------------------------------------------------------


@pytest.mark.parametrize(("name", "filename"), BENCH_ROWS)
def test_bench_rows_run_every_line_in_c(name, filename):
    """On the bench lines of the benchmark's rows, the pipeline decides every line itself (so the
    comparisons below test C, not the fallback)."""
    from fixtures import bench_slice

    pure, fast = loaded(real(name, filename))
    pipeline = fast.batch_pipeline(False)
    assert pipeline is not None
    for corpus in CORPORA:
        lines = lines_of(bench_slice(corpus, 60000))
        found = pipeline.encode(lines, 0, len(lines))
        assert None not in found
        assert found == [pure.encode(line, add_special=False) for line in lines]


@pytest.mark.parametrize(("name", "filename"), REAL)
def test_real_files_against_the_pure_path(name, filename):
    from fixtures import bench_slice, edge_texts

    pure, fast = loaded(real(name, filename))
    lines = [line for corpus in CORPORA for line in lines_of(bench_slice(corpus, 40000))]
    lines += edge_texts() + ODD_LINES
    for options in ({}, {"add_special": False}, {"special": "text"}, {"special": "parse"}):
        want = expected_batch(pure, lines, **options)
        assert fast_batch(fast, lines, **options) == want
        assert fast_batch(fast, lines, workers=2, **options) == want
    good = [line for line in lines if not any(0xD800 <= ord(c) <= 0xDFFF for c in line)]
    assert fast.encode_batch(good, workers=3) == pure_batch(pure, good)


@pytest.mark.parametrize(("name", "filename"), REAL)
def test_real_files_against_sentencepiece(name, filename):
    spm = pytest.importorskip("sentencepiece")
    from fixtures import bench_slice

    path = real(name, filename)
    ref = spm.SentencePieceProcessor(model_file=str(path))
    _, fast = loaded(path)
    lines = [line for corpus in CORPORA for line in lines_of(bench_slice(corpus, 30000))] + ODD_LINES[:9]
    lines = [line for line in lines if not any(0xD800 <= ord(c) <= 0xDFFF for c in line)]
    assert fast.encode_batch(lines, add_special=False, workers=2) == ref.encode(lines)


@pytest.mark.parametrize("name", SYNTHETIC)
def test_synthetic_models(name):
    from fixtures import bench_slice, edge_texts

    pure, fast = loaded(DATA / name)
    lines = [line for corpus in CORPORA for line in lines_of(bench_slice(corpus, 6000))] + edge_texts() + ODD_LINES
    for options in ({}, {"special": "parse"}):
        assert fast_batch(fast, lines, workers=2, **options) == expected_batch(pure, lines, **options)


@pytest.mark.parametrize(("name", "filename"), [REAL[0], REAL[3]])
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lines=st.lists(st.text(alphabet=st.characters(codec=None, exclude_categories=()), max_size=40), max_size=12))
def test_random_lines(name, filename, lines):
    pure, fast = loaded(real(name, filename))
    assert fast_batch(fast, lines, workers=2) == expected_batch(pure, lines)


ALPHABET = "ab▁ \t\n日😀\u0301é<s>\ud800x"


@pytest.mark.parametrize(("name", "filename"), [REAL[1], REAL[4], REAL[5]])
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lines=st.lists(st.text(alphabet=ALPHABET, max_size=30), max_size=12))
def test_random_lines_of_spaces_and_marks(name, filename, lines):
    pure, fast = loaded(real(name, filename))
    assert fast_batch(fast, lines, workers=2) == expected_batch(pure, lines)


# -- the settings around the pipeline -------------------------------------------------------------


def test_truncation_padding_and_post_processing_apply_to_its_ids():
    from fixtures import bench_slice

    path = real(*REAL[0])
    lines = lines_of(bench_slice("bench_en", 20000))
    for truncation, padding in [(Truncation(7), None), (None, Padding()), (Truncation(5, stride=2), Padding(length=9)),
                                (None, Padding(direction="left", pad_to_multiple_of=8, pad_id=3))]:
        with polytok.kernels.pure_path():
            pure = polytok.load(str(path))
        fast = polytok.load(str(path))
        for tok in (pure, fast):
            tok.truncation, tok.padding = truncation, padding
        assert fast.batch_pipeline(False) is not None
        for add_special in (True, False):
            assert fast.encode_batch(lines, add_special=add_special, workers=2) == \
                pure.encode_batch(lines, add_special=add_special, workers=1)


def test_a_text_that_can_hold_a_special_token_goes_to_the_pure_path():
    """Parsing markers, a `.model` file's CONTROL pieces are special tokens a text can hold: the
    pipeline then leaves every text holding the first character of one to the pure path; read as
    text (the .model default) they are plain text."""
    pure, fast = loaded(real(*REAL[0]))
    parsing = fast.batch_pipeline(True)
    assert parsing is not None and parsing is not fast.batch_pipeline(False)
    assert parsing.encode(["<s> a </s>", "a b", "x<"], 0, 3) == [None, pure.encode("a b", add_special=False), None]
    parsed = fast.encode_batch(["<s> a </s>"], special="parse", add_special=False)
    assert parsed == [pure.encode("<s> a </s>", special="parse", add_special=False)]
    assert parsed[0][0] == 1 and parsed[0][-1] == 2
    assert fast.encode_batch(["<s> a </s>"]) == [pure.encode("<s> a </s>")]


def test_the_pure_path_has_no_pipeline(monkeypatch):
    path = real(*REAL[3])
    with polytok.kernels.pure_path():
        assert polytok.load(str(path)).batch_pipeline(False) is None
    monkeypatch.setenv("POLYTOK_PURE", "1")
    assert polytok.load(str(path)).batch_pipeline(False) is None


def test_stages_without_a_compiled_form_have_no_pipeline():
    from fixtures import HF_JSON_FIXTURES, fixture_path

    for name in ("gpt2", "bert-base-uncased", "albert-base-v2-tf5", "llama2"):
        tok = polytok.load(str(fixture_path(name, HF_JSON_FIXTURES[name])))
        assert tok.batch_pipeline(False) is None
        assert tok.batch_pipeline(True) is None


# -- threads and the object -------------------------------------------------------------------------


def test_threads_give_the_one_thread_ids():
    from fixtures import bench_slice

    _, fast = loaded(real(*REAL[3]))
    pipeline = fast.batch_pipeline(False)
    lines = [line for corpus in CORPORA for line in lines_of(bench_slice(corpus, 50000))]
    one = pipeline.encode(lines, 0, len(lines))
    for threads in (2, 3, 8, 64):
        assert encode_on_threads(pipeline, lines, threads) == one
    assert encode_on_threads(pipeline, [], 4) == []
    assert encode_on_threads(pipeline, ["a"], 4) == one[:0] + [pipeline.encode(["a"], 0, 1)[0]]


def test_pipeline_object_errors():
    module = compiled("batch")
    _, fast = loaded(real(*REAL[3]))
    pipeline = fast.batch_pipeline(False)
    lattice = fast.model.batch_kernel()
    charsmap = fast.normalizer.batch_kernel()[0]
    with pytest.raises(TypeError, match="not a str"):
        pipeline.encode(["a", b"b"], 0, 2)
    with pytest.raises(TypeError):
        pipeline.encode(("a",), 0, 1)
    assert pipeline.encode(["a", "b"], -5, 99) == pipeline.encode(["a", "b"], 0, 2)
    assert pipeline.encode(["a", "b"], 2, 1) == []
    with pytest.raises(TypeError, match="not picklable"):
        pickle.dumps(pipeline)
    with pytest.raises(TypeError, match="model must be"):
        module.Pipeline(None, "", False, False, False, "", object())
    with pytest.raises(TypeError, match="normalizer must be"):
        module.Pipeline(object(), "▁", False, False, False, "", lattice)
    with pytest.raises(ValueError, match="space"):
        module.Pipeline(charsmap, "", True, False, False, "", lattice)
    with pytest.raises(ValueError, match="split"):
        module.Pipeline(None, "", False, False, False, "ab", lattice)
    with pytest.raises(RuntimeError, match="not initialised"):
        module.Pipeline.__new__(module.Pipeline).encode(["a"], 0, 1)
    with pytest.raises(RuntimeError, match="already"):
        pipeline.__init__(None, "", False, False, False, "", lattice)


def test_the_pipeline_holds_its_texts_while_it_runs():
    """The texts are held by the call: a list changed by another thread cannot free them."""
    _, fast = loaded(real(*REAL[0]))
    pipeline = fast.batch_pipeline(False)
    lines = ["word " * 2000 + str(i) for i in range(40)]
    want = pipeline.encode(list(lines), 0, len(lines))
    import threading

    shared = list(lines)
    stop = threading.Event()

    def churn() -> None:
        while not stop.is_set():
            shared[:] = [str(i) for i in range(40)]
            shared[:] = list(lines)

    worker = threading.Thread(target=churn)
    worker.start()
    try:
        for _ in range(20):
            got = pipeline.encode(shared, 0, 40)
            assert all(ids == want[i] or ids == pipeline.encode([str(i)], 0, 1)[0] for i, ids in enumerate(got))
    finally:
        stop.set()
        worker.join()


@pytest.mark.parametrize("scanner", ["gpt2", "llama3", "qwen2", "cl100k", "o200k", "tekken"])
def test_a_scanner_split_chains_its_pieces_to_the_model(scanner):
    """The split by a known pattern's scanner (`split.scan`, findall) feeds the model each piece,
    as the pure pipeline's `tokenize_all(pre_tokenize(text))`; here with an SPM merger."""
    from fixtures import bench_slice, edge_texts

    split = compiled("split")
    module = compiled("batch")
    pure, fast = loaded(real(*REAL[0]))
    pipeline = module.Pipeline(None, "", False, False, False, split.SCANNERS[scanner], fast.model.batch_kernel())
    lines = [line for corpus in CORPORA for line in lines_of(bench_slice(corpus, 20000))] + edge_texts()
    lines = [line for line in lines if not any(0xD800 <= ord(c) <= 0xDFFF for c in line)]
    want = [pure.model.tokenize_all(split.scan(split.SCANNERS[scanner], line)) if line else [] for line in lines]
    assert pipeline.encode(lines, 0, len(lines)) == want
    with pytest.raises(ValueError, match="no scanner"):
        module.Pipeline(None, "", False, False, False, len(split.SCANNERS), fast.model.batch_kernel())
    with pytest.raises(TypeError, match="split must be"):
        module.Pipeline(None, "", False, False, False, 1.5, fast.model.batch_kernel())


def test_stages_show_their_compiled_forms():
    """What each stage tells `batch_pipeline`: tiktoken's and tekken's split is its scanner, their
    surrogate repair leaves other texts as they are, a `.model` split is the cut before "▁" runs."""
    split = compiled("split")
    from polytok.normalizers.surrogate_repair import SurrogateRepair
    from polytok.pre_tokenizers.split import Split
    from polytok.regex.split_patterns import CL100K, LLAMA3

    _, mistral = loaded(real(*REAL[0]))
    assert mistral.pre_tokenizer.batch_split() == "▁"
    assert SurrogateRepair().batch_kernel() == (None, "", False, False, False)
    assert Split(CL100K, "removed", invert=True, dialect="fancy").batch_split() == split.SCANNERS["cl100k"]
    assert Split(LLAMA3, "isolated").batch_split() == split.SCANNERS["llama3"]
    assert Split(LLAMA3, "isolated", invert=True).batch_split() is None
    assert Split(LLAMA3, "merged_with_next").batch_split() is None
    assert Split("▁+", "merged_with_previous").batch_split() is None
    assert Split("x+", "merged_with_next").batch_split() is None
    with polytok.kernels.pure_path():
        assert Split(LLAMA3, "isolated").batch_split() is None
