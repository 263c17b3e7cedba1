"""``polytok encode/count --special raise`` and ``--allow-special``, against HF tokenizers on the built-in gpt2."""

from __future__ import annotations

import gzip
import subprocess
import sys

import tokenizers

from polytok.formats import BUILTIN


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "polytok", *args], capture_output=True, text=True, timeout=120)


def _ref() -> tokenizers.Tokenizer:
    with gzip.open(BUILTIN["gpt2"], "rt", encoding="utf-8") as f:
        return tokenizers.Tokenizer.from_str(f.read())


TEXT = "a<|endoftext|>b"


def test_allow_special_parses_the_marker_and_raise_refuses_it(tmp_path):
    ref = _ref()
    parsed = ref.encode(TEXT).ids
    ref.encode_special_tokens = True
    as_text = ref.encode(TEXT).ids
    assert parsed != as_text
    got = run("encode", "gpt2", TEXT, "--allow-special", "<|endoftext|>")
    assert got.returncode == 0, got.stderr
    assert got.stdout.split() == [str(i) for i in parsed]
    got = run("encode", "gpt2", TEXT, "--allow-special", "<|other|>")
    assert got.stdout.split() == [str(i) for i in as_text]
    got = run("encode", "gpt2", TEXT, "--special", "raise")
    assert got.returncode == 1 and "'<|endoftext|>' at character 1" in got.stderr and not got.stdout
    assert len(got.stderr.strip().splitlines()) == 1, got.stderr
    got = run("encode", "gpt2", "plain", "--special", "raise")
    assert got.returncode == 0 and got.stdout.split() == [str(i) for i in ref.encode("plain").ids]
    got = run("encode", "gpt2", TEXT, "--special", "parse", "--allow-special", "<|endoftext|>")
    assert got.returncode != 0 and "--allow-special" in got.stderr
    path = tmp_path / "t.txt"
    path.write_text(TEXT + "\n", encoding="utf-8")
    ref.encode_special_tokens = False
    for workers in ("1", "2"):
        got = run("count", "gpt2", str(path), "--allow-special", "<|endoftext|>", "--workers", workers)
        assert got.stdout.split()[0] == str(len(ref.encode(TEXT + "\n").ids)), got.stderr
