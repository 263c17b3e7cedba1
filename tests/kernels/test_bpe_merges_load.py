"""The compiled merges reader (``polytok._kernels.wire``: ``json_merges``, ``merge_ids``) against
``polytok.models._bpe_merges``, which it stands in for when a tokenizer.json BPE model loads.

The kernel reads the usual lists and answers None for anything else, so the pure reader's
results *and errors* (class, message, key path) must come out unchanged: on every
tokenizer.json BPE fixture, on synthetic merges of odd shapes, and on hypothesis-random lists.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from fixtures import HF_JSON_FIXTURES, fixture_path
from hypothesis import given, settings
from hypothesis import strategies as st

import polytok
from kernels._compiled import compiled
from polytok import kernels
from polytok.errors import FormatError
from polytok.models import _bpe_merges
from polytok.models.bpe import BPE


@pytest.fixture(scope="module")
def wire() -> Any:
    return compiled("wire")


def _model(name: str) -> dict[str, Any] | None:
    data = json.loads(fixture_path(name, HF_JSON_FIXTURES[name]).read_text(encoding="utf-8"))
    model = data.get("model") or {}
    return model if model.get("type", "BPE") == "BPE" and "merges" in model else None


def _both(function: Any, *args: Any) -> tuple[Any, Any]:
    """`function(*args)` on the compiled path and on the pure path: each result, or the error raised."""
    answers = []
    for pure in (False, True):
        try:
            if pure:
                with kernels.pure_path():
                    answers.append(function(*args))
            else:
                answers.append(function(*args))
        except Exception as error:  # the error itself is compared
            answers.append((type(error), str(error), getattr(error, "key", None)))
    return answers[0], answers[1]


def _read_and_ids(raw: Any, vocab: dict[str, int], prefix: str = "") -> Any:
    lefts, rights, positions = _bpe_merges.read_merges(raw, "model.merges")
    return lefts, rights, positions, _bpe_merges.merge_ids(vocab, lefts, rights, prefix)


@pytest.mark.parametrize("name", sorted(HF_JSON_FIXTURES))
def test_every_fixture_reads_the_same_merges_and_ids(wire: Any, name: str) -> None:
    model = _model(name)
    if model is None:
        pytest.skip(f"{name} is not a BPE model")
    raw, vocab = model["merges"], model["vocab"]
    prefix = model.get("continuing_subword_prefix") or ""
    compiled_answer, pure_answer = _both(_read_and_ids, raw, vocab, prefix)
    assert compiled_answer == pure_answer
    if raw and vocab and not any(type(m) is str and m.startswith("#version") for m in raw[:1]):
        # the kernel itself read this file (no silent hand-over to the pure reader)
        split = wire.json_merges(raw)
        assert split is not None and list(split) == list(pure_answer[:2])
        assert wire.merge_ids(vocab, *split, prefix) is not None or not prefix.isascii()


VOCAB = {"a": 0, "b": 1, "ab": 2, "c": 3, "abc": 4, "": 5, "a b": 6, "ba": 7, "##b": 8, "a##b": 9,
         "##": 10, "a##": 11, "é": 12, "éa": 13, "#version": 14, "x": 15, "#versionx": 16, "aa": 17}

ODD = [
    ["a b", "ab c"],  # legacy
    [["a", "b"], ["ab", "c"]],  # pairs
    ["a b", "a b", "ab c"],  # duplicates
    [["a b", "a"]],  # a piece with a space (pair form only)
    ["a  b"], ["a b c"], ["ab"], [" "], [" a"], ["a "],  # legacy: not exactly one space
    ["a q"], ["q b"], ["b a"],  # a missing left, right, merged token
    [["a", "q"]], [["q", "b"]], [["b", "b"]],
    ["#version: 0.2", "a b", "ab c"], ["#version x", "#version: 1"], ["#version x"],  # skipped lines
    ["a b", 3], ["a b", None], ["a b", ["a", "b"]],  # non-strings in legacy form
    [["a", "b"], "a b"], [["a", 1]], [["a"]], [["a", "b", "c"]], [("a", "b")], [["a", None]],
    [[1, 2]], [{"a": "b"}], [3], [None],
    [], [[]], [["", ""]], [["a", ""]], ["a "], [" b"],  # empty parts
    ["é a"], [["é", "a"]],
]


@pytest.mark.parametrize("raw", ODD, ids=[json.dumps(r)[:40] for r in ODD])
@pytest.mark.parametrize("prefix", ["", "##"])
def test_odd_merges_read_as_the_pure_reader_reads_them(wire: Any, raw: Any, prefix: str) -> None:
    compiled_answer, pure_answer = _both(_read_and_ids, raw, VOCAB, prefix)
    assert compiled_answer == pure_answer


class _Str(str):
    pass


def test_the_kernel_hands_over_what_it_does_not_read(wire: Any) -> None:
    assert wire.json_merges([]) is None
    assert wire.json_merges(["#version: 0.2", "a b"]) is None
    assert wire.json_merges(["a b", _Str("a b")]) is None
    assert wire.json_merges([["a", _Str("b")]]) is None
    assert wire.json_merges(["a b", "a  b"]) is None
    assert wire.json_merges(["a b"]) == (["a"], ["b"])
    assert wire.json_merges([["a b", "c"]]) == (["a b"], ["c"])
    assert wire.merge_ids(VOCAB, ["a"], ["q"], "") is None
    assert wire.merge_ids(VOCAB, ["a"], [_Str("b")], "") is None
    assert wire.merge_ids(VOCAB, ["a", "a"], ["b"], "") is None
    assert wire.merge_ids(VOCAB, ["a"], ["b"], "") == ([0], [1], [2], True)
    assert wire.merge_ids(VOCAB, ["a"], [""], "") == ([0], [5], [0], False)
    assert wire.merge_ids(VOCAB, ["a", "a"], ["##b", "##"], "##") == ([0, 0], [8, 10], [2, 0], False)
    assert wire.merge_ids(VOCAB, ["a"], ["b"], "##") is None  # not prefixed: the pure byte cut
    assert wire.merge_ids(VOCAB, ["a"], ["éa"], "é") is None  # a prefix that is not ASCII
    assert wire.merge_ids({}, [], [], "") == ([], [], [], True)


@pytest.mark.parametrize("data,key", [
    ({"vocab": {"a": 0}, "merges": ["a b"]}, "model.merges[0]"),
    ({"vocab": {"a": 0, "b": 1}, "merges": ["#version: 0.2", "a b"]}, "model.merges[1]"),
    ({"vocab": {"a": 0, "b": 1, "ab": 2}, "merges": ["a b", "a  b"]}, "model.merges[1]"),
    ({"vocab": {"a": 0, "b": 1, "ab": 2}, "merges": ["a b", 7]}, "model.merges[1]"),
    ({"vocab": {"a": 0, "b": 1, "ab": 2}, "merges": [["a", "b"], ["a"]]}, "model.merges[1]"),
    ({"vocab": {"a": 0, "b": 1, "ab": 2}, "merges": [["a", "b"], ["b", "a"]]}, "model.merges[1]"),
])
def test_a_bad_file_raises_the_pure_error(tmp_path: Any, data: dict[str, Any], key: str) -> None:
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps({"model": {"type": "BPE", **data}}), encoding="utf-8")
    errors = []
    for pure in (False, True):
        with pytest.raises(FormatError) as info:
            if pure:
                with kernels.pure_path():
                    polytok.load(path)
            else:
                polytok.load(path)
        errors.append((type(info.value), str(info.value), info.value.key))
    assert errors[0] == errors[1]
    assert errors[0][2] == key


def test_a_model_built_in_python_gets_the_same_ids() -> None:
    merges = [("a", "b"), ("ab", "c"), ("a", "b")]
    built = BPE(VOCAB, merges)
    with kernels.pure_path():
        pure = BPE(VOCAB, merges)
    assert built._pair_ids == pure._pair_ids and built._results == pure._results
    assert built.tokenize("abc") == pure.tokenize("abc") == [4]


_pieces = st.sampled_from(["a", "b", "ab", "c", "", "q", "##", "##b", "é", "a b", "#version", " "])
_legacy = st.lists(st.one_of(st.builds(lambda a, b: f"{a} {b}", _pieces, _pieces), _pieces,
                             st.integers(0, 3)), max_size=6)
_pairs = st.lists(st.one_of(st.lists(_pieces, min_size=0, max_size=3), _pieces, st.none()), max_size=6)


@settings(max_examples=300, deadline=None)
@given(raw=st.one_of(_legacy, _pairs), prefix=st.sampled_from(["", "##"]))
def test_random_merges_read_as_the_pure_reader_reads_them(raw: list[Any], prefix: str) -> None:
    compiled_answer, pure_answer = _both(_read_and_ids, raw, VOCAB, prefix)
    assert compiled_answer == pure_answer


# -- json_merge_ids: both steps in one pass ------------------------------------------------


def _two_steps(wire: Any, raw: Any, vocab: dict[Any, Any], prefix: str) -> Any:
    split = wire.json_merges(raw)
    return None if split is None else wire.merge_ids(vocab, *split, prefix)


def _fused_alike(wire: Any, raw: Any, vocab: dict[Any, Any], prefix: str) -> Any:
    """`json_merge_ids` answers as the two compiled steps do, and then as the pure functions do."""
    fused = wire.json_merge_ids(vocab, raw, prefix)
    assert fused == _two_steps(wire, raw, vocab, prefix)
    if fused is not None:
        with kernels.pure_path():
            lefts, rights, _ = _bpe_merges.read_merges(raw, "model.merges")
            assert fused == _bpe_merges.merge_ids(vocab, lefts, rights, prefix)
    return fused


@pytest.mark.parametrize("name", sorted(HF_JSON_FIXTURES))
def test_every_fixture_reads_in_one_pass(wire: Any, name: str) -> None:
    model = _model(name)
    if model is None:
        pytest.skip(f"{name} is not a BPE model")
    prefix = model.get("continuing_subword_prefix") or ""
    fused = _fused_alike(wire, model["merges"], model["vocab"], prefix)
    assert fused is not None or not model["merges"] or model["merges"][0][:8] == "#version"


@pytest.mark.parametrize("raw", ODD, ids=[json.dumps(r)[:40] for r in ODD])
@pytest.mark.parametrize("prefix", ["", "##", "a", "é"])
def test_odd_merges_in_one_pass(wire: Any, raw: Any, prefix: str) -> None:
    _fused_alike(wire, raw, VOCAB, prefix)


WIDE = {"a": 0, "é": 1, "Ġ": 2, "😀": 3, "aé": 4, "éĠ": 5, "Ġ😀": 6, "a😀": 7, "😀a": 8, "##": 9, "##a": 10,
        "##😀": 11, "é😀": 12, "\ud800": 13, "a\ud800": 14, "ĠĠ": 15}


@pytest.mark.parametrize("raw", [
    ["a é", "é Ġ", "Ġ 😀", "a 😀", "😀 a", "é 😀", "a \ud800", "Ġ Ġ"],  # parts of every width in lines of every width
    [["a", "é"], ["Ġ", "😀"], ["😀", "a"], ["a", "\ud800"]],
    ["a ##😀"], ["a ##a", "a ##"], [["a", "##😀"]], ["😀 ##a"],
    ["a é", "é é"], ["😀 😀"], ["a Ġ"],  # a missing merged token
])
@pytest.mark.parametrize("prefix", ["", "##"])
def test_code_points_of_every_width(wire: Any, raw: Any, prefix: str) -> None:
    _fused_alike(wire, raw, WIDE, prefix)


def test_one_pass_hands_over_what_it_does_not_read(wire: Any) -> None:
    assert wire.json_merge_ids(VOCAB, [], "") is None
    assert wire.json_merge_ids({**VOCAB, 3: 99}, ["a b"], "") is None  # a key that is not a str
    assert wire.json_merge_ids({**VOCAB, _Str("zz"): 99}, ["a b"], "") is None
    assert wire.json_merge_ids(VOCAB, ["a b"], "é") is None
    assert wire.json_merge_ids(VOCAB, ["a b"], "") == ([0], [1], [2], True)
    assert wire.json_merge_ids({}, ["a b"], "") is None
    spaced = {"a": 0, "b c": 1, "ab c": 2, "a b": 3, "c": 4, "a bc": 5}
    assert _fused_alike(wire, ["a b c"], spaced, "") is None  # two spaces: the line is not read here
    assert _fused_alike(wire, [["a", "b c"], ["a b", "c"]], spaced, "") == ([0, 3], [1, 4], [2, 5], True)
    big = {f"t{i}": i for i in range(5000)}
    big.update({f"t{i}t{i + 1}": 5000 + i for i in range(4999)})
    raw = [f"t{i} t{i + 1}" for i in range(4999)]
    assert _fused_alike(wire, raw, big, "") == ([big[f"t{i}"] for i in range(4999)],
                                               [big[f"t{i + 1}"] for i in range(4999)],
                                               list(range(5000, 9999)), True)


def test_a_load_gets_the_pure_tables() -> None:
    for name in ("gpt2", "roberta-base", "llama2"):
        path = fixture_path(name, HF_JSON_FIXTURES[name])
        model = polytok.load(path).model
        with kernels.pure_path():
            pure = polytok.load(path).model
        assert model._pair_ids == pure._pair_ids and list(model._results) == list(pure._results)
        assert model._no_rank == pure._no_rank and model._scan_limit == pure._scan_limit


@settings(max_examples=300, deadline=None)
@given(raw=st.one_of(_legacy, _pairs), prefix=st.sampled_from(["", "##"]))
def test_random_merges_in_one_pass(raw: list[Any], prefix: str) -> None:
    _fused_alike(compiled("wire"), raw, VOCAB, prefix)
