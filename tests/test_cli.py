"""The command line, run as a user runs it (a subprocess), checked against the reference."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from polytok.formats import BUILTIN

tokenizers = pytest.importorskip("tokenizers")
SRC = str(Path(__file__).resolve().parent.parent / "src")


def run(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=SRC + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run([sys.executable, "-m", "polytok", *args], input=stdin, capture_output=True,
                          text=True, env=env, timeout=120)


def _reference():
    import gzip

    return tokenizers.Tokenizer.from_str(gzip.decompress(BUILTIN["gpt2"].read_bytes()).decode())


def test_encode_with_the_builtin_tokenizer():
    out = run("encode", "Hello world <|endoftext|>")
    assert out.returncode == 0, out.stderr
    assert [int(x) for x in out.stdout.split()] == _reference().encode("Hello world <|endoftext|>").ids


def test_encode_json_tokens_and_stdin(tmp_path):
    ref = _reference().encode("héllo  there")
    out = run("encode", "gpt2", "-", "--json", stdin="héllo  there")
    data = json.loads(out.stdout)
    assert data["ids"] == ref.ids and data["tokens"] == ref.tokens
    assert [tuple(o) for o in data["offsets"]] == [tuple(o) for o in ref.offsets]
    out = run("encode", "gpt2", "a <|endoftext|>", "--special", "text", "--tokens")
    ref_tok = _reference()
    ref_tok.encode_special_tokens = True
    assert [int(line.split("\t")[0]) for line in out.stdout.splitlines()] == ref_tok.encode("a <|endoftext|>").ids


def test_decode_and_count(tmp_path):
    ref = _reference()
    ids = ref.encode("Hello world, again!").ids
    out = run("decode", "gpt2", *map(str, ids))
    assert out.stdout == ref.decode(ids) + "\n"
    f = tmp_path / "t.txt"
    text = "line one\n\nline  two\r\n" * 50
    f.write_text(text, encoding="utf-8", newline="")
    out = run("count", "gpt2", str(f), str(f))
    rows = [line.split("\t") for line in out.stdout.splitlines()]
    n = len(ref.encode(text).ids)
    assert rows == [[str(n), str(f)], [str(n), str(f)], [str(2 * n), "total"]]


def test_inspect_names_the_pipeline_and_special_tokens():
    out = run("inspect", "gpt2", "--json")
    info = json.loads(out.stdout)
    assert info["model"] == "BPE" and info["pipeline"]["pre_tokenizer"] == "ByteLevel"
    assert info["added_tokens"][0]["content"] == "<|endoftext|>"
    assert info["added_tokens"][0]["parsed_in_text_mode"] is False
    assert run("inspect").returncode == 0


@pytest.mark.parametrize("args", [["encode", "/no/such/file.json", "x"], ["decode", "gpt2", "12", "x"],
                                  ["count", "gpt2", "/no/such/file.txt"]])
def test_errors_are_one_line_and_exit_nonzero(args):
    out = run(*args)
    assert out.returncode == 1
    assert out.stderr.startswith("polytok: error: ") and out.stderr.count("\n") == 1, out.stderr
    assert "Traceback" not in out.stderr


def test_bad_file_error_names_the_key(tmp_path):
    bad = tmp_path / "tokenizer.json"
    bad.write_text(json.dumps({"model": {"type": "BPE", "vocab": {"a": 0}, "merges": []},
                               "pre_tokenizer": {"type": "Sequence", "pretokenizers": [{"type": "Nope"}]}}))
    out = run("encode", str(bad), "a")
    assert out.returncode == 1 and "pre_tokenizer.pretokenizers[0].type" in out.stderr and str(bad) in out.stderr


def test_inspect_gguf_shows_llama_cpps_special_table():
    import gzip as _gzip

    from fixtures import gguf_vocab_path

    path = gguf_vocab_path("qwen2")
    with _gzip.open(Path(__file__).parent / "golden" / "gguf" / "qwen2.jsonl.gz", "rt") as lines:
        header = json.loads(lines.readline())
    out = run("inspect", str(path), "--json")
    assert out.returncode == 0, out.stderr
    info = json.loads(out.stdout)
    assert info["vocab_type"] == "bpe" and info["pre_type"] == "qwen2"
    assert info["eog"] == header["eog"]
    kinds = {str(t["id"]): t["kind"] for t in info["special_tokens"]}
    expected = {k: v for k, v in header["attrs"].items() if v & (1 | 8 | 16)}
    assert set(kinds) == set(expected)
    assert kinds["128247"] == ["normal", "control"]  # Qwen2's ordinary </s>, promoted as llama.cpp does
    assert run("inspect", str(path)).returncode == 0


def test_format_options_reach_the_reader(tmp_path):
    """-o KEY=VALUE passes reader options: a rank file polytok does not know needs its pattern."""
    tiktoken = pytest.importorskip("tiktoken")
    import base64

    ranks = {bytes([b]): b for b in range(256)}
    for pair in (b"he", b"ll", b"hell", b"hello", b" w", b" wo"):
        ranks[pair] = len(ranks)
    path = tmp_path / "tiny.tiktoken"
    path.write_text("".join(f"{base64.b64encode(t).decode()} {r}\n" for t, r in ranks.items()))
    pattern = r"'s|'t| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+"
    specials = {"<|end|>": len(ranks)}
    enc = tiktoken.Encoding("tiny", pat_str=pattern, mergeable_ranks=ranks, special_tokens=specials)
    text = "hello world<|end|>"

    missing = run("encode", str(path), text)
    assert missing.returncode == 1 and "pattern=" in missing.stderr

    args = ("-o", f"pattern={pattern}", "-o", "special_tokens=" + json.dumps(specials))
    out = run("encode", str(path), text, *args)
    assert out.returncode == 0, out.stderr
    assert [int(x) for x in out.stdout.split()] == enc.encode_ordinary(text)
    out = run("encode", str(path), text, "--special", "parse", *args)
    assert [int(x) for x in out.stdout.split()] == enc.encode(text, allowed_special="all")

    bad = run("encode", str(path), text, "-o", "pattern")
    assert bad.returncode == 1 and "KEY=VALUE" in bad.stderr
    unknown = run("encode", "gpt2", text, "-o", "lowercase=true")
    assert unknown.returncode == 1 and "lowercase" in unknown.stderr


def test_count_over_files_in_worker_processes(tmp_path):
    """count --workers 2 shares the files out; each count is the reference's, printed in input order."""
    ref = _reference()
    texts = ["short one", "a longer text\n" * 500, "héllo wörld " * 200, ""]
    files = []
    for n, text in enumerate(texts):
        files.append(tmp_path / f"f{n}.txt")
        files[-1].write_text(text, encoding="utf-8")
    out = run("count", "gpt2", *map(str, files), "--workers", "2")
    assert out.returncode == 0, out.stderr
    counts = [len(ref.encode(t).ids) for t in texts]
    assert out.stdout.splitlines() == [f"{c}\t{f}" for c, f in zip(counts, files)] + [f"{sum(counts)}\ttotal"]

    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"fine\xff")
    serial = run("count", "gpt2", str(files[0]), str(bad), "--workers", "1")
    pooled = run("count", "gpt2", str(files[0]), str(bad), "--workers", "2")
    assert serial.returncode == pooled.returncode == 1
    assert serial.stderr == pooled.stderr and "byte offset 4" in pooled.stderr


