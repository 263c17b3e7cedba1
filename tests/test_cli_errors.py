"""Every error of the command line is one line on stderr and exit status 1: a table of readers x bad inputs.

The readers are the nine polytok loads (tokenizer.json, tokenizer.json.gz, GGUF,
SentencePiece .model, tiktoken, tekken.json, vocab.txt, vocab.json + merges.txt,
RWKV), each as a tiny valid file from tests/robustness/hostile.py, then broken one
way per row: missing, truncated, of the wrong type, corrupt (every case of the
hostile corpus), an unknown ``-o`` option, and ids ``decode`` cannot take. Each row
runs the real CLI, `polytok.cli.main` with stderr captured (an exception escaping
it fails the row with its traceback), and asserts status 1, exactly one line on
stderr naming the place (file, key, line, byte offset or id position) and no
traceback. `test_as_a_user_runs_it` runs the rows that used to end in a
traceback through ``python -m polytok`` too.

Expected places come from how this module and hostile.py lay out the bytes, not
from polytok's messages.
"""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import fixtures
import pytest
from robustness import hostile

from polytok.cli import main as cli

SRC = str(fixtures.REPO_ROOT / "src")

VOCAB_TXT = "[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\na\nb\n##b\ncafé\n".encode()
TK_ARGS = ["-o", "pattern=" + hostile.TK_OPTIONS["pattern"],
           "-o", "special_tokens=" + json.dumps(hostile.TK_OPTIONS["special_tokens"])]


@dataclass(frozen=True)
class Reader:
    name: str
    files: dict[str, bytes]
    entry: str
    args: tuple[str, ...] = ()
    cut: int | None = None  # a length that cuts the entry file inside a record (truncated row)
    cut_place: str = ""  # what the error must name for the cut file, beyond the file itself
    refuses_unknown_ids: bool = True  # the reference raises on an id past the vocabulary (HF drops it)


