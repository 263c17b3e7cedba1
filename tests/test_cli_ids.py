"""decode's ids in every shape encode prints them, encode --tokens' text column, and MODEL's default,
run as a user runs them (a subprocess), against HF tokenizers on the built-in gpt2 file."""

from __future__ import annotations

import codecs
import gzip
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from polytok.formats import BUILTIN

tokenizers = pytest.importorskip("tokenizers")
SRC = str(Path(__file__).resolve().parent.parent / "src")
TEXT = "Héllo wörld, 😀 again\tand\x1b!"


def run(*args: str, stdin: str | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=SRC + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run([sys.executable, "-m", "polytok", *args], input=stdin, capture_output=True,
                          text=True, env=env, timeout=120, cwd=cwd)


@pytest.fixture(scope="module")
def ref():
    return tokenizers.Tokenizer.from_str(gzip.decompress(BUILTIN["gpt2"].read_bytes()).decode())


def ok(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 0 and done.stderr == "", done.stderr
    return done.stdout


def one_line_error(done: subprocess.CompletedProcess[str], *named: str) -> None:
    assert done.returncode == 1, done.stdout
    assert done.stderr.startswith("polytok: error: ") and done.stderr.count("\n") == 1, done.stderr
    for item in named:
        assert item in done.stderr, done.stderr


def forms(ids: list[int]) -> list[list[str]]:
    """The same ids as arguments, in each shape decode takes."""
    return [[str(i) for i in ids], [",".join(map(str, ids))], [", ".join(map(str, ids))], [json.dumps(ids)],
            [json.dumps({"ids": ids, "tokens": []})], [str(ids[0]) + ",", *map(str, ids[1:])]]


@pytest.mark.parametrize("shape", range(6))
def test_decode_takes_each_shape_of_ids_from_args_and_stdin(ref, shape: int):
    ids = ref.encode(TEXT).ids
    expected = ref.decode(ids) + "\n"
    args = forms(ids)[shape]
    assert ok(run("decode", "gpt2", *args)) == expected
    assert ok(run("decode", *args)) == expected  # MODEL left out: the built-in gpt2
    assert ok(run("decode", "gpt2", "-", stdin=" ".join(args) + "\n")) == expected
    assert ok(run("decode", "-", stdin=" ".join(args))) == expected


def test_decode_reads_encode_json_through_a_pipe(ref):
    ids = ref.encode(TEXT).ids
    printed = ok(run("encode", "gpt2", TEXT, "--json"))
    assert json.loads(printed)["ids"] == ids
    assert ok(run("decode", "gpt2", "-", stdin=printed)) == ref.decode(ids) + "\n"
    assert ok(run("decode", printed)) == ref.decode(ids) + "\n"
    printed = ok(run("encode", TEXT))
    assert ok(run("decode", "-", stdin=printed)) == ref.decode(ids) + "\n"


@pytest.mark.parametrize("args, named", [
    (["gpt2", "15496", "x1"], ["position 1", "'x1'"]),
    (["1x", "995"], ["position 0", "'1x'"]),
    (["gpt2", "15496,,995,abc"], ["position 2", "'abc'"]),
    (["[15496, 995, -3]"], ["position 2", "'-3'"]),
    (["[15496, 2.5]"], ["position 1", "'2.5'"]),
    (["[15496, true]"], ["position 1", "'true'"]),
    (['[15496, "995"]'], ["position 1", "995"]),
    (["[15496, 995"], ["not JSON", "line 1 column"]),
    (['{"tokens": [1]}'], ['"ids"', "'tokens'"]),
    (['{"ids": 5}'], ['"ids"', "list"]),
    (["gpt2"], ["no ids after MODEL 'gpt2'"]),
    (["gpt2", "1", "-"], ["- (read the ids from stdin)"]),
])
def test_decode_refuses_bad_ids_naming_the_item(args: list[str], named: list[str]):
    one_line_error(run("decode", *args), *named)


def test_decode_model_named_like_ids_is_a_model_when_it_exists(ref, tmp_path: Path):
    (tmp_path / "2024.json").write_bytes(gzip.decompress(BUILTIN["gpt2"].read_bytes()))
    assert ok(run("decode", "2024.json", "15496", "995", cwd=tmp_path)) == ref.decode([15496, 995]) + "\n"


def test_decode_from_stdin_names_stdin_and_the_item():
    one_line_error(run("decode", "gpt2", "-", stdin="15496 995\n 0 abc\n"), "stdin", "position 3", "'abc'")
    one_line_error(run("decode", "-", stdin='{"ids": [1, "x"]}'), "stdin", "position 1", "'x'")


def gpt2_byte_decoder() -> dict[str, int]:
    """GPT-2's byte-to-character table, inverted (written out from its definition)."""
    kept = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1), *range(ord("®"), ord("ÿ") + 1)]
    chars, extra = {}, 0
    for b in range(256):
        if b in kept:
            chars[chr(b)] = b
        else:
            chars[chr(256 + extra)] = b
            extra += 1
    return chars


def test_encode_tokens_shows_id_piece_and_the_bytes_readably(ref):
    decoder = gpt2_byte_decoder()
    enc = ref.encode(TEXT)
    rows = [line.split("\t") for line in ok(run("encode", TEXT, "--tokens")).splitlines()]
    assert [int(r[0]) for r in rows] == enc.ids
    assert [r[1] for r in rows] == [repr(t) for t in enc.tokens]
    for (_, _, shown), token in zip(rows, enc.tokens):
        raw = bytes(decoder[c] for c in token)
        assert codecs.escape_decode(shown)[0] == raw, (shown, raw)  # type: ignore[attr-defined]
        assert shown.isprintable(), shown
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            assert "\\x" in shown
        else:
            if text.isprintable():
                assert shown == text.replace("\\", "\\\\")
    shown = [r[2] for r in rows]
    assert " H\\xc3" not in shown and any("é" in s for s in shown)
    assert "\\t" in shown and any("\\x1b" in s for s in shown)


def test_encode_tokens_marks_a_partial_character(ref):
    enc = ref.encode(" 😀")
    rows = [line.split("\t") for line in ok(run("encode", "gpt2", " 😀", "--tokens")).splitlines()]
    assert [int(r[0]) for r in rows] == enc.ids and len(rows) == 2
    assert rows[0][2] == " \\xf0\\x9f\\x98" and rows[1][2] == "\\x80"


def test_explain_takes_model_or_the_builtin():
    assert ok(run("explain", "Hi there")) == ok(run("explain", "gpt2", "Hi there"))
    one_line_error(run("explain", "gpt2", "Hi", "there"), "[MODEL] TEXT")
