"""tokenize-corpus tokenizes whole documents: a file's truncation and padding are left out unless asked for.

Expected ids come from HF tokenizers 0.23.3 run live on the same documents:
``Tokenizer.from_file(f)`` after ``no_truncation()`` and ``no_padding()`` by
default, as the file says with ``truncation=True`` (``--truncation``). The files
are the built-in GPT-2 tokenizer.json with a truncation / padding section
written in (synthetic), and the real GPT-2 tokenizer.json of ../shared, which
cuts at 50. The manifest records the choice; ``--resume`` refuses a changed one
where it changes the bytes; a start that fails leaves nothing that stops a rerun.
The last two are plumbing (polytok against itself).
"""

from __future__ import annotations

import gzip
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import fixtures
import pytest

from formats.corpus_helpers import folder_digest, manifest, read_bin_shards, write_jsonl
from polytok import corpus
from polytok.errors import FormatError, PolytokError

tokenizers = pytest.importorskip("tokenizers")

SRC = str(fixtures.REPO_ROOT / "src")
TRUNCATE = {"direction": "Left", "max_length": 40, "strategy": "LongestFirst", "stride": 2}
PAD = {"strategy": {"Fixed": 64}, "direction": "Right", "pad_to_multiple_of": None, "pad_id": 50256,
       "pad_type_id": 0, "pad_token": "<|endoftext|>"}


def _tokenizer_json(folder: Path, truncation: Any = None, padding: Any = None) -> Path:
    builtin = fixtures.REPO_ROOT / "src" / "polytok" / "data" / "gpt2.json.gz"
    data = json.loads(gzip.decompress(builtin.read_bytes()))
    data["truncation"], data["padding"] = truncation, padding
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "tokenizer.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def _hf_ids(path: Path, docs: list[str], whole: bool) -> list[list[int]]:
    ref = tokenizers.Tokenizer.from_file(str(path))
    if whole:
        ref.no_truncation()
        ref.no_padding()
    return [ref.encode(d).ids for d in docs]


@pytest.fixture(scope="module")
def docs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    path = tmp_path_factory.mktemp("whole") / "docs.jsonl"
    rows = write_jsonl(path, 400)
    return path, [doc for _, doc in rows if doc is not None]  # write_jsonl's bad records are no documents


@pytest.mark.parametrize("truncation, padding", [(TRUNCATE, None), (TRUNCATE, PAD), (None, PAD)])
@pytest.mark.parametrize("workers", [1, 2])
def test_documents_are_whole_unless_truncation(docs: Any, tmp_path: Path, truncation: Any, padding: Any,
                                               workers: int) -> None:
    path, texts = docs
    tok_path = _tokenizer_json(tmp_path / "tok", truncation, padding)
    for whole in (True, False):
        out = tmp_path / f"out-{whole}"
        m = corpus.tokenize(str(tok_path), [str(path)], str(out), shard_bytes=30_000, workers=workers,
                            truncation=not whole)
        want = _hf_ids(tok_path, texts, whole)
        assert read_bin_shards(out) == want
        assert m["tokens"] == sum(map(len, want))
        assert m["settings"]["truncation"] == ("ignored" if whole else "applied")
        assert corpus.verify(str(out)) == m


def test_real_gpt2_file_through_the_cli(docs: Any, tmp_path: Path) -> None:
    """The real GPT-2 tokenizer.json cuts at 50: the CLI says once that it leaves that out, and
    --truncation applies it; verify-corpus reports which."""
    path, texts = docs
    tok_path = fixtures.fixture_path("gpt2", "tokenizer.json")
    env = {"PYTHONPATH": SRC, "PATH": ""}
    for whole in (True, False):
        out = tmp_path / f"o-{whole}"
        done = subprocess.run([sys.executable, "-m", "polytok", "tokenize-corpus", str(tok_path), str(path),
                               "--out", str(out), "--shard-mb", "0.05", *([] if whole else ["--truncation"])],
                              capture_output=True, text=True, env=env)
        assert done.returncode == 0, done.stderr
        assert done.stderr == ("polytok: note: tokenizing whole documents, leaving out the tokenizer's truncation "
                               "to 50 tokens (apply with --truncation)\n" if whole else "")
        assert read_bin_shards(out) == _hf_ids(tok_path, texts, whole)
        verified = subprocess.run([sys.executable, "-m", "polytok", "verify-corpus", str(out)],
                                  capture_output=True, text=True, env=env)
        assert verified.returncode == 0, verified.stderr
        assert verified.stdout.rstrip().endswith(
            f"; the tokenizer's truncation and padding {'ignored' if whole else 'applied'}")


