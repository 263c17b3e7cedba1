"""polytok compare against the reference engines, run live: the known divergences are found and named,
identical tokenizers give exit status 0, bad input one line and status 1 (2 for usage)."""

from __future__ import annotations

import functools
import json
import sys

import pytest
from fixtures import GGUF_VOCAB_NAMES, edge_texts, fixture_path, gguf_vocab_path

import polytok
from polytok.cli.main import main
from polytok.parity import compare, reference_side
from polytok.parity.compare import CompareReport

SPACE_RUNS = ["Hello  world", "a   b    c", "x\n\n  y", "two  spaces,   three", "  leading"]


@functools.cache
def _load(path: str) -> polytok.Tokenizer:
    return polytok.load(path)


def _mistral() -> tuple[str, str]:
    return (str(fixture_path("mistral-v3-hf-converted", "tokenizer.json")),
            str(fixture_path("spm-mistral-v3", "tokenizer.model")))


def _reasons(report: CompareReport) -> dict[str, list[str]]:
    return {r.text: r.reasons for r in report.diverging}


def test_mistral_v3_space_runs_against_polytoks_sentencepiece_reader():
    hf, spm = _mistral()
    report = compare(_load(hf), _load(spm), SPACE_RUNS + ["Hello world"], explain=True, add_special=False,
                     special="text")
    assert {r.text for r in report.diverging} == set(SPACE_RUNS)
    for r in report.diverging:
        if r.text == "  leading":  # HF adds no ▁ before a leading space, sentencepiece does
            assert r.reasons == ["metaspace-leading-space"] and r.stage == "normalize", (r.reasons, r.stage)
            continue
        assert r.reasons == ["spm-space-runs"], r
        assert r.stage == "model", r.stage_detail
    first = next(r for r in report.diverging if r.text == "Hello  world")
    assert (first.region.a_start, first.region.a_end, first.region.b_start, first.region.b_end) == (1, 3, 1, 3)
    assert first.region.text_a == first.region.text_b == "  world"  # re-synchronised after the word
    assert [w[1] for w in first.window_a if w[2]] == ["▁▁", "world"]
    assert [w[1] for w in first.window_b if w[2]] == ["▁", "▁world"]


def test_mistral_v3_space_runs_against_live_sentencepiece_cli(tmp_path, capsys):
    hf, spm = _mistral()
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("\n".join(SPACE_RUNS + ["Hello world"]) + "\n", encoding="utf-8")
    status = main(["compare", hf, str(corpus), "--ref", "sentencepiece", "--ref-file", spm, "--explain",
                   "--no-add-special", "--special", "text"])
    out = capsys.readouterr().out
    assert status == 3
    assert "reason spm-space-runs" in out and "first differing stage: model" in out
    assert "'▁▁'=1027 'world'=10239" in out and "'▁'=29473 '▁world'=2294" in out
    # one text per line: "x\n\n  y" is the texts "x" and "  y" (the empty line is skipped)
    assert "texts 7  identical 2  diverging 5" in out
    assert "reasons: spm-space-runs 3, metaspace-leading-space 2" in out


def test_mistral_v3_over_edge_texts_every_divergence_is_named_with_its_stage():
    hf, spm = _mistral()
    report = compare(_load(hf), reference_side("sentencepiece", spm, "B", _load(spm)), edge_texts(),
                     add_special=False, special="text", explain=True)
    assert len(report.diverging) >= 10
    stage_of = {"spm-space-runs": "model", "metaspace-leading-space": "normalize"}
    for r in report.diverging:
        assert len(r.reasons) == 1 and r.reasons[0] in stage_of, (r.text, r.reasons)
        assert r.stage == stage_of[r.reasons[0]], (r.text, r.stage, r.stage_detail)