def test_count_of_a_long_file_with_any_number_of_workers(tmp_path, monkeypatch):
    """A long file counts as the reference counts it, whatever --workers says; 0 is refused."""
    ref = _reference()
    text = "".join(f"Line {i}: the quick brown fox, 12345678 times.\n\n  " for i in range(6000))
    f = tmp_path / "long.txt"
    f.write_text(text, encoding="utf-8")
    assert len(text) >= 200_000
    for workers in ("1", "2", "3"):
        out = run("count", "gpt2", str(f), "--workers", workers)
        assert out.returncode == 0, out.stderr
        assert out.stdout == f"{len(ref.encode(text).ids)}\t{f}\n"
    assert run("count", "gpt2", str(f), "--workers", "0").returncode == 1


# --- count: whole documents unless --truncation -----------------------------------------------------

NOTE = "polytok: note: counting whole documents, leaving out the tokenizer's {} (apply with --truncation)\n"


def _builtin_with(tmp_path, truncation=None, padding=None):
    """The built-in GPT-2 tokenizer.json with a truncation and/or padding section (synthetic files)."""
    import gzip

    data = json.loads(gzip.decompress(BUILTIN["gpt2"].read_bytes()))
    data["truncation"], data["padding"] = truncation, padding
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def _long_text(lines=4200):
    """About 50 characters a line: 4200 lines pass long_text.MIN_CHARS, so count shares the text out."""
    return "".join(f"Line {i}: the quick brown fox, 12345678 times.\n\n  " for i in range(lines))


def _hf_count(path, text, whole):
    ref = tokenizers.Tokenizer.from_file(str(path))
    if whole:
        ref.no_truncation()
        ref.no_padding()
    return len(ref.encode(text).ids)


def _main(capsys, *args):
    from polytok.cli import main as cli

    status = cli.main(list(args))
    out, err = capsys.readouterr()
    assert status == 0, err
    return out, err


TRUNCATE_50 = {"direction": "Right", "max_length": 50, "strategy": "LongestFirst", "stride": 0}
TRUNCATE_LEFT = {"direction": "Left", "max_length": 700, "strategy": "OnlyFirst", "stride": 3}
PAD_FIXED = {"strategy": {"Fixed": 300}, "direction": "Left", "pad_to_multiple_of": None, "pad_id": 0,
             "pad_type_id": 0, "pad_token": "!"}


