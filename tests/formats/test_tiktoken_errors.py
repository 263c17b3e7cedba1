"""Bad and unknown rank files: polytok.FormatError naming the file, the line or the sha256."""

from __future__ import annotations

import base64
import hashlib

import pytest
import tiktoken
from tiktoken.load import load_tiktoken_bpe

import polytok
from polytok.formats.tiktoken import mergeable_ranks, read_tiktoken

PATTERN = (r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+"""
           r"""|\s++$|\s*[\r\n]|\s+(?!\S)|\s""")


def _ranks_file(tmp_path, extra: list[bytes] = (), name: str = "tiny.tiktoken", eol: bytes = b"\n"):
    tokens = [bytes([b]) for b in range(256)] + [b"ab", b"abc", b" the", b"\xe2\x82", b"\xe2\x82\xac"] + list(extra)
    lines = [base64.b64encode(t) + b" " + str(i).encode() for i, t in enumerate(tokens)]
    path = tmp_path / name
    path.write_bytes(eol.join(lines) + eol)
    return path


def test_unknown_file_without_pattern_names_its_sha256(tmp_path):
    path = _ranks_file(tmp_path)
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    with pytest.raises(polytok.FormatError, match=digest) as info:
        polytok.load(path)
    assert "pattern" in str(info.value)


@pytest.mark.parametrize("eol", [b"\n", b"\r\n"])
def test_unknown_file_with_pattern_equals_tiktoken(tmp_path, eol):
    path = _ranks_file(tmp_path, eol=eol)
    specials = {"<|endoftext|>": 400, "<|fim|>": 402}
    tok = polytok.load(path, pattern=PATTERN, special_tokens=specials)
    ref = tiktoken.Encoding("tiny", pat_str=PATTERN, mergeable_ranks=load_tiktoken_bpe(str(path)),
                            special_tokens=specials)
    for text in ["abc the abcab €€ ab", "x<|endoftext|>abc<|fim|>", "It's 12345"]:
        assert tok.encode(text) == ref.encode_ordinary(text)
        assert tok.encode(text, special="parse") == ref.encode(text, allowed_special="all")
        ids = ref.encode(text, allowed_special="all")
        assert tok.decode(ids) == ref.decode(ids)
    assert mergeable_ranks(tok) == load_tiktoken_bpe(str(path))
    assert tok.facts.pattern == PATTERN and tok.facts.details["name"] is None
    with pytest.raises(polytok.DecodeError, match="position 0"):
        tok.decode([401])  # the gap between the two special ids: tiktoken raises KeyError too


def test_a_known_file_takes_a_given_pattern_and_specials(tmp_path):
    tok = polytok.load(_ranks_file(tmp_path), pattern=r"\S+|\s+", special_tokens={})
    assert tok.facts.pattern == r"\S+|\s+"


@pytest.mark.parametrize("line,bad", [
    (b"YWJj", "no rank"),
    (b"YWJj 5 6", "two ranks"),
    (b"YW!j 5", "not base64"),
    (b"YWJ 5", "bad padding"),
    (b"eHk= -5", "negative rank"),  # b"xy": no later line gives it another rank
    (b"YWJj five", "rank not a number"),
])
def test_a_bad_line_is_named_by_number(tmp_path, line, bad):
    path = _ranks_file(tmp_path)
    lines = path.read_bytes().split(b"\n")
    lines.insert(100, line)
    path.write_bytes(b"\n".join(lines))
    with pytest.raises(polytok.FormatError) as info:
        read_tiktoken(path, pattern=PATTERN)
    assert info.value.line == 101, bad
    assert str(path) in str(info.value)


def test_empty_lines_are_skipped_as_tiktoken_does(tmp_path):
    path = _ranks_file(tmp_path)
    path.write_bytes(b"\n" + path.read_bytes().replace(b"\n", b"\n\n", 3))
    tok = read_tiktoken(path, pattern=PATTERN)
    assert mergeable_ranks(tok) == load_tiktoken_bpe(str(path))


def test_a_repeated_rank_is_an_error(tmp_path):
    path = _ranks_file(tmp_path, extra=[b"zz"])
    path.write_bytes(path.read_bytes().replace(b"eno= 261", b"eno= 3"))  # "zz" gets rank 3 again
    with pytest.raises(polytok.FormatError, match="rank 3 appears twice") as info:
        read_tiktoken(path, pattern=PATTERN)
    assert info.value.line == 262
    with pytest.raises(BaseException, match="duplicate token indices"):  # tiktoken panics
        tiktoken.Encoding("x", pat_str=PATTERN, mergeable_ranks=load_tiktoken_bpe(str(path)), special_tokens={})


def test_a_missing_file_and_a_bad_pattern(tmp_path):
    with pytest.raises(polytok.FormatError, match="no such file"):
        polytok.load(tmp_path / "missing.tiktoken")
    with pytest.raises(polytok.FormatError, match="invalid regular expression"):
        polytok.load(_ranks_file(tmp_path), pattern=r"(\p{L}")


def test_bad_special_tokens_and_sparse_ranks(tmp_path):
    path = _ranks_file(tmp_path)
    with pytest.raises(polytok.FormatError, match="non-negative id"):
        read_tiktoken(path, pattern=PATTERN, special_tokens={"<x>": -1})
    with pytest.raises(polytok.FormatError, match="sparse"):
        read_tiktoken(path, pattern=PATTERN, special_tokens={"<x>": 2**31})
    path.write_bytes(path.read_bytes() + b"eno= 3000000000\n")
    with pytest.raises(polytok.FormatError, match="sparse"):
        read_tiktoken(path, pattern=PATTERN)