def _interrupted(full: Path, part: Path) -> None:
    """`part`: `full` as a run cut after its first shard."""
    shutil.copytree(full, part)
    m = manifest(part)
    m["shards"], m["complete"] = m["shards"][:1], False
    (part / "manifest.json").write_text(json.dumps(m), encoding="utf-8")


def test_resume_with_another_choice(docs: Any, tmp_path: Path) -> None:
    """Plumbing: --resume refuses a changed choice where the tokenizer truncates or pads, naming
    settings.truncation; where it has neither, the choice changes no byte and is no difference."""
    path, _ = docs
    tok_path = _tokenizer_json(tmp_path / "tok", TRUNCATE)
    full = tmp_path / "full"
    corpus.tokenize(str(tok_path), [str(path)], str(full), shard_bytes=30_000)
    _interrupted(full, tmp_path / "part")
    with pytest.raises(FormatError, match=r"key settings\.truncation: --resume with a different "
                                          r"settings\.truncation \('applied'\) than the run that wrote it "
                                          r"\('ignored'\)"):
        corpus.tokenize(str(tok_path), [str(path)], str(tmp_path / "part"), shard_bytes=30_000, resume=True,
                        truncation=True)
    corpus.tokenize(str(tok_path), [str(path)], str(tmp_path / "part"), shard_bytes=30_000, resume=True)
    assert folder_digest(tmp_path / "part") == folder_digest(full)

    plain = tmp_path / "plain"
    m = corpus.tokenize("gpt2", [str(path)], str(plain), shard_bytes=30_000)
    assert m["settings"]["truncation"] == "none"
    _interrupted(plain, tmp_path / "plain-part")
    corpus.tokenize("gpt2", [str(path)], str(tmp_path / "plain-part"), shard_bytes=30_000, resume=True,
                    truncation=True)
    assert folder_digest(tmp_path / "plain-part") == folder_digest(plain)


def test_resume_of_a_manifest_without_the_choice(docs: Any, tmp_path: Path) -> None:
    """Plumbing: a manifest written before settings.truncation was recorded came from a run that
    applied the file's truncation: resuming it needs --truncation, and verify accepts it."""
    path, _ = docs
    tok_path = _tokenizer_json(tmp_path / "tok", TRUNCATE)
    full = tmp_path / "full"
    corpus.tokenize(str(tok_path), [str(path)], str(full), shard_bytes=30_000, truncation=True)
    part = tmp_path / "part"
    _interrupted(full, part)
    m = manifest(part)
    del m["settings"]["truncation"]
    (part / "manifest.json").write_text(json.dumps(m), encoding="utf-8")
    with pytest.raises(FormatError, match=r"key settings\.truncation: .* \('ignored'\) than the run that wrote "
                                          r"it \('applied'\)"):
        corpus.tokenize(str(tok_path), [str(path)], str(part), shard_bytes=30_000, resume=True)
    corpus.tokenize(str(tok_path), [str(path)], str(part), shard_bytes=30_000, resume=True, truncation=True)
    assert folder_digest(part) == folder_digest(full)
    old = manifest(full)
    del old["settings"]["truncation"]
    (full / "manifest.json").write_text(json.dumps(old), encoding="utf-8")
    corpus.verify(str(full))
    old["settings"]["truncation"] = "sometimes"
    (full / "manifest.json").write_text(json.dumps(old), encoding="utf-8")
    with pytest.raises(FormatError, match=r"key settings\.truncation: 'sometimes' is none of none, ignored, applied"):
        corpus.verify(str(full))


