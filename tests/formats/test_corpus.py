"""polytok.corpus (tokenize-corpus, verify-corpus) with the local engine.

Expected ids come from HF tokenizers run live on the same documents (the
test's own JSONL parsing, independent of polytok's reader); the bad records'
lines come from where corpus_helpers wrote them. Tests about plumbing only
(workers, shard sizes, resume, verify) compare polytok's output with itself
and say so.
"""

from __future__ import annotations

import gzip
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import fixtures
import pytest

import polytok
from formats.corpus_helpers import BAD_LINES, SURROGATE_LINE, folder_digest, manifest, read_bin_shards, write_jsonl
from polytok import corpus
from polytok.errors import FormatError, PolytokError

tokenizers = pytest.importorskip("tokenizers")

N_DOCS = 3000
SRC = str(fixtures.REPO_ROOT / "src")


@pytest.fixture(scope="module")
def jsonl(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[tuple[int, str | None]]]:
    path = tmp_path_factory.mktemp("corpus") / "docs.jsonl"
    return path, write_jsonl(path, N_DOCS)


def _reference(name: str) -> tuple[Any, str]:
    """(HF tokenizers.Tokenizer, the model argument polytok loads) for a test tokenizer."""
    if name == "gpt2":
        builtin = fixtures.REPO_ROOT / "src" / "polytok" / "data" / "gpt2.json.gz"
        return tokenizers.Tokenizer.from_str(gzip.decompress(builtin.read_bytes()).decode("utf-8")), "gpt2"
    path = fixtures.fixture_path(name, "tokenizer.json")
    return tokenizers.Tokenizer.from_file(str(path)), str(path)


def _expected(reference: Any, rows: list[tuple[int, str | None]]) -> tuple[list[list[int]], list[int]]:
    """Each document's reference ids, and the lines of bad records (incl. texts the reference refuses)."""
    ids, bad = [], []
    for line, doc in rows:
        if doc is None:
            bad.append(line)
            continue
        try:
            ids.append(reference.encode(doc).ids)
        except Exception:
            bad.append(line)
    return ids, bad


@pytest.mark.parametrize("name", ["gpt2", "llama3"])
def test_ids_and_counts_equal_reference(name: str, jsonl: Any, tmp_path: Path) -> None:
    path, rows = jsonl
    reference, model = _reference(name)
    expected_ids, bad_lines = _expected(reference, rows)
    out = tmp_path / "out"
    m = corpus.tokenize(model, [str(path)], str(out), shard_bytes=100_000, workers=2)
    assert read_bin_shards(out) == expected_ids
    assert m["documents"] == len(expected_ids) == N_DOCS  # the surrogate line is a record of its own
    assert m["tokens"] == sum(map(len, expected_ids))
    assert [e["line"] for e in m["errors"]] == bad_lines
    assert m["settings"]["dtype"] == ("uint16" if name == "gpt2" else "uint32")
    for error in m["errors"]:
        if error["line"] in BAD_LINES:
            assert error["reason"].startswith(BAD_LINES[error["line"]][1]), error
        else:
            assert error["line"] == SURROGATE_LINE and "surrogate" in error["reason"]
    assert corpus.verify(str(out)) == m


def test_append_eos_and_text_special(jsonl: Any, tmp_path: Path) -> None:
    """--append-eos adds the separator after every document; special=text reads markers as text."""
    path, rows = jsonl
    reference, model = _reference("llama3")
    eos = reference.token_to_id("<|end_of_text|>")
    m = corpus.tokenize(model, [str(path)], str(tmp_path / "o"), shard_bytes=200_000, workers=1,
                        append_eos="<|end_of_text|>", special="text", add_special=False)
    docs = [d for _, d in rows if d is not None]
    got = read_bin_shards(tmp_path / "o")
    reference.encode_special_tokens = True  # HF's way of reading special markers as text
    want = [reference.encode(d, add_special_tokens=False).ids + [eos] for d in docs]
    assert got == want
    assert m["tokens"] == sum(map(len, want)) and m["settings"]["append_eos"] == eos


