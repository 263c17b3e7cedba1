"""A rank of no bytes (a line ``= N``), against tiktoken 0.14.0 live.

Whisper's ``multilingual.tiktoken`` (openai-whisper 20250625, fetched from PyPI) ends with
``= 50256``. tiktoken's loader reads it as ``b"" -> 50256``; ``decode`` of that id gives
nothing; merges never make it (lib.rs ``byte_pair_encode`` joins non-empty parts), so
encode gives it only for an empty match of the pattern. Whisper's pattern has none.

Patterns that match empty (synthetic rank files, live against tiktoken): tiktoken gives the
empty token for each empty match fancy-regex's ``find_iter`` reports (none that ends where
the previous match ended: ``a*`` over ``"xay"`` is empty@0, ``"a"``, empty@3), on the text
before, between and after special tokens even where it is empty; without an empty token it
panics (``byte_pair_encode`` of no bytes), and polytok raises `EncodeError` naming the place.
"""

from __future__ import annotations

import base64
import functools
import random
import re

import pytest
import regex
import tiktoken
import tokenizers
from fixtures import edge_texts, fixture_path
from tiktoken.load import load_tiktoken_bpe

import polytok
from polytok import parallel
from polytok.formats.tiktoken import build_tiktoken, mergeable_ranks, read_tiktoken
from polytok.formats.tiktoken_known import KNOWN_RANKS
from polytok.parallel import long_text

WHISPER_EMPTY = 50256


@functools.cache
def _whisper() -> tuple[polytok.Tokenizer, tiktoken.Encoding]:
    path = fixture_path("whisper-multilingual-tiktoken", "multilingual.tiktoken")
    tok = polytok.load(path)  # known by its sha256: whisper's pattern and special tokens
    known = KNOWN_RANKS[tok.facts.details["sha256"]]
    ref = tiktoken.Encoding("multilingual", pat_str=known.pattern, mergeable_ranks=load_tiktoken_bpe(str(path)),
                            special_tokens=known.special_tokens)
    return tok, ref


def test_whisper_empty_token_decodes_to_nothing():
    tok, ref = _whisper()
    assert ref.decode_single_token_bytes(WHISPER_EMPTY) == b""
    assert mergeable_ranks(tok)[b""] == WHISPER_EMPTY
    for ids in ([WHISPER_EMPTY], [40, WHISPER_EMPTY, 41], [WHISPER_EMPTY] * 3, [50257, WHISPER_EMPTY, 50258]):
        assert tok.decode(ids) == ref.decode(ids)
    stream = tok.decode_stream()
    assert "".join(map(stream.step, [40, WHISPER_EMPTY, 41])) + stream.flush() == ref.decode([40, WHISPER_EMPTY, 41])


def test_whisper_empty_token_counts_in_the_vocabulary():
    tok, ref = _whisper()
    assert len(tok) == len(ref._mergeable_ranks) + len(ref._special_tokens) == ref.n_vocab
    assert tok.id_to_token(WHISPER_EMPTY) == ""


def test_whisper_encode_never_gives_the_empty_token():
    tok, ref = _whisper()
    for text in edge_texts():
        expected = ref.encode(text, allowed_special="all")
        assert WHISPER_EMPTY not in expected
        assert tok.encode(text, special="parse") == expected, text[:80]


def test_whisper_pattern_keeps_the_shared_scan():
    """A pattern that matches no empty text keeps the fast paths, an empty token or not."""
    tok, _ = _whisper()
    assert not tok.pre_tokenizer.splits_empty_text
    assert parallel.scanner_for(tok) is not None


PATTERN = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""


def _ranks_file(tmp_path, empty_line: bytes) -> tuple[object, int]:
    tokens = [bytes([b]) for b in range(256)] + [b"ab", b" the"]
    lines = [base64.b64encode(t) + b" " + str(i).encode() for i, t in enumerate(tokens)]
    lines.insert(3, empty_line)  # a token of no bytes, its rank past the others
    path = tmp_path / "empty.tiktoken"
    path.write_bytes(b"\n".join(lines) + b"\n")
    return path, len(tokens)


