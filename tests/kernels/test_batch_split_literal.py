"""gemma3 through the compiled batch pipeline with its own pre-tokenizer: ``Replace(" ", "▁")``
leaves no space, so ``Split(" ", MergedWithPrevious)`` cuts nothing and the tokenizer chains
the normalizer and the BPE model alone (`Tokenizer.batch_pipeline`). Checked against HF
tokenizers live and the pure path, on the file and on variants of it where the split may cut
(the pipeline must then be refused and the ids still HF's).
"""

from __future__ import annotations

import copy
import functools
import json
from typing import Any

import pytest

import polytok
from polytok.kernels import pure_path
from polytok.pre_tokenizers.split import Split

from ._compiled import compiled

tokenizers = pytest.importorskip("tokenizers")

TEXTS = [" lead", "trail ", "  both  ", "runs   of    spaces", "tab\there", "new\nline", "\n\n", " \t \n ",
         "▁ in the text", "▁▁", "a▁b c", "<start_of_turn>user\nHi there<end_of_turn>", "<bos> a", " <eos>",
         "[multimodal] x", "a < b", "x" * 700 + "  y ", " " * 600, "日本語 😀 ok ", "é  ü", "aabb", "xaaabbb y",
         "a", " ", "no spaces"]


@functools.cache
def gemma3_json() -> dict[str, Any]:
    from fixtures import HF_JSON_FIXTURES, fixture_path

    with open(fixture_path("gemma3", HF_JSON_FIXTURES["gemma3"]), encoding="utf-8") as f:
        return json.load(f)  # type: ignore[no-any-return]


def bench_lines(n_chars: int) -> list[str]:
    from fixtures import bench_slice

    return [line for corpus in ("bench_en", "bench_code", "bench_multi")
            for line in bench_slice(corpus, n_chars).split("\n") if line]


def variant(tmp_path, name: str, normalizer: dict[str, Any] | None = None,
            pre_tokenizer: dict[str, Any] | None = None) -> tuple[Any, polytok.Tokenizer, polytok.Tokenizer]:
    """HF's tokenizer, polytok's and polytok's pure one, for gemma3 with these stages."""
    d = copy.copy(gemma3_json())
    if normalizer is not None:
        d["normalizer"] = normalizer
    if pre_tokenizer is not None:
        d["pre_tokenizer"] = pre_tokenizer
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(d), encoding="utf-8")
    with pure_path():
        pure = polytok.load(str(path))
    return tokenizers.Tokenizer.from_file(str(path)), polytok.load(str(path)), pure


def assert_same_ids(ref: Any, fast: polytok.Tokenizer, pure: polytok.Tokenizer, texts: list[str]) -> None:
    for special in ("parse", "text"):
        skip = special == "parse"
        want = [e.ids for e in ref.encode_batch(texts, add_special_tokens=True)] if skip else None
        found = fast.encode_batch(texts, special=special)
        assert found == [pure.encode(t, special=special) for t in texts]
        assert [fast.encode(t, special=special) for t in texts] == found
        if want is not None:
            assert found == want


def split(pattern: dict[str, str], behavior: str = "MergedWithPrevious", invert: bool = False) -> dict[str, Any]:
    return {"type": "Split", "pattern": pattern, "behavior": behavior, "invert": invert}


def replace(pattern: str, content: str) -> dict[str, Any]:
    return {"type": "Replace", "pattern": {"String": pattern}, "content": content}


@pytest.fixture(scope="module", autouse=True)
def _module():
    compiled("batch")


def test_gemma3_takes_the_pipeline_with_its_split(tmp_path):
    ref, fast, pure = variant(tmp_path, "gemma3")
    assert isinstance(fast.pre_tokenizer, Split)
    for parse in (True, False):
        assert fast.batch_pipeline(parse) is not None
    lines = bench_lines(40000) + TEXTS
    assert_same_ids(ref, fast, pure, lines)
    text = " ".join(lines[:400])  # one long text, cut at the added tokens
    assert fast.encode(text) == ref.encode(text).ids == pure.encode(text)
    # text mode reads the markers as text: the pure path is the reference there
    assert fast.encode_batch(TEXTS, special="text") == [pure.encode(t, special="text") for t in TEXTS]


@pytest.mark.parametrize(("name", "normalizer", "pre_tokenizer", "taken"), [
    # the split's pattern holds the removed char: matches nowhere
    ("two_spaces", None, split({"String": "  "}), True),
    ("isolated", None, split({"String": " "}, "Isolated"), True),
    # a space is left: the content holds it, or the pattern is longer than one char
    ("content_keeps_space", replace(" ", "▁ "), None, False),
    ("two_char_pattern", replace("  ", "▁"), None, False),
    ("made_again", replace("ab", "a"), split({"String": "ab"}, "Isolated"), False),  # "aabb" -> "aab"
    # the split can match without a space: inverted (Removed then keeps only the matches), a
    # regex, or another literal
    ("inverted", None, split({"String": " "}, "Removed", invert=True), False),
    ("regex", None, split({"Regex": " |a"}), False),
    ("other_literal", None, split({"String": "a"}), False),
])
def test_the_split_is_dropped_only_where_it_cannot_cut(tmp_path, name, normalizer, pre_tokenizer, taken):
    ref, fast, pure = variant(tmp_path, name, normalizer, pre_tokenizer)
    assert (fast.batch_pipeline(False) is not None) is taken
    assert_same_ids(ref, fast, pure, bench_lines(3000) + TEXTS)


def test_never_cuts_without():
    assert Split(" ", "merged_with_previous", is_regex=False).never_cuts_without(" ")
    assert Split("a b", "removed", is_regex=False).never_cuts_without(" ")
    assert not Split(" ", "merged_with_previous", is_regex=False).never_cuts_without("  ")
    assert not Split(" ", "merged_with_previous", is_regex=False, invert=True).never_cuts_without(" ")
    assert not Split(" ", "merged_with_previous").never_cuts_without(" ")  # a regex
    assert not Split("a", "merged_with_previous", is_regex=False).never_cuts_without(" ")
