"""Which rank files polytok reads: exactly those tiktoken 0.14.0 reads, run live.

The reference is ``tiktoken.load.load_tiktoken_bpe`` then ``tiktoken.Encoding`` on the same
file (its loader splits lines with ``bytes.splitlines``, skips empty ones, splits each at
white space into two fields, decodes base64 leniently and the rank with ``int``, keeps the
last rank of a token given twice; ``Encoding`` / ``CoreBPE`` then want at least one rank,
all distinct, each a ``u32``). Each case is a small rank file with one odd line (or odd
line ends) at line 101: where tiktoken takes it, polytok reads the same ranks and encodes
the same; where tiktoken refuses it, polytok raises `FormatError` naming the file (and the
line, where the loader's own error is on one line).
"""

from __future__ import annotations

import base64

import pytest
import tiktoken
from tiktoken.load import load_tiktoken_bpe

import polytok
from polytok.formats.tiktoken import mergeable_ranks, read_tiktoken

PATTERN = (r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+"""
           r"""|\s++$|\s*[\r\n]|\s+(?!\S)|\s""")
TOKENS = [bytes([b]) for b in range(256)] + [b"ab", b"abc", b" the", b"\xe2\x82", b"\xe2\x82\xac"]
TEXTS = ["abc the abcab €€ ab", "It's 12345 xy", "ab\r\nabc  \n"]


@pytest.fixture(autouse=True)
def _no_tiktoken_cache(monkeypatch):
    """tiktoken's loader caches even a local file by its path (load.py ``read_file_cached``)."""
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", "")


def _lines() -> list[bytes]:
    return [base64.b64encode(t) + b" " + str(i).encode() for i, t in enumerate(TOKENS)]


def _file(tmp_path, lines: list[bytes], eol: bytes = b"\n"):
    path = tmp_path / "odd.tiktoken"
    path.write_bytes(eol.join(lines) + eol)
    return path


def _reference(path) -> tiktoken.Encoding | None:
    try:
        return tiktoken.Encoding("odd", pat_str=PATTERN, mergeable_ranks=load_tiktoken_bpe(str(path)),
                                 special_tokens={})
    except BaseException as exc:  # the loader's ValueError, CoreBPE's OverflowError or panic
        if isinstance(exc, KeyboardInterrupt):
            raise
        return None


def _same_as_tiktoken(path, loader_line: int | None = None) -> bool:
    """Asserts polytok reads `path` as tiktoken does; returns whether tiktoken took it."""
    ref = _reference(path)
    if ref is None:
        with pytest.raises(polytok.FormatError) as info:
            read_tiktoken(path, pattern=PATTERN)
        assert str(path) in str(info.value)
        if loader_line is not None:
            assert info.value.line == loader_line, str(info.value)
        return False
    tok = read_tiktoken(path, pattern=PATTERN)
    assert mergeable_ranks(tok) == ref._mergeable_ranks
    for text in TEXTS:
        assert tok.encode(text) == ref.encode_ordinary(text), text
        assert tok.decode(ref.encode_ordinary(text)) == text
    return True


ODD_LINES_TAKEN = [
    b"eHk=\t300", b"  eHk=   300  ", b"eHk=\x0b300", b"eHk=\x0c300", b"eHk= +300", b"eHk= 3_00", b"eHk= 0300",
    b"eHk=! 300", b"eH!k= 300", b"= 300", b"==== 300", b"eHk== 300", b"eHk=eHk= 300",
    b"YWJj 300",  # b"abc" again, before its own line: that line's rank 257 wins, 300 is gone
    b"YWJj -5",  # a bad rank that the later line for b"abc" replaces
]
ODD_LINES_REFUSED = [  # (line, whether the loader itself refuses it, so the error names line 101)
    (b"eHk=", True), (b"eHk= 300 1", True), (b"eHk 300", True), (b"eHk= x", True), (b" ", True), (b"\t", True),
    (b"eHk= 3.0", True), (b"eHk= -300", False), (b"eHk= 4294967296", False), (b"eHk= 5", False),
]


@pytest.mark.parametrize("line", ODD_LINES_TAKEN)
def test_an_odd_line_tiktoken_takes(tmp_path, line):
    lines = _lines()
    lines.insert(100, line)
    assert _same_as_tiktoken(_file(tmp_path, lines))


@pytest.mark.parametrize("line,on_the_line", ODD_LINES_REFUSED)
def test_an_odd_line_tiktoken_refuses(tmp_path, line, on_the_line):
    lines = _lines()
    lines.insert(100, line)
    assert not _same_as_tiktoken(_file(tmp_path, lines), 101 if on_the_line else None)


def test_a_token_given_twice_keeps_its_last_rank(tmp_path):
    lines = _lines() + [b"YWJj 300", b"YWJj 261"]  # b"abc": rank 257, then 300, then 261
    assert _same_as_tiktoken(_file(tmp_path, lines))
    assert _same_as_tiktoken(_file(tmp_path, _lines() + _lines()[200:210]))  # the same lines twice


def test_a_rank_left_twice_is_refused_naming_its_line(tmp_path):
    lines = _lines() + [b"eHk= 7"]  # b"xy" takes the rank of byte 7
    assert not _same_as_tiktoken(_file(tmp_path, lines), 262)


@pytest.mark.parametrize("eol", [b"\n", b"\r\n", b"\r"])
def test_line_ends_and_empty_lines(tmp_path, eol):
    lines = _lines()
    lines[50:50] = [b"", b""]
    assert _same_as_tiktoken(_file(tmp_path, [b"", *lines, b""], eol))


def test_mixed_line_ends(tmp_path):
    lines = _lines()
    data = b"".join(line + (b"\r", b"\n", b"\r\n")[i % 3] for i, line in enumerate(lines))
    path = tmp_path / "mixed.tiktoken"
    path.write_bytes(data)
    assert _same_as_tiktoken(path)


def test_a_file_of_no_ranks_is_refused(tmp_path):
    for data in (b"", b"\n\n", b"\r\n"):
        path = tmp_path / "empty.tiktoken"
        path.write_bytes(data)
        assert not _same_as_tiktoken(path)
