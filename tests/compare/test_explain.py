"""polytok.parity.explain: its ids are encode's on every fixture x edge text, and its stages are HF's where
tokenizers exposes them (normalizer.normalize_str, pre_tokenizer.pre_tokenize_str), run live."""

from __future__ import annotations

import functools
import json

import pytest
import tokenizers
from fixtures import GGUF_VOCAB_NAMES, HF_JSON_FIXTURES, SOURCES, edge_texts, fixture_path, gguf_vocab_path

import polytok
from polytok.cli.main import main
from polytok.parity.explain import component_name

# every real file polytok reads: (fixture name, file) and each ggml-vocab GGUF of the llama-cpp-python sdist
FILES = [(name, next(f["file"] for f in e["files"] if f["format"] != "config/sidecar"))
         for name, e in SOURCES.items()]
GGUFS = list(GGUF_VOCAB_NAMES)


@functools.cache
def _load(name: str, filename: str | None) -> polytok.Tokenizer:
    return polytok.load(fixture_path(name, filename) if filename else gguf_vocab_path(name))


def _outcome(call):
    """The ids, or the error the reference also raises (e.g. a WordPiece file without its unk token)."""
    try:
        return call()
    except polytok.EncodeError as exc:
        return f"EncodeError: {exc}"


def _check_ids(tok: polytok.Tokenizer, label: str, add: bool = True,
               modes: tuple[str, ...] = ("parse", "text")) -> None:
    bad = []
    for special in modes:
        for text in edge_texts():
            want = _outcome(functools.partial(tok.encode, text, add_special=add, special=special))
            got = _outcome(lambda text=text, special=special:
                           polytok.explain(tok, text, add_special=add, special=special).ids)
            if got != want:
                bad.append(f"{label} add_special={add} special={special} {text[:40]!r}: {got[:8]} != {want[:8]}")
    assert not bad, f"{len(bad)} texts:\n" + "\n".join(bad[:5])


@pytest.mark.parametrize("name,filename", FILES, ids=[n for n, _ in FILES])
def test_explain_ids_equal_encode_on_every_fixture(name, filename):
    _check_ids(_load(name, filename), name)


@pytest.mark.parametrize("name", GGUFS)
def test_explain_ids_equal_encode_on_every_gguf_vocab(name):
    _check_ids(_load(name, None), name, modes=("parse",))  # llama.cpp's default; text mode in the slow sweep


@pytest.mark.slow
@pytest.mark.parametrize("name,filename", FILES + [(n, None) for n in GGUFS],
                         ids=[n for n, _ in FILES] + [f"gguf-{n}" for n in GGUFS])
def test_explain_ids_equal_encode_in_the_other_modes(name, filename):
    tok = _load(name, filename)
    _check_ids(tok, name, add=False)
    if filename is None:
        _check_ids(tok, name, modes=("text",))


def _hf_stage_mismatches(name: str) -> list[str]:
    path = fixture_path(name, HF_JSON_FIXTURES[name])
    ref = tokenizers.Tokenizer.from_file(str(path))
    tok = _load(name, HF_JSON_FIXTURES[name])
    out = []
    for text in edge_texts():
        try:
            segments = polytok.explain(tok, text).segments
        except polytok.EncodeError:
            continue  # HF raises too (a WordPiece file without its unk token)
        for seg in segments:
            if seg.token_id is not None or any(p.added is not None for p in seg.pre_tokens):
                continue
            normalized = ref.normalizer.normalize_str(seg.text) if ref.normalizer else seg.text
            if normalized != seg.normalized:
                out.append(f"{name} {text[:30]!r}: normalized {seg.normalized!r}, HF {normalized!r}")
                continue
            if ref.pre_tokenizer is None or not normalized:
                continue
            words = ref.pre_tokenizer.pre_tokenize_str(normalized)
            if [w for w, _ in words] != [p.text for p in seg.pre_tokens]:
                out.append(f"{name} {text[:30]!r}: pre-tokens {[p.text for p in seg.pre_tokens]}, HF {words}")
            elif normalized == seg.text and ([(seg.start + a, seg.start + b) for _, (a, b) in words]
                                             != [(p.start, p.end) for p in seg.pre_tokens]):
                out.append(f"{name} {text[:30]!r}: offsets {[(p.start, p.end) for p in seg.pre_tokens]}, HF {words}")
    return out


@pytest.mark.parametrize("name", sorted(HF_JSON_FIXTURES))
def test_stages_equal_tokenizers_normalizer_and_pre_tokenizer(name):
    bad = _hf_stage_mismatches(name)
    assert not bad, f"{len(bad)} segments:\n" + "\n".join(bad[:5])


def test_render_and_json_show_every_stage():
    tok = _load("mistral-v3-hf-converted", "tokenizer.json")
    ex = polytok.explain(tok, "Hello  world</s>x")
    assert ex.ids == tok.encode("Hello  world</s>x")
    assert [(s.start, s.end, s.token_id) for s in ex.segments] == [(0, 12, None), (12, 16, 2), (16, 17, None)]
    assert ex.segments[0].pre_tokens[0].text == "▁Hello▁▁world"
    assert ex.segments[0].pre_tokens[0].pieces == ["▁Hello", "▁▁", "world"]
    assert ex.added_before == [1] and ex.added_after == []
    text = ex.render()
    for line in ("special -> 2", "'▁▁'=1027", "before [1] after []", "pre_tokenizer=Metaspace"):
        assert line in text, line
    data = json.loads(ex.to_json())
    assert data["ids"] == ex.ids and data["segments"][1]["token_id"] == 2


def test_gguf_spm_shows_the_pipeline_it_has():
    tok = _load("llama-spm", None)
    ex = polytok.explain(tok, "Hello  world")
    assert ex.components["pre_tokenizer"] == component_name(tok.pre_tokenizer)
    assert ex.components["special split"] == "LongestFirstPartition"
    assert ex.segments[0].normalized == "▁Hello▁▁world"  # llama.cpp's escape and prefix, done as a normalizer
    assert "".join(p.text for p in ex.segments[0].pre_tokens) == "▁Hello▁▁world"


def test_cli_explain(capsys):
    path = str(fixture_path("spm-mistral-v3", "tokenizer.model"))
    assert main(["explain", path, "Hi  there"]) == 0
    out = capsys.readouterr().out
    assert "normalized: '▁Hi▁▁there'" in out and "'▁there'=1504" in out
    assert main(["explain", path, "Hi", "--json", "--special", "parse"]) == 0
    assert json.loads(capsys.readouterr().out)["ids"] == polytok.load(path).encode("Hi", special="parse")


def test_cli_explain_missing_file(capsys):
    assert main(["explain", "/nonexistent/tokenizer.json", "x"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("polytok: error:") and err.count("\n") == 1
