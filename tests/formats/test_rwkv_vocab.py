"""RWKV world vocabulary against rwkv 0.8.32's TRIE_TOKENIZER, run live.

Expected ids and texts come only from TRIE_TOKENIZER (and, for the literal parser,
from Python's own ast.literal_eval), never from polytok.
"""

from __future__ import annotations

import ast
import contextlib
import warnings
from pathlib import Path

import fixtures
import pytest

import polytok
from polytok.errors import DecodeError, EncodeError, FormatError
from polytok.formats.rwkv_vocab import escape_bytes, parse_literal, read_rwkv_vocab

rwkv_tokenizer = pytest.importorskip("rwkv.rwkv_tokenizer")

WORLD = ("rwkv-world-vocab", "rwkv_vocab_v20230424.txt")


@pytest.fixture(scope="module")
def world() -> tuple[polytok.Tokenizer, object]:
    path = fixtures.fixture_path(*WORLD)
    return read_rwkv_vocab(path), rwkv_tokenizer.TRIE_TOKENIZER(str(path))


def _texts() -> list[str]:
    """The edge texts and 4000-character slices of the bench texts (when ../shared/fixtures has them)."""
    texts = fixtures.edge_texts()
    for name in ("en", "code", "multi"):
        with contextlib.suppress(pytest.skip.Exception):
            texts.append(fixtures.bench_slice(name, 4000))
    return texts


def test_world_vocab_matches_trie_tokenizer(world: tuple[polytok.Tokenizer, object]) -> None:
    tok, ref = world
    bad = []
    for text in _texts():
        want = ref.encode(text)  # type: ignore[attr-defined]
        for add in (True, False):
            for special in ("parse", "text"):
                got = tok.encode(text, add_special=add, special=special)
                if got != want:
                    bad.append(("encode", add, special, text[:40], want[:10], got[:10]))
        for skip in (False, True):
            if tok.decode(want, skip_special=skip) != ref.decode(want):  # type: ignore[attr-defined]
                bad.append(("decode", skip, text[:40]))
    assert not bad, f"{len(bad)} mismatches, first: {bad[:3]}"


def test_load_sniffs_the_file(world: tuple[polytok.Tokenizer, object]) -> None:
    tok = polytok.load(fixtures.fixture_path(*WORLD))
    assert tok.facts.format == "rwkv_vocab"
    assert tok.encode("Hello 世界\n\n") == world[1].encode("Hello 世界\n\n")  # type: ignore[attr-defined]


def test_vocabulary_lookups(world: tuple[polytok.Tokenizer, object]) -> None:
    tok, ref = world
    idx2token: dict[int, bytes] = ref.idx2token  # type: ignore[attr-defined]
    assert len(tok) == max(idx2token) + 1  # ids 0 .. 65529; id 0 has no token in the file
    assert tok.id_to_token(0) is None
    for id_, token in list(idx2token.items())[::97]:
        piece = tok.id_to_token(id_)
        assert piece == repr(token)[2:-1] == escape_bytes(token)
        assert tok.token_to_id(piece) == id_
        assert tok.model.token_bytes(id_) == token  # type: ignore[attr-defined]
    assert tok.token_to_id("hello") == ref.token2idx[b"hello"]  # type: ignore[attr-defined]
    assert tok.token_to_id("\\n\\n") == ref.token2idx[b"\n\n"]  # type: ignore[attr-defined]


def test_invalid_utf8_decode_divergence(world: tuple[polytok.Tokenizer, object]) -> None:
    """Known divergence: TRIE_TOKENIZER.decode gives one "\\ufffd" for the whole text; polytok
    replaces each invalid sequence of decodeBytes and keeps the rest."""
    tok, ref = world
    token2idx: dict[bytes, int] = ref.token2idx  # type: ignore[attr-defined]
    ids = [token2idx[b"ok"], token2idx[b" "], token2idx[b"\xe4"], token2idx[b"\xbd"], token2idx[b" end"]]
    assert ref.decode(ids) == "\ufffd"  # type: ignore[attr-defined]
    want = ref.decodeBytes(ids).decode("utf-8", "replace")  # type: ignore[attr-defined]
    assert tok.decode(ids) == want == "ok \ufffd end"
    # an id without a token: decodeBytes raises, decode swallows it into "\ufffd"; polytok raises
    with pytest.raises(KeyError):
        ref.decodeBytes([0])  # type: ignore[attr-defined]
    assert ref.decode([token2idx[b"ok"], 0]) == "\ufffd"  # type: ignore[attr-defined]
    with pytest.raises(DecodeError):
        tok.decode([0])