@pytest.mark.parametrize("empty_line", [b"= 258", b"==== 258", b"  = 258"])
def test_a_synthetic_empty_token_reads_as_tiktoken(tmp_path, monkeypatch, empty_line):
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", "")  # tiktoken caches a local file by its path
    path, empty_id = _ranks_file(tmp_path, empty_line)
    ranks = load_tiktoken_bpe(str(path))
    assert ranks[b""] == empty_id
    ref = tiktoken.Encoding("x", pat_str=PATTERN, mergeable_ranks=ranks, special_tokens={"<|x|>": 300})
    tok = read_tiktoken(path, pattern=PATTERN, special_tokens={"<|x|>": 300})
    assert mergeable_ranks(tok) == ranks
    for text in ["", "ab the ab", "a  b\n\n", "<|x|><|x|>", "x<|x|>"] + edge_texts()[::5]:
        assert tok.encode(text) == ref.encode_ordinary(text)
        assert tok.encode(text, special="parse") == ref.encode(text, allowed_special="all")
    assert tok.decode([97, empty_id, 98, 300]) == ref.decode([97, empty_id, 98, 300]) == "ab<|x|>"


# -- patterns that match empty -----------------------------------------------------------------

EMPTY_ID = 300
SPECIALS = {"<|x|>": 400, "<|endoftext|>": 401}
RANKS = {bytes([b]): b for b in range(256)} | {b"ab": 256, b"aa": 257, b" x": 258}
NO_EMPTY_REPORTED = r"a|(?<=a)"
EMPTY_PATTERNS = [
    r"a*", r"(?:ab)*", r"\s*", r"x?|y", r"(?=a)", r"(?<=a)", NO_EMPTY_REPORTED, r"a+|$", r"\b", r"|b", r"a*?",
    r"[^\sa]+|\s+|(?=a)", PATTERN + "|",
]
TEXTS = ["", "xay", "yxy", "aa", "aab", "abab c", " \n x", "a", "b", "<|x|>", "<|x|><|x|>", "a<|x|>a",
         "ab<|x|>", "x<|x|>ay", "<|x|>aa<|endoftext|>", "aa<|x|>", "a \u00e9a\U0001f642a"] + edge_texts()[::4]


@functools.cache
def _pair(pattern: str, empty: bool) -> tuple[polytok.Tokenizer, tiktoken.Encoding]:
    """polytok and tiktoken over the same synthetic ranks, with or without a token of no bytes."""
    ranks = RANKS | ({b"": EMPTY_ID} if empty else {})
    ref = tiktoken.Encoding(f"t{len(pattern)}{empty}", pat_str=pattern, mergeable_ranks=ranks,
                            special_tokens=SPECIALS)
    tok = build_tiktoken(list(ranks), list(ranks.values()), pattern, SPECIALS, source="synthetic")
    return tok, ref


def _ref_encode(ref: tiktoken.Encoding, text: str, parse: bool) -> list[int]:
    return ref.encode(text, allowed_special="all") if parse else ref.encode_ordinary(text)


# the patterns Oniguruma reads as fancy-regex does (on ASCII text without line breaks: onig's $ ends a line)
ONIG_ALIKE = set(EMPTY_PATTERNS) - {PATTERN + "|"}
SPECIAL_SPLIT = re.compile("(" + "|".join(map(re.escape, SPECIALS)) + ")")


def _empty_positions(pattern: str, text: str, parse: bool) -> list[int]:
    """Where the empty matches tiktoken reports lie, from a second reference: HF tokenizers'
    ``NormalizedString.split`` (Oniguruma's ``find_iter``, whose iteration rule is fancy-regex's)
    gives the covering pieces of each text tiktoken runs ``find_iter`` on, empty matches
    included; the empty text's one match is tiktoken's own (``encode_ordinary("")``)."""
    _, ref = _pair(pattern, True)
    matches_empty_text = ref.encode_ordinary("") == [EMPTY_ID]
    positions, start = [], 0
    for k, part in enumerate(SPECIAL_SPLIT.split(text) if parse else [text]):
        if k % 2 == 0 and not part:
            positions += [start] if matches_empty_text else []
        elif k % 2 == 0:
            at = start
            for piece in tokenizers.NormalizedString(part).split(tokenizers.Regex(pattern), "isolated"):
                positions += [at] if not piece.normalized else []
                at += len(piece.normalized)
        start += len(part)
    return positions