def test_identical_tokenizers_exit_zero(tmp_path, capsys):
    _, spm = _mistral()
    corpus = tmp_path / "edge.jsonl"
    corpus.write_text("".join(json.dumps({"text": t}) + "\n" for t in edge_texts()), encoding="utf-8")
    assert main(["compare", spm, str(corpus), "--ref", "sentencepiece"]) == 0
    assert "identical 230  diverging 0" in capsys.readouterr().out
    assert main(["compare", spm, spm, str(corpus), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["summary"]["diverging"] == 0


@pytest.mark.parametrize("name", ["llama-spm", "llama-bpe", "phi-3", "bert-bge", "qwen2", "gpt-2"])
def test_gguf_against_llama_cpp_has_no_divergence(name):
    pytest.importorskip("llama_cpp")
    path = str(gguf_vocab_path(name))
    ref = reference_side("llama.cpp", path, "B", _load(path))
    for add, special in ((True, "parse"), (False, "text")):
        report = compare(_load(path), ref, edge_texts(), add_special=add, special=special)
        assert not report.diverging, report.render(3)


@pytest.mark.parametrize("name,filename,engine", [
    ("gpt2", "tokenizer.json", "hf"), ("llama3", "tokenizer.json", "hf"),
    ("cl100k_base-tiktoken", "cl100k_base.tiktoken", "tiktoken"), ("tekken-240718", "tekken.json", "mistral")])
def test_other_engines_agree_with_polytok(name, filename, engine):
    path = str(fixture_path(name, filename))
    report = compare(_load(path), reference_side(engine, path, "B", _load(path)), edge_texts())
    assert not report.diverging, report.render(3)


# --- HF against llama.cpp on the same model -------------------------------------------------------


def _hf_vs_llama(hf_name: str, gguf_name: str, live: bool):
    hf = str(fixture_path(hf_name, "tokenizer.json"))
    gguf = str(gguf_vocab_path(gguf_name))
    if not live:
        return _load(hf), _load(gguf)
    pytest.importorskip("llama_cpp")
    return reference_side("hf", hf, "A", _load(hf)), reference_side("llama.cpp", gguf, "B", _load(gguf))


@pytest.mark.parametrize("live", [True, False], ids=["engines", "polytok-readers"])
def test_phi3_hf_and_llama_cpp_differ_on_markers_and_bos(live):
    a, b = _hf_vs_llama("phi-3-mini", "phi-3", live)
    texts = ["</s>", "<s> hello </s>", "plain text"]
    report = compare(a, b, texts, add_special=False, special="text", explain=True)
    reasons = _reasons(report)
    assert set(reasons) == {"</s>", "<s> hello </s>"}
    assert all("marker-parsed-one-side" in r for r in reasons.values()), reasons
    assert all(r.stage == "special split" for r in report.diverging)
    report = compare(a, b, ["plain text"], add_special=True, special="parse")
    assert report.diverging[0].reasons == ["special-added-one-side"]
    assert report.diverging[0].kind == "extra tokens"


@pytest.mark.parametrize("live", [True, False], ids=["engines", "polytok-readers"])
def test_bert_hf_and_llama_cpp_differ_on_control_and_combining_characters(live):
    a, b = _hf_vs_llama("bert-base-uncased", "bert-bge", live)
    texts = ["vertical\x0btab and form\x0cfeed", "안녕하세요, 세계!", "hello world"]
    reasons = _reasons(compare(a, b, texts, add_special=True, special="parse", explain=True))
    assert set(reasons) == set(texts[:2])
    assert "control-characters" in reasons[texts[0]]
    assert "unicode-normalization" in reasons[texts[1]]


def test_redefined_tokens_appended_by_transformers_are_named():
    pytest.importorskip("google.protobuf", reason="transformers reads a .model folder only with protobuf")
    folder = "tests/data/convert/arctic"
    ref = reference_side("hf", folder, "B", None)
    text = "<|im_start|>user hi<|im_end|>"
    report = compare(polytok.load(folder), ref, [text, "hello"], add_special=False, special="parse")
    (r,) = report.diverging
    assert r.reasons == ["redefined-token-appended"]
    assert (r.region.a_start, r.region.a_end) == (0, 1)  # one id for another, then in step again


# --- bad input ------------------------------------------------------------------------------------


def test_bad_input_is_one_line_and_status_1(tmp_path, capsys, monkeypatch):
    _, spm = _mistral()
    corpus = tmp_path / "c.txt"
    corpus.write_text("x\n", encoding="utf-8")
    cases = [
        ["compare", "/nonexistent.json", spm, str(corpus)],
        ["compare", spm, str(tmp_path / "missing.txt"), "--ref", "sentencepiece"],
        ["compare", spm, str(corpus), "--ref", "sentencepiece", "--ref-file", "/nonexistent.model"],
        ["compare", spm, str(corpus), "--ref", "mistral"],  # not a tekken file
        ["compare", spm, str(corpus)],  # A B CORPUS needs three paths
    ]
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"text": "ok"}\n{"body": "x"}\n', encoding="utf-8")
    cases.append(["compare", spm, spm, str(bad)])
    for argv in cases:
        assert main(argv) == 1, argv
        err = capsys.readouterr().err
        assert err.startswith("polytok: error:") and err.count("\n") == 1, (argv, err)
    monkeypatch.setitem(sys.modules, "sentencepiece", None)
    assert main(["compare", spm, str(corpus), "--ref", "sentencepiece"]) == 1
    assert "needs the package sentencepiece" in capsys.readouterr().err


def test_unknown_engine_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["compare", "a", "b", "--ref", "nope"])
    assert exc.value.code == 2
    assert "invalid choice" in capsys.readouterr().err