def _readers() -> list[Reader]:
    tj = json.dumps(hostile.hf_base()).encode()
    gz = gzip.compress(tj)
    ranks = b"\n".join(hostile.RANK_LINES) + b"\n"
    rwkv = b"\n".join(hostile.RWKV_GOOD) + b"\n"
    return [
        Reader("tokenizer.json", {"tokenizer.json": tj}, "tokenizer.json", cut=len(tj) // 2, cut_place="line 1",
               refuses_unknown_ids=False),
        Reader("tokenizer.json.gz", {"tokenizer.json.gz": gz}, "tokenizer.json.gz", cut=len(gz) // 2,
               cut_place="gzip", refuses_unknown_ids=False),
        Reader("gguf", {hostile.GG: hostile.VALID_GGUF}, hostile.GG, cut=hostile.FIRST_TOKEN_AT + 20,
               cut_place="key tokenizer.ggml.tokens"),
        Reader("sentencepiece", {hostile.SP: hostile.VALID_SPM}, hostile.SP, cut=len(hostile.GOOD_PIECES[0]) + 4,
               cut_place="key pieces"),
        Reader("tiktoken", {hostile.TK: ranks}, hostile.TK, tuple(TK_ARGS), cut=ranks.index(b"Yw==") + 2,
               cut_place="line 3"),
        Reader("tekken", hostile.tekken(), hostile.TE, cut=len(hostile.tekken()[hostile.TE]) // 2),
        Reader("vocab.txt", {hostile.VT: VOCAB_TXT}, hostile.VT, cut=len(VOCAB_TXT) - 2, cut_place="line 9",
               refuses_unknown_ids=False),  # cut inside the é of the last line
        Reader("vocab.json+merges", {hostile.VJ: hostile.GPT2_VOCAB, hostile.MT: b"#version: 0.2\na b\n"},
               hostile.VJ, cut=len(hostile.GPT2_VOCAB) // 2, cut_place="line 1", refuses_unknown_ids=False),
        Reader("rwkv", {hostile.RW: rwkv}, hostile.RW, cut=rwkv.index(b"3 b'") + 5, cut_place="line 3"),
    ]


READERS = _readers()
IDS = [r.name for r in READERS]


def run_cli(*argv: str) -> tuple[int, str, str]:
    """(status, stdout, stderr) of `polytok.cli.main` (argparse's usage errors exit 2 through SystemExit)."""
    import contextlib
    import io

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            status = cli.main(list(argv))
        except SystemExit as exc:
            status = int(exc.code or 0)
    return status, out.getvalue(), err.getvalue()


def assert_one_line_error(status: int, err: str, *places: str) -> str:
    assert status == 1, err
    assert "Traceback" not in err
    assert err.endswith("\n") and err.count("\n") == 1, f"not one line: {err!r}"
    assert err.startswith("polytok: error: "), err
    for place in places:
        assert place in err, f"{place!r} not named in {err!r}"
    return err


def _write(folder: Path, reader: Reader) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, data in reader.files.items():
        (folder / name).write_bytes(data)
    return folder / reader.entry


# --- the valid files load: the table's baseline ---------------------------------------------------

@pytest.mark.parametrize("reader", READERS, ids=IDS)
def test_the_valid_file_loads(reader: Reader, tmp_path: Path) -> None:
    path = _write(tmp_path, reader)
    status, out, err = run_cli("inspect", str(path), *reader.args)
    assert status == 0 and err == "", err


# --- missing, truncated, wrong type -----------------------------------------------------------

@pytest.mark.parametrize("reader", READERS, ids=IDS)
@pytest.mark.parametrize("command", ["encode", "count", "inspect", "decode"])
def test_missing_file(reader: Reader, command: str, tmp_path: Path) -> None:
    path = tmp_path / "absent" / reader.entry
    text = tmp_path / "t.txt"
    text.write_text("ab")
    tail = {"encode": ["ab"], "count": [str(text)], "inspect": [], "decode": ["1"]}[command]
    status, _, err = run_cli(command, str(path), *tail, *reader.args)
    assert_one_line_error(status, err, str(path))


@pytest.mark.parametrize("reader", READERS, ids=IDS)
def test_truncated_file(reader: Reader, tmp_path: Path) -> None:
    path = _write(tmp_path, reader)
    assert reader.cut is not None
    path.write_bytes(reader.files[reader.entry][:reader.cut])
    status, _, err = run_cli("encode", str(path), "ab", *reader.args)
    assert_one_line_error(status, err, str(path), reader.cut_place)


@pytest.mark.parametrize("reader", READERS, ids=IDS)
def test_empty_file(reader: Reader, tmp_path: Path) -> None:
    path = _write(tmp_path, reader)
    path.write_bytes(b"")
    status, _, err = run_cli("encode", str(path), "ab", *reader.args)
    assert_one_line_error(status, err, str(path))


PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x10\x00\x00\x00\x10\x08\x06\x00\x00\x00\x1f\xf3\xffa"


@pytest.mark.parametrize("reader", READERS, ids=IDS)
def test_a_file_of_another_type_under_its_name(reader: Reader, tmp_path: Path) -> None:
    """An image saved under the tokenizer's name: refused, naming the file."""
    path = _write(tmp_path, reader)
    path.write_bytes(PNG)
    status, _, err = run_cli("encode", str(path), "ab", *reader.args)
    assert_one_line_error(status, err, str(path))


@pytest.mark.parametrize("reader", READERS, ids=IDS)
def test_a_folder_where_the_file_should_be(reader: Reader, tmp_path: Path) -> None:
    path = tmp_path / reader.entry
    path.mkdir()
    status, _, err = run_cli("encode", str(path), "ab", *reader.args)
    assert_one_line_error(status, err, str(path))


def test_a_gzip_file_that_is_not_gzip_inside(tmp_path: Path) -> None:
    """The gzip magic, then garbage: a corrupt stream, named as such."""
    path = tmp_path / "tokenizer.json.gz"
    path.write_bytes(b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03" + b"\xff" * 40)
    status, _, err = run_cli("encode", str(path), "ab")
    assert_one_line_error(status, err, str(path), "gzip")


# --- corrupt: every case of the hostile corpus ----------------------------------------------------

@pytest.mark.parametrize("case", hostile.CASES, ids=[c.id for c in hostile.CASES])
def test_corrupt_file(case: hostile.Case, tmp_path: Path) -> None:
    """Each bad file the reader refuses (test_hostile_files decides which it must) is one line on the
    command line, naming the same place."""
    import polytok

    for name, data in case.files.items():
        (tmp_path / name).write_bytes(data)
    try:
        polytok.load(tmp_path / case.entry, **case.options)
    except polytok.PolytokError:
        pass
    else:
        pytest.skip("the reader loads this file now (test_hostile_files says whether it should)")
    args = [f"{k}={json.dumps(v) if not isinstance(v, str) else v}" for k, v in case.options.items()]
    status, _, err = run_cli("encode", str(tmp_path / case.entry), "ab", *[x for a in args for x in ("-o", a)])
    places = [str(tmp_path / (case.error_file or case.entry))]
    where = case.where
    if where.get("key"):
        places.append(f"key {where['key']}")
    if where.get("line") is not None:
        places.append(f"line {where['line']}")
    if where.get("offset") is not None:
        places.append(f"byte offset {where['offset']}")
    assert_one_line_error(status, err, *places)


# --- options ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("reader", READERS, ids=IDS)
@pytest.mark.parametrize("command", ["encode", "inspect"])
def test_unknown_option(reader: Reader, command: str, tmp_path: Path) -> None:
    path = _write(tmp_path, reader)
    tail = ["ab"] if command == "encode" else []
    status, _, err = run_cli(command, str(path), *tail, *reader.args, "-o", "no_such_option=1")
    assert_one_line_error(status, err, str(path), "no_such_option")


@pytest.mark.parametrize("option", ["pattern", "=1", "1x=2"])
def test_malformed_option(option: str) -> None:
    status, _, err = run_cli("encode", "gpt2", "ab", "-o", option)
    assert_one_line_error(status, err, repr(option), "KEY=VALUE")


def test_bad_option_value(tmp_path: Path) -> None:
    """A value of the wrong type for a declared option names the option."""
    reader = READERS[IDS.index("tiktoken")]
    path = _write(tmp_path, reader)
    status, _, err = run_cli("encode", str(path), "ab", "-o", "pattern=\\w+", "-o", 'special_tokens={"x": "1"}')
    assert_one_line_error(status, err, str(path), "special_tokens")


# --- decode's ids -------------------------------------------------------------------------------------

@pytest.mark.parametrize("reader", READERS, ids=IDS)
@pytest.mark.parametrize("ids, position", [(["1", "x"], 1), (["1.5"], 0), (["2", "3", "-1"], 2), (["True"], 0)])
def test_decode_refuses_ids_naming_the_position(reader: Reader, ids: list[str], position: int,
                                                tmp_path: Path) -> None:
    path = _write(tmp_path, reader)
    status, _, err = run_cli("decode", str(path), *ids, *reader.args)
    assert_one_line_error(status, err, f"position {position}", ids[position])


@pytest.mark.parametrize("reader", READERS, ids=IDS)
def test_decode_of_an_id_past_the_vocabulary(reader: Reader, tmp_path: Path) -> None:
    """sentencepiece, tiktoken, mistral-common, llama.cpp and rwkv raise for an unknown id, HF tokenizers
    drops it (tests/robustness/test_decode_hostile.py checks that against the engines)."""
    path = _write(tmp_path, reader)
    status, out, err = run_cli("decode", str(path), "1", "99999", *reader.args)
    if reader.refuses_unknown_ids:
        assert_one_line_error(status, err, "position 1", "99999")
    else:
        assert status == 0 and err == "", err


def test_decode_from_stdin_names_the_position(monkeypatch: pytest.MonkeyPatch) -> None:
    import io

    monkeypatch.setattr(sys, "stdin", io.StringIO("15496 995\n 0 abc\n"))
    status, _, err = run_cli("decode", "gpt2", "-")
    assert_one_line_error(status, err, "position 3", "'abc'")


# --- the other commands' inputs ---------------------------------------------------------------------------

def test_count_input_errors(tmp_path: Path) -> None:
    bad = tmp_path / "latin1.txt"
    bad.write_bytes(b"ok \xe9t\xe9")
    status, _, err = run_cli("count", "gpt2", str(bad))
    assert_one_line_error(status, err, str(bad), "byte offset 3")
    status, _, err = run_cli("count", "gpt2", str(tmp_path))  # a folder
    assert_one_line_error(status, err, str(tmp_path))
    status, _, err = run_cli("count", "gpt2", str(bad), "--workers", "0")
    assert_one_line_error(status, err, "--workers")


def test_chat_input_errors(tmp_path: Path) -> None:
    conversation = tmp_path / "c.json"
    conversation.write_text('[{"role": "user", "content": "hi"},\n oops]')
    status, _, err = run_cli("chat", "gpt2", str(conversation))
    assert_one_line_error(status, err, str(conversation), "line 2")
    conversation.write_text('{"messages": 5}')
    status, _, err = run_cli("chat", "gpt2", str(conversation))
    assert_one_line_error(status, err, str(conversation), "messages")


# --- as a user runs it ---------------------------------------------------------------------------

def _python_m(*args: str, pythonpath: str = "") -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (pythonpath, SRC) if p))
    return subprocess.run([sys.executable, "-m", "polytok", *args], capture_output=True, text=True, env=env,
                          timeout=120)


def test_as_a_user_runs_it(tmp_path: Path) -> None:
    """The errors that used to print a traceback, through ``python -m polytok``: a truncated .json.gz,
    an option the tiktoken reader does not take, and a float id."""
    gz = READERS[IDS.index("tokenizer.json.gz")]
    path = _write(tmp_path / "gz", gz)
    path.write_bytes(gz.files[gz.entry][:gz.cut])
    done = _python_m("encode", str(path), "ab")
    assert_one_line_error(done.returncode, done.stderr, str(path), "gzip")

    tk = READERS[IDS.index("tiktoken")]
    path = _write(tmp_path / "tk", tk)
    done = _python_m("encode", str(path), "ab", *tk.args, "-o", "lowercase=true")
    assert_one_line_error(done.returncode, done.stderr, str(path), "lowercase", "pattern, special_tokens")

    done = _python_m("decode", "gpt2", "15496", "2.0")
    assert_one_line_error(done.returncode, done.stderr, "position 1")


def test_parquet_without_pyarrow_says_which_extra(tmp_path: Path) -> None:
    """A Parquet input (or --format parquet) where pyarrow cannot be imported: one line naming the extra,
    and nothing left in --out."""
    blocker = tmp_path / "block"
    (blocker / "pyarrow").mkdir(parents=True)
    (blocker / "pyarrow" / "__init__.py").write_text("raise ModuleNotFoundError(\"No module named 'pyarrow'\")\n")
    data = tmp_path / "docs.parquet"
    data.write_bytes(b"PAR1" + b"\x00" * 16 + b"PAR1")
    text = tmp_path / "docs.txt"
    text.write_text("one\ntwo\n")
    for out, args in ((tmp_path / "o1", [str(data)]), (tmp_path / "o2", [str(text), "--format", "parquet"])):
        done = _python_m("tokenize-corpus", "gpt2", *args, "--out", str(out), pythonpath=str(blocker))
        assert_one_line_error(done.returncode, done.stderr, "pip install 'polytok[parquet]'")
        assert not out.exists()