def _oracle_applies(pattern: str, text: str) -> bool:
    return pattern in ONIG_ALIKE and text.isascii() and "\n" not in text and "\r" not in text


@pytest.mark.parametrize("pattern", EMPTY_PATTERNS)
def test_empty_matches_give_the_empty_token(pattern):
    tok, ref = _pair(pattern, True)
    placed = 0
    for text in TEXTS:
        for parse in (False, True):
            expected = _ref_encode(ref, text, parse)
            special = "parse" if parse else "text"
            assert tok.encode(text, special=special) == expected, (pattern, text[:60], parse)
            full = tok.encode_full(text, special=special)
            assert full.ids == expected, (pattern, text[:60], parse)
            empties = [k for k, i in enumerate(expected) if i == EMPTY_ID]
            assert all(full.tokens[k] == "" and full.offsets[k][0] == full.offsets[k][1] for k in empties)
            if _oracle_applies(pattern, text):
                positions = _empty_positions(pattern, text, parse)
                assert len(positions) == len(empties), (pattern, text, parse)  # the two references agree
                assert [full.offsets[k][0] for k in empties] == positions, (pattern, text, parse)
                placed += len(positions)
    assert placed or pattern in (NO_EMPTY_REPORTED, PATTERN + "|")
    assert tok.encode_batch(TEXTS, workers=1) == [ref.encode_ordinary(t) for t in TEXTS]
    for text in ("<|x|>x<|x|><|x|>ay", ""):
        assert polytok.explain(tok, text, special="parse").ids == ref.encode(text, allowed_special="all")


def test_the_walk_skips_an_empty_match_where_a_match_ended():
    """fancy-regex's iteration, spelt out: Python's would add an empty match at 2 ("xay") and at 1 ("yxy")."""
    tok, ref = _pair(r"a*", True)
    assert ref.encode_ordinary("xay") == tok.encode("xay") == [EMPTY_ID, 97, EMPTY_ID]
    assert [o for o, i in zip(tok.encode_full("xay").offsets, tok.encode("xay")) if i == EMPTY_ID] == [(0, 0), (3, 3)]
    assert ref.encode_ordinary("") == tok.encode("") == [EMPTY_ID]
    assert ref.encode_ordinary("aa") == tok.encode("aa") == [257]
    tok, ref = _pair(r"x?|y", True)
    assert ref.encode_ordinary("yxy") == tok.encode("yxy") == [EMPTY_ID, 120, EMPTY_ID]
    tok, ref = _pair(r"a*", True)
    assert ref.encode("<|x|><|x|>", allowed_special="all") == tok.encode("<|x|><|x|>", special="parse") \
        == [EMPTY_ID, 400, EMPTY_ID, 400, EMPTY_ID]


@pytest.mark.parametrize("pattern", EMPTY_PATTERNS)
def test_without_an_empty_token_an_empty_match_is_refused(pattern):
    tok, ref = _pair(pattern, False)
    _, ref_with_empty = _pair(pattern, True)
    refused = 0
    for text in TEXTS:
        for parse in (False, True):
            special = "parse" if parse else "text"
            if EMPTY_ID not in _ref_encode(ref_with_empty, text, parse):
                assert tok.encode(text, special=special) == _ref_encode(ref, text, parse), (pattern, text[:60])
                continue
            refused += 1
            with pytest.raises(BaseException) as panic:  # pyo3's PanicException derives from BaseException only
                _ref_encode(ref, text, parse)
            assert type(panic.value).__name__ == "PanicException"
            for call in (tok.encode, tok.encode_full):
                with pytest.raises(polytok.EncodeError, match="no empty token") as err:
                    call(text, special=special)
                assert f"at character {err.value.position}," in str(err.value)
                if _oracle_applies(pattern, text):
                    assert err.value.position == _empty_positions(pattern, text, parse)[0], (pattern, text, parse)
    assert refused or pattern == NO_EMPTY_REPORTED