@pytest.mark.parametrize("shard_bytes", [97, 4096, 10**9])
def test_shard_boundaries_lose_and_double_nothing(jsonl: Any, tmp_path: Path, shard_bytes: int) -> None:
    """Plumbing: every shard size gives the same documents (lines starting exactly on a split boundary
    included), each once; workers 1 and 2 write the same bytes."""
    path, rows = jsonl
    small = tmp_path / "small.jsonl"
    small.write_bytes(b"".join(path.read_bytes().splitlines(keepends=True)[:60]))
    whole = corpus.tokenize("gpt2", [str(small)], str(tmp_path / "whole"), shard_bytes=10**9)
    one = corpus.tokenize("gpt2", [str(small)], str(tmp_path / "one"), shard_bytes=shard_bytes, workers=1)
    corpus.tokenize("gpt2", [str(small)], str(tmp_path / "two"), shard_bytes=shard_bytes, workers=2)
    assert read_bin_shards(tmp_path / "one") == read_bin_shards(tmp_path / "whole")
    assert one["errors"] == [dict(e, shard=one["errors"][i]["shard"]) for i, e in enumerate(whole["errors"])]
    assert (one["documents"], one["tokens"], one["input_lines"]) == (whole["documents"], whole["tokens"], 60)
    assert folder_digest(tmp_path / "one") == folder_digest(tmp_path / "two")


