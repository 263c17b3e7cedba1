"""The compiled batch pipeline (polytok._kernels.batch) with a BPE model over spelt words (HF's:
gemma3, llama2; merges, byte fallback, unk rules, `BPE._cut`'s chunks), a literal `Replace`
normalizer and the stops (the added tokens' first characters), against the pure path and HF
tokenizers live.

gemma3's pipeline: Replace(" ", "▁"), no split (its Split(" ") finds nothing once every space
is replaced: `Tokenizer.batch_pipeline` leaves it out, see test_batch_split_literal.py), on
lines holding no added token (whose first characters are "<", "[", "▁", tab and newline);
llama2's Prepend("▁") is written into the text.
"""

from __future__ import annotations

import functools

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import polytok
from polytok.kernels import pure_path
from polytok.models.bpe import BPE
from polytok.normalizers.replace import Replace

from ._compiled import compiled, pure_and_compiled

CORPORA = ("bench_en", "bench_code", "bench_multi")
ADDED_FIRST = set("<[▁\t\n")
ODD_LINES = ["", " ", "   ", "a", "x" * 5000, "é" * 300, "😀 " * 50, "日本語のテキスト 𠀋 ", "\u0301", "a\u200db",
             "\x00", "word " * 400, "ok \udfff here", "\ud800", "  lead and trail  ", "\U0010FFFF q", "ÿ\u0100\uFFFD"]


@pytest.fixture(scope="module", autouse=True)
def _module():
    compiled("batch")


@functools.cache
def loaded(name: str) -> tuple[polytok.Tokenizer, polytok.Tokenizer]:
    from fixtures import HF_JSON_FIXTURES, fixture_path

    return pure_and_compiled(str(fixture_path(name, HF_JSON_FIXTURES[name])))


def bench_lines(n_chars: int) -> list[str]:
    from fixtures import bench_slice

    return [line for corpus in CORPORA for line in bench_slice(corpus, n_chars).split("\n") if line]


def plain(lines: list[str]) -> list[str]:
    return [line for line in lines if not ADDED_FIRST & set(line)]


def gemma3_pipeline():
    module = compiled("batch")
    _, fast = loaded("gemma3")
    merger = fast.model.batch_kernel()
    assert merger is not None and merger.batch_covered()
    form = fast.normalizer.batch_kernel()
    assert form == ((" ", "▁"), "", False, False, False)
    return module.Pipeline(*form, "", merger)


def expected(pure: polytok.Tokenizer, lines: list[str]) -> list[list[int] | None]:
    """The pure path's ids; None where it raises (the pipeline leaves those lines to it)."""
    out: list[list[int] | None] = []
    for line in lines:
        try:
            out.append(pure.encode(line, add_special=False))
        except (polytok.EncodeError, UnicodeError):
            out.append(None)
    return out


def test_gemma3_lines_against_the_pure_path():
    from fixtures import edge_texts

    pure, _ = loaded("gemma3")
    pipeline = gemma3_pipeline()
    lines = plain(bench_lines(80000) + edge_texts() + ODD_LINES)
    found = pipeline.encode(lines, 0, len(lines))
    want = expected(pure, lines)
    assert [ids for ids, line in zip(found, lines) if "\udfff" not in line and "\ud800" not in line] == \
        [ids for ids, line in zip(want, lines) if "\udfff" not in line and "\ud800" not in line]
    assert [ids is None for ids in found] == [any(0xD800 <= ord(c) <= 0xDFFF for c in line) for line in lines]
    assert pipeline.encode(lines, 0, len(lines)) == found  # again, from the kept cache


def test_llama2_words_against_the_pure_path():
    """llama2's normalizer, Prepend("▁") then Replace(" ", "▁"), with the prepend written in."""
    module = compiled("batch")
    pure, fast = loaded("llama2")
    merger = fast.model.batch_kernel()
    pipeline = module.Pipeline((" ", "▁"), "", False, False, False, "", merger)
    lines = [line for line in bench_lines(40000) + ODD_LINES
             if line and not any(0xD800 <= ord(c) <= 0xDFFF for c in line)]
    assert pipeline.encode(["▁" + line for line in lines], 0, len(lines)) == expected(pure, lines)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lines=st.lists(st.text(alphabet="ab ▁é日😀\u0301\x00\ud800x" + "q" * 3, max_size=300), max_size=8))
def test_random_lines(lines):
    pure, _ = loaded("gemma3")
    pipeline = gemma3_pipeline()
    lines = [line.replace("▁", "") for line in lines]  # ("▁" starts added tokens)
    found = pipeline.encode(lines, 0, len(lines))
    want = expected(pure, lines)
    for line, got, ids in zip(lines, found, want):
        assert got == (None if any(0xD800 <= ord(c) <= 0xDFFF for c in line) else ids)