def test_an_empty_match_where_a_match_ended_is_not_refused():
    """``a|(?<=a)`` matches empty only right after an ``a`` it has matched: fancy-regex skips those
    (Python's iteration would report them), so tiktoken needs no empty token for it."""
    tok, ref = _pair(NO_EMPTY_REPORTED, False)
    assert regex.findall(NO_EMPTY_REPORTED, "bab") == ["a", ""]
    for text in ["bab", "a", "aa", "aab<|x|>a"]:
        assert tok.encode(text, special="parse") == ref.encode(text, allowed_special="all") == \
            [i for i in ref.encode(text, allowed_special="all") if i != EMPTY_ID]


def test_a_refused_empty_match_is_placed_in_the_whole_text():
    """Inside the text after a special token, the position counts from the start of the input."""
    tok, _ = _pair(r"a*", False)
    with pytest.raises(polytok.EncodeError, match="at character 7,"):
        tok.encode("aa<|x|>", special="parse")
    with pytest.raises(polytok.EncodeError, match="at character 3,"):
        tok.encode("aa<|x|>", special="text")  # "<": the first character "a*" meets after "aa"


def _long_text(seed: int, n_chars: int) -> str:
    rng = random.Random(seed)
    parts, size = [], 0
    while size < n_chars:
        part = rng.choice(TEXTS) + rng.choice(["", " ", "\n", "<|x|>", "<|endoftext|>", "a", "<|x|><|x|>"])
        parts.append(part)
        size += len(part)
    return "".join(parts)


@pytest.mark.skipif(not parallel.can_fork(), reason="no fork start method here")
@pytest.mark.parametrize("pattern", [r"[^\sa]+|\s+|(?=a)", r"a*", PATTERN + "|"])
def test_count_and_encode_long_give_tiktoken_ids(pattern, monkeypatch):
    """``polytok count``'s shared scan: a scan that meets an empty match hands its segment to the
    pre-tokenizer; a pattern matching the empty text is not shared out at all."""
    monkeypatch.setattr(long_text, "MIN_CHARS", 1_000)
    monkeypatch.setattr(long_text, "OVERLAP", 64)
    tok, ref = _pair(pattern, True)
    texts = [_long_text(1, 12_000), _long_text(2, 6_000)]
    for parse in (False, True):
        expected = [_ref_encode(ref, t, parse) for t in texts]
        special = "parse" if parse else "text"
        found = long_text.encode_long(tok, texts, add_special=False, special=special, workers=2)
        counts = long_text.count_long(tok, texts, add_special=False, special=special, workers=2)
        if tok.pre_tokenizer.splits_empty_text:
            assert found is None and counts is None  # encoded in one process
        else:
            assert found == expected and counts == list(map(len, expected))
        assert tok.encode_batch(texts, special=special, workers=2) == expected


@pytest.mark.skipif(not parallel.can_fork(), reason="no fork start method here")
def test_count_long_leaves_a_refused_empty_match_to_the_caller(monkeypatch):
    monkeypatch.setattr(long_text, "MIN_CHARS", 1_000)
    monkeypatch.setattr(long_text, "OVERLAP", 64)
    pattern = r"[^\sa]+|\s+|(?=a)"
    tok, ref = _pair(pattern, False)
    text = "x" * 5_000 + "aa" + "y" * 5_000  # the first "a" ends "x"'s match: its empty match is skipped
    with pytest.raises(BaseException, match="out of range"):  # tiktoken's panic
        ref.encode_ordinary(text)
    where = _empty_positions(pattern, text, False)[0]
    assert where == 5_001
    assert parallel.scanner_for(tok) is not None
    assert long_text.count_long(tok, [text], add_special=False, special="text", workers=2) is None
    with pytest.raises(polytok.EncodeError, match=f"at character {where},"):
        tok.encode(text)