@pytest.mark.parametrize("shard_bytes", [1, 3, 8, 9, 16, 1000])
def test_lines_on_split_boundaries(tmp_path: Path, shard_bytes: int) -> None:
    """Plumbing: lines of exactly 8 bytes, so with shard_bytes 1 and 8 every line starts exactly on a
    split boundary; each line is one document, once, in order, whatever the shard size."""
    path = tmp_path / "t.txt"
    path.write_bytes(b"".join(b"line %02d\n" % i for i in range(12)))
    m = corpus.tokenize("gpt2", [str(path)], str(tmp_path / "o"), shard_bytes=shard_bytes, workers=2)
    tok = polytok.load("gpt2")
    assert read_bin_shards(tmp_path / "o") == [tok.encode(f"line {i:02d}") for i in range(12)]
    assert (m["documents"], m["input_lines"], len(m["shards"])) == (12, 12, -(-96 // shard_bytes))


def test_text_input_one_document_per_line(tmp_path: Path) -> None:
    """Text files: a document per line without its \\n or \\r\\n, empty lines too; bad UTF-8 named by line."""
    reference, model = _reference("gpt2")
    lines = [b"first line", b"crlf line\r", b"", b"bad \xff byte", b"  spaced  ", b"no newline at end"]
    path = tmp_path / "t.txt"
    path.write_bytes(b"\n".join(lines))
    m = corpus.tokenize(model, [str(path)], str(tmp_path / "o"), shard_bytes=7, workers=2)
    texts = ["first line", "crlf line", "", "  spaced  ", "no newline at end"]
    assert read_bin_shards(tmp_path / "o") == [reference.encode(t).ids for t in texts]
    assert [(e["line"], e["reason"]) for e in m["errors"]] == [(4, "not UTF-8 at byte offset 27 (invalid start byte)")]


def test_on_error_fail_exits_with_file_and_line(jsonl: Any, tmp_path: Path) -> None:
    path, _ = jsonl
    done = subprocess.run([sys.executable, "-m", "polytok", "tokenize-corpus", "gpt2", str(path), "--out",
                           str(tmp_path / "o"), "--on-error", "fail", "--shard-mb", "0.05"],
                          capture_output=True, text=True, env={"PYTHONPATH": SRC, "PATH": ""})
    assert done.returncode == 1
    assert done.stderr.strip().splitlines() == [
        f"polytok: error: {path}: line 7: not JSON (Expecting property name enclosed in double quotes)"]


def test_parquet_in_and_out(jsonl: Any, tmp_path: Path) -> None:
    """Parquet input (null rows are bad records, by row) and Parquet output hold the same ids as .bin."""
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    _, rows = jsonl
    reference, model = _reference("gpt2")
    texts = [d for _, d in rows[:800]]
    src = tmp_path / "docs.parquet"
    pq.write_table(pa.table({"n": list(range(len(texts))), "body": pa.array(texts, pa.string())}), src,
                   row_group_size=128)
    m = corpus.tokenize(model, [str(src)], str(tmp_path / "bin"), column="body", shard_bytes=20_000, workers=2)
    want = [reference.encode(t).ids for t in texts if t is not None]
    assert read_bin_shards(tmp_path / "bin") == want
    assert [e["row"] for e in m["errors"]] == [i for i, t in enumerate(texts) if t is None]
    corpus.tokenize(model, [str(src)], str(tmp_path / "pq"), column="body", shard_bytes=20_000, out_format="parquet")
    got = []
    for shard in manifest(tmp_path / "pq")["shards"]:
        got.extend(pq.read_table(tmp_path / "pq" / shard["files"]["parquet"]["name"]).column("ids").to_pylist())
    assert got == want
    corpus.verify(str(tmp_path / "pq"))


def test_parquet_bad_columns(tmp_path: Path) -> None:
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    src = tmp_path / "n.parquet"
    pq.write_table(pa.table({"text": [1, 2], "other": ["a", "b"]}), src)
    with pytest.raises(FormatError, match=r"n\.parquet: key text: column 'text' holds int64, not strings"):
        corpus.tokenize("gpt2", [str(src)], str(tmp_path / "o"))
    with pytest.raises(FormatError, match=r"key body: no column 'body' \(columns: text, other\)"):
        corpus.tokenize("gpt2", [str(src)], str(tmp_path / "o"), column="body")
    broken = tmp_path / "broken.parquet"
    broken.write_bytes(src.read_bytes()[:-20])
    with pytest.raises(FormatError, match=r"broken\.parquet: not a Parquet file"):
        corpus.tokenize("gpt2", [str(broken)], str(tmp_path / "o"))
    with pytest.raises(FormatError, match=r"missing\.jsonl: No such file"):
        corpus.tokenize("gpt2", [str(tmp_path / "missing.jsonl")], str(tmp_path / "o"))


def test_resume_keeps_whole_prefix_and_redoes_the_rest(jsonl: Any, tmp_path: Path) -> None:
    """Plumbing: an interrupted folder (manifest cut to 2 shards, a damaged 3rd shard listed nowhere,
    a stray temp file) resumes to the bytes of an uninterrupted run; a damaged listed shard is redone."""
    path, _ = jsonl
    full, part = tmp_path / "full", tmp_path / "part"
    corpus.tokenize("gpt2", [str(path)], str(full), shard_bytes=150_000, workers=2)
    shutil.copytree(full, part)
    m = manifest(part)
    m["shards"], m["complete"] = m["shards"][:2], False
    (part / "manifest.json").write_text(json.dumps(m), encoding="utf-8")
    (part / "shard-000002.bin").write_bytes(b"partial")
    (part / "shard-000003.bin.tmp").write_bytes(b"partial")
    (part / "shard-000001.idx").write_bytes(b"damaged")  # listed but not whole: redone from shard 1
    corpus.tokenize("gpt2", [str(path)], str(part), shard_bytes=150_000, workers=2, resume=True)
    assert folder_digest(part) == folder_digest(full)


def test_resume_refuses_other_settings_and_fresh_run_refuses_used_folder(jsonl: Any, tmp_path: Path) -> None:
    path, _ = jsonl
    small = tmp_path / "s.jsonl"
    small.write_bytes(b"".join(path.read_bytes().splitlines(keepends=True)[:20]))
    corpus.tokenize("gpt2", [str(small)], str(tmp_path / "o"), shard_bytes=500)
    with pytest.raises(FormatError, match="already holds a corpus"):
        corpus.tokenize("gpt2", [str(small)], str(tmp_path / "o"), shard_bytes=500)
    with pytest.raises(FormatError, match=r"key settings\.shard_bytes: --resume with a different settings\.shard_bytes"
                                          r" \(501\) than the run that wrote it \(500\)"):
        corpus.tokenize("gpt2", [str(small)], str(tmp_path / "o"), shard_bytes=501, resume=True)
    small.write_bytes(small.read_bytes() + b'{"text": "one more"}\n')
    with pytest.raises(FormatError, match="key inputs: --resume with a different inputs"):
        corpus.tokenize("gpt2", [str(small)], str(tmp_path / "o"), shard_bytes=500, resume=True)


@pytest.mark.parametrize("damage", ["sha", "extra", "missing", "count", "incomplete", "temp"])
def test_verify_finds_damage(jsonl: Any, tmp_path: Path, damage: str) -> None:
    path, _ = jsonl
    small = tmp_path / "s.jsonl"
    small.write_bytes(b"".join(path.read_bytes().splitlines(keepends=True)[:30]))
    out = tmp_path / "o"
    corpus.tokenize("gpt2", [str(small)], str(out), shard_bytes=1000)
    m = manifest(out)
    if damage == "sha":
        data = bytearray((out / "shard-000001.bin").read_bytes())
        data[0] ^= 1
        (out / "shard-000001.bin").write_bytes(bytes(data))
    elif damage == "extra":
        shutil.copy(out / "shard-000001.bin", out / "shard-000099.bin")
    elif damage == "missing":
        (out / "shard-000001.idx").unlink()
    elif damage == "temp":
        (out / "manifest.json.tmp").write_text("{}")
    else:
        m["tokens" if damage == "count" else "complete"] = m["tokens"] + 1 if damage == "count" else False
        (out / "manifest.json").write_text(json.dumps(m), encoding="utf-8")
    if damage != "sha":
        with pytest.raises(FormatError) as caught:
            corpus.verify(str(out))
        assert str(caught.value).startswith(str(out)) and caught.value.file
        return
    done = subprocess.run([sys.executable, "-m", "polytok", "verify-corpus", str(out)], capture_output=True,
                          text=True, env={"PYTHONPATH": SRC, "PATH": ""})
    assert done.returncode == 1, done.stderr
    assert done.stderr == f"polytok: error: {out}/shard-000001.bin: key shards[1].files: sha256 differs from " \
                          "the manifest's\n"


def test_cli_round_trip_and_bad_options(jsonl: Any, tmp_path: Path) -> None:
    path, _ = jsonl
    small = tmp_path / "s.jsonl"
    small.write_bytes(b"".join(path.read_bytes().splitlines(keepends=True)[:50]))
    run = [sys.executable, "-m", "polytok", "tokenize-corpus", "gpt2", str(small), "--out", str(tmp_path / "o"),
           "--shard-mb", "0.004", "--append-eos", "<|endoftext|>"]
    done = subprocess.run(run, capture_output=True, text=True, env={"PYTHONPATH": SRC, "PATH": ""})
    assert done.returncode == 0, done.stderr
    api = corpus.tokenize("gpt2", [str(small)], str(tmp_path / "api"), shard_bytes=4000, append_eos=50256)
    assert folder_digest(tmp_path / "o") == folder_digest(tmp_path / "api")
    assert done.stdout.strip() == f"{api['documents']} documents, {api['tokens']} tokens, {len(api['shards'])} " \
                                  f"shards, {api['bad_records']} bad records skipped -> {tmp_path / 'o'}"
    with pytest.raises(PolytokError, match="names no eos token"):
        corpus.tokenize("gpt2", [str(small)], str(tmp_path / "x"), append_eos="eos")
    with pytest.raises(PolytokError, match="unknown engine"):
        corpus.tokenize("gpt2", [str(small)], str(tmp_path / "y"), engine="spark")
    assert polytok.load("gpt2").token_to_id("<|endoftext|>") == 50256


def test_progress_line_on_a_terminal(jsonl: Any, tmp_path: Path) -> None:
    """The CLI's progress line (documents, tokens, MB/s) is drawn only when stderr is a terminal."""
    import io

    from polytok.cli.corpus import _Progress

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    path, _ = jsonl
    screen, pipe = Terminal(), io.StringIO()
    for stream in (screen, pipe):
        progress = _Progress(stream)
        m = corpus.tokenize("gpt2", [str(path)], str(tmp_path / str(id(stream))), shard_bytes=100_000,
                            progress=progress.update if progress.enabled else None)
        progress.close()
    last = screen.getvalue().strip().split("\r")[-1]
    assert last.startswith(f"{m['documents']:,} documents  {m['tokens']:,} tokens  ") and last.endswith("MB/s")
    assert pipe.getvalue() == ""


def test_shards_arriving_out_of_order(jsonl: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Plumbing: an engine that hands shards back in any order (Ray does) gives the same bytes, and the
    manifest lists them in input order."""
    from polytok.corpus import local

    path, _ = jsonl
    corpus.tokenize("gpt2", [str(path)], str(tmp_path / "ordered"), shard_bytes=50_000, workers=1)
    run_local = local.run_local
    monkeypatch.setattr(local, "run_local", lambda *args: reversed(list(run_local(*args))))
    m = corpus.tokenize("gpt2", [str(path)], str(tmp_path / "reversed"), shard_bytes=50_000, workers=1)
    assert folder_digest(tmp_path / "reversed") == folder_digest(tmp_path / "ordered")
    assert [s["name"] for s in m["shards"]] == sorted(s["name"] for s in m["shards"])


def test_append_eos_default_is_the_tokenizers_eos(jsonl: Any, tmp_path: Path) -> None:
    """append_eos="eos" (the CLI's bare --append-eos) takes the eos the model folder names (Llama 3: 128001)."""
    path, _ = jsonl
    small = tmp_path / "s.jsonl"
    small.write_bytes(b"".join(path.read_bytes().splitlines(keepends=True)[:20]))
    fixtures.fixture_path("llama3", "tokenizer_config.json")
    folder = fixtures.fixture_path("llama3", "tokenizer.json").parent
    reference = tokenizers.Tokenizer.from_file(str(folder / "tokenizer.json"))
    m = corpus.tokenize(str(folder), [str(small)], str(tmp_path / "o"), append_eos="eos")
    docs = [json.loads(line)["text"] for line in small.read_text(encoding="utf-8").splitlines()
            if line.startswith('{"id"')]
    assert m["settings"]["append_eos"] == reference.token_to_id("<|end_of_text|>") == 128001
    assert read_bin_shards(tmp_path / "o") == [reference.encode(d).ids + [128001] for d in docs]
    assert set(m["tokenizer"]["files"]) >= {"tokenizer.json", "tokenizer_config.json"}


@pytest.mark.parametrize("kind", ["jsonl", "parquet"])
def test_the_workers_fork_after_the_head_of_the_first_split(jsonl: Any, tmp_path: Path, kind: str,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """Plumbing: a first split larger than twice WARM_BYTES has only its head encoded before the
    workers fork (then the whole split in its turn); a smaller one is encoded once. The bytes are
    those of one process either way."""
    from polytok.corpus import local

    path, rows = jsonl
    if kind == "parquet":
        pa = pytest.importorskip("pyarrow")
        pq = pytest.importorskip("pyarrow.parquet")
        path = tmp_path / "docs.parquet"
        pq.write_table(pa.table({"text": pa.array([d for _, d in rows], pa.string())}), path)
    one = corpus.tokenize("gpt2", [str(path)], str(tmp_path / "one"), shard_bytes=100_000, workers=1)
    encode_split = local.encode_split
    for warm, head in ((2_000, True), (60_000, False)):
        log = tmp_path / f"calls{warm}"

        def logged(tok: Any, split: Any, settings: Any, log: Path = log) -> Any:
            with open(log, "a") as f:  # from whichever process encodes it
                f.write(f"{split.index} {split.start} {split.end}\n")
            return encode_split(tok, split, settings)

        monkeypatch.setattr(local, "WARM_BYTES", warm)
        monkeypatch.setattr(local, "encode_split", logged)
        two = corpus.tokenize("gpt2", [str(path)], str(tmp_path / f"two{warm}"), shard_bytes=100_000, workers=2)
        assert folder_digest(tmp_path / f"two{warm}") == folder_digest(tmp_path / "one") and two == one
        calls = [tuple(map(int, line.split())) for line in log.read_text().splitlines()]
        firsts = [c for c in calls if c[0] == 0]
        assert calls[0] == firsts[0] and firsts[0][1] == 0
        if head:
            assert len(firsts) == 2 and firsts[0][2] < firsts[1][2]  # the head, then the whole split
            rows0 = firsts[1][2] - firsts[1][1]
            assert firsts[0][2] == (warm if kind == "jsonl" else rows0 * warm // 100_000)
        else:
            assert len(firsts) == 1