def test_a_literal_replace_is_str_replace():
    """Leftmost matches, not overlapping, a pattern of several characters, a longer, shorter or
    empty content; checked through a byte-level model (every text is then its own words)."""
    module = compiled("batch")
    from fixtures import fixture_path

    _, tok = loaded("gemma3")  # (the module loads)
    cl100k = polytok.load(str(fixture_path("cl100k_base-tiktoken", "cl100k_base.tiktoken")))
    merger = cl100k.model.batch_kernel()
    texts = ["aaab", "aaaa", "a", "", "baab", "ab ab aab", "日本日本語", "xaax"]
    for pattern, content in [("aa", "X"), ("a", ""), ("ab", "long content"), ("日本", "にほん"), ("a", "a")]:
        pipeline = module.Pipeline((pattern, content), "", False, False, False, "", merger)
        want = [cl100k.model.tokenize_all([text.replace(pattern, content)]) if text.replace(pattern, content) else []
                for text in texts]
        assert pipeline.encode(texts, 0, len(texts)) == want
    with pytest.raises(ValueError, match="empty"):
        module.Pipeline(("", "x"), "", False, False, False, "", merger)
    with pytest.raises(TypeError, match="pattern"):
        module.Pipeline(("a",), "", False, False, False, "", merger)


def test_which_stages_have_a_batch_form():
    assert Replace(" ", "▁").batch_kernel() == ((" ", "▁"), "", False, False, False)
    assert Replace("ab", "").batch_kernel() == (("ab", ""), "", False, False, False)
    assert Replace("", "x").batch_kernel() is None
    assert Replace(" +", "▁", is_regex=True).batch_kernel() is None
    vocab = {"a": 0, "b": 1, "ab": 2, "<unk>": 3}
    assert BPE(vocab, [("a", "b")], unk_token="<unk>").batch_kernel() is not None
    assert BPE(vocab, [("a", "b")], ignore_merges=True).batch_kernel() is None
    assert BPE(vocab, [("a", "b")], unknown_chars="block").batch_kernel() is None
    assert BPE(vocab, [("a", "b")], dropout=0.5).batch_kernel() is None
    assert BPE(vocab | {"##b": 4, "a##b": 5}, [("a", "##b")], continuing_subword_prefix="##").batch_kernel() is None
    with pure_path():
        assert BPE(vocab, [("a", "b")]).batch_kernel() is None


GEMMA3_TURNS = ["<start_of_turn>user\nHi<end_of_turn>", "<bos>a", "x\t\ty", "▁▁lead", "[multimodal] text", "<unused7>",
                "a < b", "<b>bold</b>", "tab\tin", "plain words only", "日本語 😀 ok"]


def test_gemma3_without_its_split_runs_every_stage_in_c():
    """gemma3's Split(" ") finds nothing once Replace has put "▁" for every space: without it
    the tokenizer's own pipeline runs (Replace, the spelt BPE, the added tokens' first
    characters as stops), with HF tokenizers' ids, live, and the pure path's."""
    tokenizers = pytest.importorskip("tokenizers")
    from fixtures import HF_JSON_FIXTURES, fixture_path

    path = str(fixture_path("gemma3", HF_JSON_FIXTURES["gemma3"]))
    ref = tokenizers.Tokenizer.from_file(path)
    pure, _ = loaded("gemma3")
    fast = polytok.load(path)
    fast.pre_tokenizer = None
    for parse in (True, False):
        pipeline = fast.batch_pipeline(parse)
        assert pipeline is not None
        found = pipeline.encode(GEMMA3_TURNS, 0, len(GEMMA3_TURNS))
        assert [ids is None for ids in found] == [bool(ADDED_FIRST & set(text)) for text in GEMMA3_TURNS]
    lines = bench_lines(60000) + GEMMA3_TURNS
    want = [e.ids for e in ref.encode_batch(lines)]
    assert fast.encode_batch(lines, workers=2) == want
    assert [pure.encode(line) for line in lines] == want
    text = " ".join(plain(bench_lines(20000)))  # one long text: one call
    assert fast.encode(text) == ref.encode(text).ids
    with_turns = "\n".join(lines[:300])
    assert fast.encode(with_turns) == ref.encode(with_turns).ids
    for special in ("text", "parse"):
        want = [pure.encode(t, special=special) for t in GEMMA3_TURNS]
        assert fast.encode_batch(GEMMA3_TURNS, special=special) == want


def test_the_stops_are_the_first_characters_of_every_added_token():
    """Each added token is matched in the raw text, special ones too (read as text, they still
    hide what they overlap): a text holding none of their first characters holds no token."""
    from fixtures import fixture_path

    _, gemma3 = loaded("gemma3")
    assert gemma3._special_stops(True) == gemma3._special_stops(False) == "\t\n<[▁"
    cl100k = polytok.load(str(fixture_path("cl100k_base-tiktoken", "cl100k_base.tiktoken")))
    assert cl100k._special_stops(False) == ""  # only special tokens, read as text: none cuts
    assert cl100k._special_stops(True) == "<"
    with pure_path():
        pure = polytok.load(str(fixture_path("cl100k_base-tiktoken", "cl100k_base.tiktoken")))
    texts = ["a<|endoftext|>b", "<|fim_prefix|>", "no token", "<", "x" * 600 + "<|endoftext|>"]
    for special in ("text", "parse"):
        assert cl100k.encode_batch(texts, special=special) == [pure.encode(t, special=special) for t in texts]
        assert [cl100k.encode(t, special=special) for t in texts] == [pure.encode(t, special=special) for t in texts]