def _check_counts(capsys, path, texts, workers, left_out, tmp_path):
    files = []
    for n, text in enumerate(texts):
        files.append(tmp_path / f"t{n}.txt")
        files[-1].write_text(text, encoding="utf-8", newline="")
    for whole in (True, False):
        out, err = _main(capsys, "count", str(path), *map(str, files), "--workers", workers,
                         *([] if whole else ["--truncation"]))
        counts = [_hf_count(path, text, whole) for text in texts]
        assert out.splitlines() == [f"{c}\t{f}" for c, f in zip(counts, files)] + [f"{sum(counts)}\ttotal"]
        assert err == (NOTE.format(left_out) if whole else "")


@pytest.mark.parametrize("truncation, padding, left_out", [
    (TRUNCATE_50, None, "truncation to 50 tokens"),
    (TRUNCATE_LEFT, PAD_FIXED, "truncation to 700 tokens and padding to 300 tokens"),
    (None, PAD_FIXED, "padding to 300 tokens"),
])
def test_count_leaves_out_the_files_truncation_and_padding(tmp_path, capsys, truncation, padding, left_out):
    """count is of whole documents: HF's count after no_truncation() and no_padding(), said once on stderr;
    --truncation gives HF's count with the file's settings (texts longer and shorter than both)."""
    path = _builtin_with(tmp_path, truncation, padding)
    _check_counts(capsys, path, [_long_text(400), "short text", ""], "1", left_out, tmp_path)


def test_count_in_shares_leaves_them_out_too(tmp_path, capsys):
    """The same with the long text shared out over two workers (long_text.count_long)."""
    path = _builtin_with(tmp_path, TRUNCATE_LEFT, PAD_FIXED)
    _check_counts(capsys, path, [_long_text(), "short text"], "2",
                  "truncation to 700 tokens and padding to 300 tokens", tmp_path)


def test_count_without_truncation_in_the_file_says_nothing(tmp_path, capsys):
    f = tmp_path / "t.txt"
    f.write_text("hello " * 100, encoding="utf-8")
    for extra in ([], ["--truncation"]):
        out, err = _main(capsys, "count", "gpt2", str(f), *extra)
        assert out == f"{len(_reference().encode('hello ' * 100).ids)}\t{f}\n" and err == ""


@pytest.mark.parametrize("name, workers", [("gpt2", "2"), ("albert-base-v2-tf5", "2"), ("albert-base-v2-tf5", "1")])
def test_count_with_a_real_files_truncation(tmp_path, name, workers):
    """The real files: GPT-2's tokenizer.json cuts at 50, ALBERT's at 512 (a Unigram pipeline, whose
    files are counted whole by worker processes); as a user runs it."""
    from fixtures import fixture_path

    path = fixture_path(name, "tokenizer.json")
    texts = [_long_text() if name == "gpt2" else _long_text(600), _long_text(100)]
    files = []
    for n, text in enumerate(texts):
        files.append(tmp_path / f"t{n}.txt")
        files[-1].write_text(text, encoding="utf-8", newline="")
    for whole in (True, False):
        out = run("count", str(path), *map(str, files), "--workers", workers, *([] if whole else ["--truncation"]))
        assert out.returncode == 0, out.stderr
        counts = [_hf_count(path, text, whole) for text in texts]
        assert out.stdout.splitlines() == [f"{c}\t{f}" for c, f in zip(counts, files)] + [f"{sum(counts)}\ttotal"]
        expected = tokenizers.Tokenizer.from_file(str(path)).truncation["max_length"]
        assert out.stderr == (NOTE.format(f"truncation to {expected} tokens") if whole else "")


def test_inspect_shows_truncation_padding_and_the_formats_defaults(tmp_path, capsys):
    """inspect shows the file's truncation and padding, and the special default of the format
    (text for a rank file, parse for tokenizer.json), in text and --json."""
    import base64

    path = _builtin_with(tmp_path, TRUNCATE_LEFT, PAD_FIXED)
    info = json.loads(_main(capsys, "inspect", str(path), "--json")[0])
    assert info["truncation"] == {"max_length": 700, "stride": 3, "strategy": "only_first", "direction": "left"}
    assert info["padding"] == {"length": 300, "direction": "left", "pad_to_multiple_of": None, "pad_id": 0,
                               "pad_type_id": 0, "pad_token": "!"}
    text = _main(capsys, "inspect", str(path))[0]
    assert "truncation:     max_length=700 stride=3 strategy=only_first direction=left" in text
    assert "padding:        length=300 direction=left" in text and "special=parse" in text
    assert json.loads(_main(capsys, "inspect", "gpt2", "--json")[0])["truncation"] is None

    ranks = tmp_path / "tiny.tiktoken"
    ranks.write_text("".join(f"{base64.b64encode(bytes([b])).decode()} {b}\n" for b in range(256)))
    args = ("-o", "pattern=\\w+|\\s+|.", "-o", 'special_tokens={"<|end|>": 300}')
    info = json.loads(_main(capsys, "inspect", str(ranks), "--json", *args)[0])
    assert info["defaults"]["special"] == "text"  # tiktoken's encode_ordinary
    assert (info["vocab_size"], info["n_vocab"]) == (257, 301)
    assert "special=text" in _main(capsys, "inspect", str(ranks), *args)[0]
