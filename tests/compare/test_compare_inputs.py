"""``compare --ref``: the reference engine reads the input polytok read, or the comparison is refused.

A folder or file polytok reads gzip-compressed is handed to the engine decompressed
(polytok.parity.ref_input); the engine's ids must then be its own on the plain
files, run live here (transformers 5.24, HF tokenizers 0.23.3, sentencepiece 0.2.3,
mistral-common 1.13.1, tiktoken 0.14.0). An engine that loads something else than
polytok read is one line and status 1, never a list of divergences.
"""

from __future__ import annotations

import gzip
import shutil
from pathlib import Path

import pytest
from fixtures import edge_texts, fixture_path

import polytok
from polytok.cli.main import main
from polytok.errors import PolytokError
from polytok.parity import reference_side


def _gz(src: Path, target: Path) -> Path:
    target.write_bytes(gzip.compress(src.read_bytes(), mtime=0))
    return target


def _qwen3_gz_folder(tmp_path: Path) -> tuple[Path, Path]:
    """qwen3's tokenizer.json gzipped beside its tokenizer_config.json, and the plain folder."""
    plain, packed = tmp_path / "plain", tmp_path / "packed"
    plain.mkdir()
    packed.mkdir()
    for name in ("tokenizer.json", "tokenizer_config.json"):
        shutil.copyfile(fixture_path("qwen3", name), plain / name)
    _gz(plain / "tokenizer.json", packed / "tokenizer.json.gz")
    shutil.copyfile(plain / "tokenizer_config.json", packed / "tokenizer_config.json")
    return plain, packed


def _corpus(tmp_path: Path, texts: list[str]) -> Path:
    import json

    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(json.dumps({"text": t}) + "\n" for t in texts), encoding="utf-8")
    return corpus


def test_gzipped_folder_against_transformers_reads_the_unpacked_folder(tmp_path, capsys):
    transformers = pytest.importorskip("transformers")
    plain, packed = _qwen3_gz_folder(tmp_path)
    texts = edge_texts()[:60]
    ref = reference_side("hf", str(packed), "B", polytok.load(packed))
    auto = transformers.AutoTokenizer.from_pretrained(str(plain), trust_remote_code=False)
    assert [ref.encode(t, True, None) for t in texts] == [auto.encode(t) for t in texts]
    assert ref.path == str(packed)
    assert main(["compare", str(packed), str(_corpus(tmp_path, texts)), "--ref", "hf"]) == 0
    assert f"texts {len(texts)}  identical {len(texts)}" in capsys.readouterr().out


def test_gzipped_tokenizer_json_against_tokenizers(tmp_path):
    tokenizers = pytest.importorskip("tokenizers")
    plain = fixture_path("gpt2", "tokenizer.json")
    packed = _gz(plain, tmp_path / "tokenizer.json.gz")
    ref = reference_side("hf", str(packed), "B", polytok.load(packed))
    hf = tokenizers.Tokenizer.from_file(str(plain))
    texts = edge_texts()[:60]
    assert [ref.encode(t, True, None) for t in texts] == [hf.encode(t).ids for t in texts]


def test_an_engine_that_loads_another_vocabulary_is_refused_in_one_line(tmp_path, capsys, monkeypatch):
    """transformers cannot see tokenizer.json.gz: from the folder as it is, it builds a tokenizer of the
    config's added tokens alone (measured: 1 base token where the file holds 151643)."""
    pytest.importorskip("transformers")
    from polytok.parity import engines, ref_input

    _, packed = _qwen3_gz_folder(tmp_path)
    monkeypatch.setattr(engines, "engine_input", lambda engine, path, proxy: ref_input.EngineInput(path))
    with pytest.raises(PolytokError, match="did not load the tokenizer polytok read"):
        reference_side("hf", str(packed), "B", polytok.load(packed))
    corpus = _corpus(tmp_path, ["hello world", "Café 123"])
    assert main(["compare", str(packed), str(corpus), "--ref", "hf"]) == 1
    captured = capsys.readouterr()
    assert captured.err.count("\n") == 1 and "did not load" in captured.err
    assert "diverging" not in captured.out


def test_gzipped_tekken_folder_against_mistral_common(tmp_path):
    pytest.importorskip("mistral_common")
    from mistral_common.tokens.tokenizers.tekken import Tekkenizer

    plain = fixture_path("tekken-240718", "tekken.json")
    folder = tmp_path / "tekken"
    folder.mkdir()
    _gz(plain, folder / "tekken.json.gz")
    ref = reference_side("mistral", str(folder), "B", polytok.load(folder))
    live = Tekkenizer.from_file(str(plain))
    texts = edge_texts()[:60]
    assert [ref.encode(t, True, "text") for t in texts] == [live.encode(t, bos=True, eos=False) for t in texts]


def test_gzipped_model_folder_against_sentencepiece(tmp_path, capsys):
    spm = pytest.importorskip("sentencepiece")
    plain = fixture_path("spm-mistral-v3", "tokenizer.model")
    folder = tmp_path / "spm"
    folder.mkdir()
    _gz(plain, folder / "tokenizer.model.gz")
    ref = reference_side("sentencepiece", str(folder), "B", polytok.load(folder))
    sp = spm.SentencePieceProcessor(model_file=str(plain))
    texts = edge_texts()[:60]
    assert [ref.encode(t, False, "text") for t in texts] == [list(sp.encode(t)) for t in texts]
    corpus = _corpus(tmp_path, texts)
    assert main(["compare", str(folder), str(corpus), "--ref", "sentencepiece", "--special", "text"]) == 0


def test_tiktoken_on_a_folder_reads_the_rank_file_polytok_read(tmp_path, capsys):
    tiktoken = pytest.importorskip("tiktoken")
    from tiktoken.load import load_tiktoken_bpe

    plain = fixture_path("cl100k_base-tiktoken", "cl100k_base.tiktoken")
    folder = tmp_path / "ranks"
    folder.mkdir()
    _gz(plain, folder / "cl100k_base.tiktoken")  # gzip data under the plain name
    tok = polytok.load(folder / "cl100k_base.tiktoken")
    ref = reference_side("tiktoken", str(folder), "B", tok)
    enc = tiktoken.Encoding("cl100k", pat_str=tok.facts.pattern, mergeable_ranks=load_tiktoken_bpe(str(plain)),
                            special_tokens={})
    texts = edge_texts()[:60]
    assert [ref.encode(t, False, "text") for t in texts] == [enc.encode_ordinary(t) for t in texts]


def test_a_folder_with_custom_code_is_refused_without_a_prompt(tmp_path, monkeypatch):
    """chatglm3's tokenizer_config.json names its own tokenizer class (auto_map): transformers asks on stdin
    whether to run that code unless trust_remote_code is given; compare must never wait on a prompt."""
    pytest.importorskip("transformers")
    import builtins

    folder = tmp_path / "chatglm3"
    folder.mkdir()
    for name in ("tokenizer.json", "tokenizer_config.json"):
        shutil.copyfile(fixture_path("chatglm3", name), folder / name)
    asked = []
    monkeypatch.setattr(builtins, "input", lambda *a: asked.append(a) or "n")
    with pytest.raises(PolytokError, match="hf could not load it"):
        reference_side("hf", str(folder), "B", None)
    assert asked == []
