"""``polytok train``: the files it writes against HF tokenizers' trainers (live)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fixtures import bench_slice, fixture_path

from polytok.cli.main import main

tokenizers = pytest.importorskip("tokenizers")


def test_bpe_file_equals_hf(tmp_path: Path) -> None:
    """HF's train(files) keeps each line's end ("\\n", "\\r\\n"; the last line as it ends): so does polytok."""
    text = bench_slice("bench_multi", 30_000).replace("\n", "\r\n", 40) + "\n\nlast line, no end"
    corpus = tmp_path / "corpus.txt"
    corpus.write_bytes(text.encode("utf-8"))
    out = tmp_path / "tokenizer.json"
    assert main(["train", str(corpus), "--model", "bpe", "--vocab-size", "600", "--special-token", "<|end|>",
                 "--min-frequency", "2", "--out", str(out), "--workers", "2"]) == 0
    ref = tokenizers.Tokenizer(tokenizers.models.BPE())
    ref.pre_tokenizer = tokenizers.pre_tokenizers.ByteLevel(add_prefix_space=False)
    trainer = tokenizers.trainers.BpeTrainer(vocab_size=600, min_frequency=2, special_tokens=["<|end|>"],
                                             initial_alphabet=tokenizers.pre_tokenizers.ByteLevel.alphabet(),
                                             show_progress=False)
    ref.train([str(corpus)], trainer)
    mine = json.loads(tokenizers.Tokenizer.from_file(str(out)).to_str())
    theirs = json.loads(ref.to_str())
    for key in ("model", "added_tokens", "pre_tokenizer", "normalizer"):
        assert mine[key] == theirs[key], key


def test_wordlevel_and_refusals(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("a b c a b a\n", encoding="utf-8")
    out = tmp_path / "wl.json"
    assert main(["train", str(corpus), "--model", "wordlevel", "--vocab-size", "10", "--out", str(out)]) == 0
    assert json.loads(out.read_text(encoding="utf-8"))["model"]["vocab"] == {"a": 0, "b": 1, "c": 2}
    capsys.readouterr()
    spm_model = str(fixture_path("spm-botchan-bpe-1000", "spm.model"))
    assert main(["train", str(corpus), "--from", spm_model, "--vocab-size", "10", "--out", str(out)]) == 1
    assert "needs the tokenizer.json" in capsys.readouterr().err