# --- a failed start leaves nothing that stops the rerun --------------------------------------------------

def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "polytok", "tokenize-corpus", *args], capture_output=True,
                          text=True, env={"PYTHONPATH": SRC, "PATH": ""}, timeout=300)


@pytest.mark.parametrize("failure", ["bad tokenizer", "missing input", "out under a file", "workers 0",
                                     "unknown separator", "shard-mb 0", "bad record with on-error fail",
                                     "unknown option", "resume of an empty folder"])
def test_a_failed_start_leaves_nothing_in_the_way(docs: Any, tmp_path: Path, failure: str) -> None:
    """Plumbing: each failed start exits 1 with one line; then the same command with the argument put
    right (without --resume) runs, and equals a run that never failed."""
    path, _ = docs
    small = tmp_path / "small.jsonl"
    small.write_bytes(b"".join(path.read_bytes().splitlines(keepends=True)[:60]))  # line 7 is not JSON
    out = tmp_path / "out"
    right = ["gpt2", str(small), "--out", str(out), "--shard-mb", "0.002"]
    wrong = {
        "bad tokenizer": ["/no/such/tokenizer.json", *right[1:]],
        "missing input": [right[0], str(tmp_path / "missing.jsonl"), *right[2:]],
        "out under a file": [*right[:3], str(small / "out"), *right[4:]],
        "workers 0": [*right, "--workers", "0"],
        "unknown separator": [*right, "--append-eos", "<|no such token|>"],
        "shard-mb 0": [*right[:4], "--shard-mb", "0"],
        "bad record with on-error fail": [*right, "--on-error", "fail"],
        "unknown option": [*right, "-o", "lowercase=true"],
        "resume of an empty folder": [*right, "--resume", "--workers", "0"],
    }[failure]
    if failure == "resume of an empty folder":
        out.mkdir()
    failed = _cli(*wrong)
    assert failed.returncode == 1 and failed.stderr.count("\n") == 1, failed.stderr
    assert "Traceback" not in failed.stderr
    assert not out.exists() or os.listdir(out) == [], os.listdir(out)
    done = _cli(*right)
    assert done.returncode == 0, done.stderr
    fresh = tmp_path / "fresh"
    corpus.tokenize("gpt2", [str(small)], str(fresh), shard_bytes=2000)
    assert folder_digest(out) == folder_digest(fresh)


def test_a_start_killed_before_its_first_shard(docs: Any, tmp_path: Path) -> None:
    """Plumbing: a folder whose manifest lists no shard (a start killed before the first one was
    listed) holds nothing to keep: a fresh run takes it, and so does --resume with other settings."""
    path, _ = docs
    out = tmp_path / "out"
    corpus.tokenize("gpt2", [str(path)], str(out), shard_bytes=30_000)
    m = manifest(out)
    m["shards"], m["complete"], m["settings"]["shard_bytes"] = [], False, 1
    (out / "manifest.json").write_text(json.dumps(m), encoding="utf-8")
    reference = tmp_path / "reference"
    corpus.tokenize("gpt2", [str(path)], str(reference), shard_bytes=30_000)
    corpus.tokenize("gpt2", [str(path)], str(out), shard_bytes=30_000)  # the unlisted shard files are replaced
    assert folder_digest(out) == folder_digest(reference)
    (out / "manifest.json").write_text(json.dumps(m), encoding="utf-8")
    corpus.tokenize("gpt2", [str(path)], str(out), shard_bytes=30_000, resume=True)
    assert folder_digest(out) == folder_digest(reference)
    with pytest.raises(PolytokError, match="already holds a corpus"):
        corpus.tokenize("gpt2", [str(path)], str(out), shard_bytes=30_000)