def test_decode_stream_rebuilds_the_text(world: tuple[polytok.Tokenizer, object]) -> None:
    tok, ref = world
    text = "Grüße, 世界! Ελληνικά — 😀👍🏽 עברית ".join(fixtures.edge_texts()[:40])
    ids = ref.encode(text)  # type: ignore[attr-defined]
    stream = tok.decode_stream()
    out = "".join(stream.step(i) for i in ids) + stream.flush()
    assert out == ref.decode(ids) == text  # type: ignore[attr-defined]


# -- the longest-match rule, on a tiny file both engines read -------------------------------

TINY = ["'a'", "'b'", "'c'", "'ab'", "'abc'", "'abcd'", "'bcd'", "'d'", "b'\\xe4'", "'é'", "' '", "'ca'"]


def _write(tmp_path: Path, literals: list[str], start: int = 1) -> Path:
    lines = []
    for i, lit in enumerate(literals, start):
        lines.append(f"{i} {lit} {len(parse_literal(lit))}")
    path = tmp_path / "rwkv_vocab_tiny.txt"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.mark.parametrize("text", ["abcd", "abcabc", "abcab", "bcd", "cabcd", "abdc", "é a", "abcdabc", ""])
def test_tiny_longest_match(tmp_path: Path, text: str) -> None:
    path = _write(tmp_path, TINY)
    assert read_rwkv_vocab(path).encode(text) == rwkv_tokenizer.TRIE_TOKENIZER(str(path)).encode(text)


def test_missing_byte_raises_as_the_reference(tmp_path: Path) -> None:
    path = _write(tmp_path, TINY)
    with pytest.raises(UnboundLocalError):  # TRIE_TOKENIZER.encode has no match to return
        rwkv_tokenizer.TRIE_TOKENIZER(str(path)).encode("abz")
    with pytest.raises(EncodeError):
        read_rwkv_vocab(path).encode("abz")


# -- the literal parser: Python's own reading of the literal is the oracle ----------------------

LITERALS = [
    "'plain'", '"double \'q\'"', "'\\''", "'\\\\'", "'\\x41\\xe9'", "'\\u00e9\\U0001F600'", "b'\\x80\\xff'",
    "b'\\\\n'", "'\\N{BULLET}'", "'\\101\\0'", "'a\\qb'", "r'\\n'", "rb'\\x'", "u'x'", "'\\a\\b\\f\\v\\t\\r\\n'",
    "'中文'", "B\"\\'\"", "'   '",
]


@pytest.mark.parametrize("literal", LITERALS)
def test_parse_literal_as_python(literal: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        value = ast.literal_eval(literal)
    want = value.encode("utf-8") if isinstance(value, str) else value
    assert parse_literal(literal) == want


@pytest.mark.parametrize("line, why", [
    ("7 'abc 3", "unterminated"),
    ("7 'ab'c' 4", "inner quote"),
    ("7 __import__('os') 1", "not a literal (the reference would eval it)"),
    ("7 'abc' 4", "length differs"),
    ("x7 'abc' 3", "id not a number"),
    ("7 'abc' three", "length not a number"),
    ("", "empty line"),
    ("7 b'é' 2", "non-ASCII bytes literal"),
    ("7 '\\x4' 1", "truncated escape"),
    ("7 '''a''' 1", "triple quotes"),
])
def test_bad_line_names_the_line(tmp_path: Path, line: str, why: str) -> None:
    path = tmp_path / "rwkv_vocab_bad.txt"
    path.write_text(f"1 'a' 1\n2 'b' 1\n{line}\n4 'd' 1\n", encoding="utf-8")
    with pytest.raises(FormatError) as info:
        read_rwkv_vocab(path)
    assert info.value.line == 3, why
    assert "line 3" in str(info.value) and str(path) in str(info.value)


def test_empty_file_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "rwkv_vocab_empty.txt"
    path.write_bytes(b"")
    with pytest.raises(FormatError) as info:
        read_rwkv_vocab(path)
    assert info.value.line == 1


def test_crlf_and_cr_lines_as_universal_newlines(tmp_path: Path) -> None:
    path = tmp_path / "rwkv_vocab_crlf.txt"
    path.write_bytes(b"1 'a' 1\r\n2 'b' 1\r3 'ab' 2\r\n4 '\\r\\n' 2\n")
    ref = rwkv_tokenizer.TRIE_TOKENIZER(str(path))
    tok = read_rwkv_vocab(path)
    for text in ("abab", "a\r\nb", "ba"):
        assert tok.encode(text) == ref.encode(text)


def test_load_reads_a_folder_holding_the_file(tmp_path: Path, world: tuple[polytok.Tokenizer, object]) -> None:
    (tmp_path / WORLD[1]).write_bytes(fixtures.fixture_path(*WORLD).read_bytes())
    tok = polytok.load(tmp_path)
    assert tok.facts.format == "rwkv_vocab"
    assert tok.encode("Hi there") == world[1].encode("Hi there")  # type: ignore[attr-defined]