@pytest.mark.slow
@pytest.mark.parametrize("name", list(GGUF_VOCAB_NAMES))
def test_every_sdist_gguf_against_llama_cpp_cli(name, tmp_path, capsys):
    pytest.importorskip("llama_cpp")
    corpus = tmp_path / "edge.jsonl"
    corpus.write_text("".join(json.dumps({"text": t}) + "\n" for t in edge_texts()), encoding="utf-8")
    path = str(gguf_vocab_path(name))
    for mode in ([], ["--special", "text"], ["--no-add-special"]):
        assert main(["compare", path, str(corpus), "--ref", "llama.cpp", *mode]) == 0, capsys.readouterr().out


def test_cli_against_llama_cpp_and_transformers_folder(tmp_path, capsys):
    pytest.importorskip("llama_cpp")
    corpus = tmp_path / "c.txt"
    corpus.write_text("Hello  world\n<s>x</s>\n", encoding="utf-8")
    assert main(["compare", str(gguf_vocab_path("llama-spm")), str(corpus), "--ref", "llama.cpp", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["summary"] == {"texts": 2, "identical": 2, "diverging": 0,
                                                               "kinds": {}, "reasons": {}, "stages": {}}
    folder = tmp_path / "gpt2"
    folder.mkdir()
    for name in ("tokenizer.json", "tokenizer_config.json"):
        (folder / name).write_bytes(fixture_path("gpt2", name).read_bytes())
    assert main(["compare", str(folder), str(corpus), "--ref", "hf"]) == 0
    assert "(transformers, tokenizer.json)" in capsys.readouterr().out


def test_an_encode_error_on_one_side_is_a_divergence_and_on_both_is_agreement():
    path = str(fixture_path("labse-cropped", "tokenizer.json"))  # a WordPiece file without its unk token
    tok = _load(path)
    text = next(t for t in edge_texts() if _raises(tok, t))
    report = compare(tok, reference_side("hf", path, "B", tok), [text, "hello"])
    assert not report.diverging  # both raise on the text: the reference does too
    report = compare(tok, _load(str(fixture_path("bert-base-uncased", "tokenizer.json"))), [text])
    (r,) = report.diverging
    assert r.kind == "error" and r.error.startswith("A raised EncodeError")
    assert "error: A raised EncodeError" in report.render()


def _raises(tok, text):
    try:
        tok.encode(text)
    except polytok.EncodeError:
        return True
    return False


def test_redefinitions_of_every_synthetic_folder_are_named():
    pytest.importorskip("google.protobuf", reason="transformers reads a .model folder only with protobuf")
    for folder in ("tests/data/convert/arctic", "tests/data/convert/internlm2"):
        with open(f"{folder}/tokenizer_config.json", encoding="utf-8") as f:
            config = json.load(f)
        tok = polytok.load(folder)
        spm = pytest.importorskip("sentencepiece").SentencePieceProcessor(model_file=f"{folder}/tokenizer.model")
        redefined = [v["content"] for k, v in config["added_tokens_decoder"].items()
                     if int(k) < spm.get_piece_size() and spm.id_to_piece(int(k)) != v["content"]]
        assert redefined, folder
        report = compare(tok, reference_side("hf", folder, "B", None), redefined, add_special=False, special="parse")
        assert len(report.diverging) == len(redefined), folder
        for r in report.diverging:
            assert r.reasons == ["redefined-token-appended"] and r.kind == "same pieces, other ids", (r.text, r.reasons)
