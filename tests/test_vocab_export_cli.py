"""``polytok export-vocab``, run as a user runs it (a subprocess), its files read back against the references.

tiktoken's ``decode_single_token_bytes`` and ``eot_token`` and HF tokenizers' added-token table give the
expected values; the errors are one line on stderr with status 1 (2 for bad usage).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from fixtures import fixture_path

from polytok.vocab_export import text_bytes

SRC = str(Path(__file__).resolve().parent.parent / "src")


def run(*args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=SRC + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run([sys.executable, "-m", "polytok", *args], capture_output=True, text=True, env=env,
                          timeout=300)


@pytest.fixture(scope="module")
def cl100k() -> tuple[Path, object]:
    tiktoken = pytest.importorskip("tiktoken")
    from tiktoken.load import load_tiktoken_bpe

    from polytok.formats.tiktoken_known import KNOWN_RANKS

    path = fixture_path("cl100k_base-tiktoken", "cl100k_base.tiktoken")
    known = next(k for k in KNOWN_RANKS.values() if k.name == "cl100k_base")  # tiktoken_ext's pattern and specials
    return path, tiktoken.Encoding(known.name, pat_str=known.pattern, mergeable_ranks=load_tiktoken_bpe(str(path)),
                                   special_tokens=known.special_tokens)


def test_llguidance_file_holds_the_reference_bytes(cl100k: tuple[Path, object], tmp_path: Path) -> None:
    path, ref = cl100k
    out = tmp_path / "vocab.json"
    done = run("export-vocab", str(path), "--format", "llguidance", "--out", str(out))
    assert done.returncode == 0, done.stderr
    data = json.loads(out.read_text(encoding="utf-8"))
    assert data["format"] == "llguidance" and data["token_encoding"] == "latin-1"
    assert len(data["tokens"]) == ref.n_vocab == data["vocab_size"]  # type: ignore[attr-defined]
    for id_, text in enumerate(data["tokens"]):
        try:
            want = ref.decode_single_token_bytes(id_)  # type: ignore[attr-defined]
        except KeyError:
            want = b""  # an id no token has
        assert text_bytes(text) == want, id_
    assert data["eos_token_ids"] == [ref.eot_token]  # type: ignore[attr-defined]
    assert set(data["special_token_ids"]) == {ref.encode_single_token(t) for t in ref.special_tokens_set}  # type: ignore[attr-defined]


def test_stdout_eos_and_vocab_size(cl100k: tuple[Path, object]) -> None:
    path, ref = cl100k
    done = run("export-vocab", str(path), "--format", "xgrammar", "--eos", "100257", "--eos", "100276",
               "--vocab-size", "100352")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["metadata"] == {"vocab_type": 0, "vocab_size": 100352, "add_prefix_space": False,
                                "stop_token_ids": [100257, 100276]}
    vocab = data["encoded_vocab"]
    assert len(vocab) == 100352 and vocab[100300:] == [""] * 52
    assert text_bytes(vocab[100257]) == b"<|endoftext|>" and vocab[100258] == ""  # a stop id keeps its text


def test_a_tokenizer_json_alone_names_no_stop_token() -> None:
    """tokenizer.json has no EOS of its own (transformers reads it from tokenizer_config.json)."""
    done = run("export-vocab", str(fixture_path("gpt2", "tokenizer.json")), "--format", "outlines")
    assert done.returncode == 1
    assert done.stderr.count("\n") == 1 and "--eos" in done.stderr and "Traceback" not in done.stderr
    done = run("export-vocab", str(fixture_path("gpt2", "tokenizer.json")), "--format", "outlines", "--eos", "50256")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["eos_token_id"] == 50256 and "<|endoftext|>" not in data["vocabulary"]


@pytest.mark.parametrize("args,message", [
    (["--eos", "100261"], "100261"),  # a hole of cl100k_base
    (["--eos", "5000000"], "5000000"),
    (["--vocab-size", "100"], "vocab_size 100"),
    (["--vocab-size", "99999999999"], "vocab_size 99999999999"),
])
def test_bad_arguments_are_one_line(cl100k: tuple[Path, object], args: list[str], message: str) -> None:
    path, _ = cl100k
    done = run("export-vocab", str(path), "--format", "llguidance", *args)
    assert done.returncode == 1
    assert done.stderr.count("\n") == 1 and message in done.stderr, done.stderr


def test_unknown_format_is_a_usage_error(cl100k: tuple[Path, object]) -> None:
    done = run("export-vocab", str(cl100k[0]), "--format", "lmql")
    assert done.returncode == 2 and "invalid choice" in done.stderr
