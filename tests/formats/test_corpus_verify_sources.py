"""verify-corpus checks the tokenizer and the inputs too: ok only when shards, tokenizer files
(chat_template.jinja included) and inputs all match the manifest; a changed or missing one is
exit 1 naming it; ``--shards-only`` checks the shards alone and says so.

Plumbing only: the tokenizer is gpt2's tokenizer.json (the builtin copy) in a folder of its own;
no ids are compared here (test_corpus.py compares them with HF tokenizers).
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import fixtures
import pytest

from polytok import corpus
from polytok.cli.main import main


@pytest.fixture
def run(tmp_path: Path) -> tuple[Path, Path, Path]:
    folder = tmp_path / "tok"
    folder.mkdir()
    builtin = fixtures.REPO_ROOT / "src" / "polytok" / "data" / "gpt2.json.gz"
    (folder / "tokenizer.json").write_bytes(gzip.decompress(builtin.read_bytes()))
    (folder / "chat_template.jinja").write_text("{{ messages[0]['content'] }}", encoding="utf-8")
    (folder / "model.safetensors").write_bytes(b"weights are not the tokenizer")
    src = tmp_path / "in.jsonl"
    src.write_text("".join(json.dumps({"text": f"document {i}"}) + "\n" for i in range(20)), encoding="utf-8")
    out = tmp_path / "out"
    corpus.tokenize(str(folder), [str(src)], str(out), shard_bytes=200, workers=1)
    return folder, src, out


def _verify(out: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> tuple[int, str, str]:
    code = main(["verify-corpus", str(out), *extra])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_ok_names_what_was_checked(run: Any, capsys: pytest.CaptureFixture[str]) -> None:
    folder, _, out = run
    code, stdout, _ = _verify(out, capsys)
    assert code == 0 and stdout.startswith("ok: ") and stdout.endswith("; the tokenizer and inputs unchanged\n")
    assert set(json.loads((out / "manifest.json").read_text())["tokenizer"]["files"]) == {
        "chat_template.jinja", "tokenizer.json"}
    (folder / "model.safetensors").write_bytes(b"other weights")  # not a tokenizer file: still ok
    assert _verify(out, capsys)[0] == 0


@pytest.mark.parametrize("name", ["tokenizer.json", "chat_template.jinja"])
def test_changed_tokenizer_file(run: Any, capsys: pytest.CaptureFixture[str], name: str) -> None:
    folder, _, out = run
    with open(folder / name, "a", encoding="utf-8") as f:
        f.write("\n")
    code, stdout, err = _verify(out, capsys)
    assert code == 1 and stdout == ""
    assert err == f"polytok: error: {out}/manifest.json: key tokenizer: the tokenizer {folder} changed since the " \
                  f"run: {name} differs\n"


def test_changed_and_missing_input(run: Any, capsys: pytest.CaptureFixture[str]) -> None:
    folder, src, out = run
    src.write_bytes(src.read_bytes().replace(b"document 3", b"document 4"))
    code, _, err = _verify(out, capsys)
    assert code == 1 and err.startswith(f"polytok: error: {out}/manifest.json: key inputs[0]: input {src} changed "
                                        "since the run (")
    src.rename(src.with_suffix(".moved"))
    code, _, err = _verify(out, capsys)
    assert code == 1 and err == f"polytok: error: {out}/manifest.json: key inputs[0]: input {src} is not there " \
                                "(moved?): run verify-corpus --shards-only to check the shards alone\n"
    code, stdout, _ = _verify(out, capsys, "--shards-only")
    assert code == 0 and stdout.endswith("; shards only: the tokenizer and inputs were NOT checked\n")


def test_missing_tokenizer(run: Any, capsys: pytest.CaptureFixture[str]) -> None:
    folder, _, out = run
    folder.rename(folder.with_name("elsewhere"))
    code, _, err = _verify(out, capsys)
    assert code == 1 and err == f"polytok: error: {out}/manifest.json: key tokenizer: the tokenizer {folder} is " \
                                "not there (moved?): run verify-corpus --shards-only to check the shards alone\n"
    assert _verify(out, capsys, "--shards-only")[0] == 0
