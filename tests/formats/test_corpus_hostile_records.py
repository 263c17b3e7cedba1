"""tokenize-corpus meets hostile records: each is a bad record with its file and line (or row), never
an error that stops the run.

Expected ids come from HF tokenizers (0.23.3) run live on the good documents; the bad records' lines
are where this test wrote them. The hostile lines: JSON nested 5 000 deep (Python's parser raises
RecursionError), in the text field and elsewhere; an integer of 5 000 digits (over Python's int
conversion limit); a line over `readers.MAX_LINE_BYTES` (lowered here so the test stays small), also
cut by a split boundary; a Parquet string that is not UTF-8.
"""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import fixtures
import pytest

from formats.corpus_helpers import read_bin_shards
from polytok import corpus
from polytok.corpus import readers

tokenizers = pytest.importorskip("tokenizers")

SRC = str(fixtures.REPO_ROOT / "src")
DEEP_TEXT = '{"text": ' + "[" * 5000 + "]" * 5000 + "}"
DEEP_OTHER = '{"text": "deep elsewhere", "meta": ' + '{"a": ' * 5000 + "1" + "}" * 5000 + "}"
BIG_INT = '{"text": "many digits", "n": 1' + "0" * 5000 + "}"
HOSTILE = {2: (DEEP_TEXT, "not JSON (nested deeper"), 4: (DEEP_OTHER, "not JSON (nested deeper"),
           5: (BIG_INT, "not JSON (Exceeds the limit")}


def _gpt2() -> Any:
    builtin = fixtures.REPO_ROOT / "src" / "polytok" / "data" / "gpt2.json.gz"
    return tokenizers.Tokenizer.from_str(gzip.decompress(builtin.read_bytes()).decode("utf-8"))


def _write(path: Path, lines: dict[int, str], n: int) -> list[str]:
    """`n` lines: the hostile ones at their numbers, JSON documents elsewhere; the documents in order."""
    docs = []
    with open(path, "w", encoding="utf-8") as f:
        for number in range(1, n + 1):
            if number in lines:
                f.write(lines[number] + "\n")
            else:
                docs.append(f"doc {number}: ünï 123")
                f.write(json.dumps({"text": docs[-1]}) + "\n")
    return docs


@pytest.mark.parametrize("workers", [1, 2])
def test_deep_and_huge_json_are_bad_records(tmp_path: Path, workers: int) -> None:
    path = tmp_path / "hostile.jsonl"
    docs = _write(path, {k: v for k, (v, _) in HOSTILE.items()}, 12)
    m = corpus.tokenize("gpt2", [str(path)], str(tmp_path / "o"), shard_bytes=4000, workers=workers)
    reference = _gpt2()
    assert read_bin_shards(tmp_path / "o") == [reference.encode(d).ids for d in docs]
    assert [e["line"] for e in m["errors"]] == sorted(HOSTILE)
    for error in m["errors"]:
        assert error["file"] == str(path) and error["reason"].startswith(HOSTILE[error["line"]][1]), error
    corpus.verify(str(tmp_path / "o"))


def test_cli_skips_deep_record_and_fail_names_its_line(tmp_path: Path) -> None:
    path = tmp_path / "hostile.jsonl"
    _write(path, {3: DEEP_TEXT}, 6)
    run = [sys.executable, "-m", "polytok", "tokenize-corpus", "gpt2", str(path), "--out"]
    env = {"PYTHONPATH": SRC, "PATH": ""}
    done = subprocess.run(run + [str(tmp_path / "skip")], capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().endswith(f"1 bad records skipped -> {tmp_path / 'skip'}")
    done = subprocess.run(run + [str(tmp_path / "fail"), "--on-error", "fail"], capture_output=True, text=True,
                          env=env)
    assert done.returncode == 1
    assert done.stderr.splitlines() == [
        f"polytok: error: {path}: line 3: not JSON (nested deeper than the parser goes)"]


@pytest.mark.parametrize("shard_bytes", [40, 1000])
def test_overlong_line_is_skipped_unread(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, shard_bytes: int) -> None:
    """A line over MAX_LINE_BYTES (here 64) is a bad record; splits that begin inside it skip its rest."""
    monkeypatch.setattr(readers, "MAX_LINE_BYTES", 64)
    path = tmp_path / "long.jsonl"
    long_line = json.dumps({"text": "x" * 300})
    docs = _write(path, {3: long_line, 4: "y" * 65}, 7)  # 65 bytes and its newline: one over
    for kind, out in (("jsonl", "j"), ("text", "t")):
        m = corpus.tokenize("gpt2", [str(path)], str(tmp_path / out), shard_bytes=shard_bytes, workers=1,
                            input_format=kind)
        assert [(e["line"], e["reason"]) for e in m["errors"]] == [
            (3, f"a line of {len(long_line) + 1} bytes, longer than the 64 read at most"),
            (4, "a line of 66 bytes, longer than the 64 read at most")]
        reference = _gpt2()
        if kind == "jsonl":
            want = [reference.encode(d).ids for d in docs]
        else:
            lines = path.read_text(encoding="utf-8").splitlines()
            want = [reference.encode(line).ids for i, line in enumerate(lines, 1) if i not in (3, 4)]
        assert read_bin_shards(tmp_path / out) == want
        assert m["input_lines"] == 7


def test_parquet_string_not_utf8_is_a_bad_row(tmp_path: Path) -> None:
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    raw = [b"first row", b"bad \xff byte", b"third row", b"\xc3"]
    binary = pa.array(raw, pa.binary())
    strings = pa.Array.from_buffers(pa.string(), len(raw), binary.buffers())  # Parquet does not check UTF-8
    src = tmp_path / "bad.parquet"
    pq.write_table(pa.table({"text": strings}), src)
    m = corpus.tokenize("gpt2", [str(src)], str(tmp_path / "o"), workers=1)
    reference = _gpt2()
    assert read_bin_shards(tmp_path / "o") == [reference.encode(t).ids for t in ("first row", "third row")]
    assert [(e["row"], e["reason"]) for e in m["errors"]] == [
        (1, "not UTF-8 at byte 4 of the value (invalid start byte)"),
        (3, "not UTF-8 at byte 0 of the value (unexpected end of data)")]
