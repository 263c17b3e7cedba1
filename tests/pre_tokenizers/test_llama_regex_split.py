"""LlamaRegexSplit against llama.cpp (llama-cpp-python 0.3.36, src/unicode.cpp).

Expected pieces are llama.cpp's, frozen in tests/golden/gguf/llama_splits.json by
tools/gen_llama_split_goldens.py: llama.cpp returns no pieces, only ids, so for each pre type
the tool writes a BPE vocabulary (every substring of the texts a token, every cut of it a merge)
in which llama.cpp's BPE makes each piece exactly one token, runs the texts through
llama-cpp-python's ``tokenize`` and spells the ids. The texts are the worked examples of
llama_vocab.md section 8.5 and a few that pin single rules; other rules are read off
unicode.cpp where noted. The Unicode tables are checked, code point by code point,
against llama.cpp's ``src/unicode-data.cpp``, read from the llama-cpp-python sdist by
tests/fixtures.py ``llama_cpp_source_path`` (skipped, saying so, when PyPI cannot be reached).
End-to-end id parity with llama.cpp is the job of the GGUF golden files.
"""

from __future__ import annotations

import functools
import json
import re
from pathlib import Path

import pytest
from fixtures import edge_texts, llama_cpp_source_path

from polytok.normalized import NormalizedString
from polytok.pre_tokenizers.llama_pre_types import PRE_TYPES
from polytok.pre_tokenizers.llama_regex_split import LlamaRegexSplit, category_flags, collapse, collapse_regex, to_lower
from polytok.text.byte_alphabet import BYTES_TO_CHARS


def split(pre: str, text: str) -> list[str]:
    return LlamaRegexSplit(PRE_TYPES[pre].regexes, byte_encode=False).pre_tokenize(text)


# The texts of llama_vocab.md section 8.5's worked examples (its pieces were taken from the compiled
# splitter) and texts that pin rules: each cut names the rule it shows.
WORKED_EXAMPLES = [
    ("gpt-4o", "\u00c4PFEL"),
    ("gpt-4o", "\u00c9COLE normale"),
    ("gpt-4o", "iPhone \u00dcBER"),
    ("gpt-4o", "q\u0301x"),
    ("tiny_aya", "HelloWorld"),
    ("tiny_aya", "McDonald'S"),
    ("llama3", "DON'T"),
    ("llama3", "I'll  go\n\n now"),
    ("llama3", "  \n  x"),
    ("llama3", "a\r\n\r\nb"),
    ("gpt-2", "  \n  x"),
    ("gpt-2", "a\r\n\r\nb"),
    ("gpt-2", "x\u00a0y"),
    ("gpt-2", "a\u001cb"),
    ("deepseek-v3", "ab12345"),
    ("superbpe", "hello world 123"),  # the split also gives an empty piece, which gives no token
    ("exaone-moe", "hello world 123"),
    ("gemma4", "a\u2581\u2581b\n"),
    ("afmoe", "ab12345"),  # 8.4 C-digits3
    ("tiny_aya", "ab12345"),
]
RULES = [
    ("llama3", "1234567"),  # digits in threes
    ("qwen2", "123"),  # digits one by one
    ("gpt-2", "'S"),  # C-gpt2 contractions are lower-case only
    ("deepseek-llm", "a \n"),  # S-w '$' is the chunk end
    ("kimi-k2", "Hello\u4e16\u754cabc's 12345 \u4f60\u597d\uff0c\u4e16\u754c\uff01 \u3053\u3093\u306b\u3061\u306f "
                "\u30ab\u30bf\u30ab\u30ca \ud55c\uad6d\uc5b4"),
    ("kimi-k2", "a  \n\n  b\r\r  c   "),
    ("kimi-k2", "don't WON'T it'S we'Re"),
    ("afmoe", "1 12 123 1234 12345 123456"),
    ("chameleon", "IMGIMGABCZ <sentinel:12> 12:30"),
    ("youtu", "Hello\u4e16\u754cabc's 12345 \u4f60\u597d\uff0c\u4e16\u754c\uff01 \u3053\u3093\u306b\u3061\u306f "
              "\u30ab\u30bf\u30ab\u30ca \ud55c\uad6d\uc5b4"),
    ("deepseek-llm", "\u01c7 \u1fbc \u1ffc"),  # 'ࠀ-一' of the CJK regex holds U+1FBC
]
CASES = WORKED_EXAMPLES + RULES
GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "gguf" / "llama_splits.json"


@functools.cache
def llama_cpp_pieces() -> dict[tuple[str, str], list[str]]:
    """(pre, text) -> llama.cpp's pieces, frozen by tools/gen_llama_split_goldens.py (see the module docstring)."""
    rows = json.loads(GOLDEN.read_text(encoding="utf-8"))["rows"]
    return {(pre, text): pieces for pre, text, _, pieces in rows}


@pytest.mark.parametrize(("pre", "text"), CASES)
def test_pieces_equal_llama_cpp(pre: str, text: str) -> None:
    assert split(pre, text) == llama_cpp_pieces()[pre, text]


def test_golden_has_every_case() -> None:
    assert sorted(llama_cpp_pieces()) == sorted(CASES)


def test_digit_groups_glue_preceding_text() -> None:
    # llama_vocab.md 8.4 C-digits3: the custom splitter alone gives ab12, 345
    splitter = LlamaRegexSplit(["\\p{AFMoE_digits}"], byte_encode=False)
    assert splitter.pre_tokenize("ab12345") == ["ab12", "345"]


def test_collapse_regex_matches_unicode_cpp() -> None:
    assert collapse_regex("\\p{N}+") == "[\xd10-9]+"
    assert collapse_regex("[^\\s\\p{L}\\p{M}]") == "[^\\s\xd2A-Za-z\xd4]"
    assert collapse_regex("[\\p{P}\\$]") == "[\xd3!-#%-*,-/:-;?-@\\[-\\]_\\{\\}\\$]"
    assert collapse_regex("\\p{S}") == "[\xd5\\$\\+<->^`\\|\\~]"
    assert collapse_regex("\\p{Han}+") == "\\p{Han}+"


def test_collapse_text() -> None:
    assert collapse("a1 \u00e9\u0663\u3000\u00bf\u0301\u00a9\u200b\U000e0001") == "a1 \xd2\xd1\x0b\xd3\xd4\xd5\xd0\xd0"


def test_byte_encoding() -> None:
    pieces = LlamaRegexSplit(PRE_TYPES["gpt-2"].regexes).pre_tokenize("é \ud800")
    assert pieces == ["".join(BYTES_TO_CHARS[b] for b in "é".encode()),
                      BYTES_TO_CHARS[0x20] + "".join(BYTES_TO_CHARS[b] for b in b"\xed\xa0\x80")]


@pytest.mark.parametrize("pre", ["gpt-2", "llama3", "qwen2", "deepseek-llm", "kimi-k2", "afmoe", "gemma4", "default"])
def test_aligned_path_gives_the_fast_pieces(pre: str) -> None:
    splitter = LlamaRegexSplit(PRE_TYPES[pre].regexes, byte_encode=PRE_TYPES[pre].byte_encode)
    for text in edge_texts():
        fast = splitter.pre_tokenize(text)
        aligned = splitter.pre_tokenize_aligned(NormalizedString.from_original(text))
        assert [p.text for p in aligned] == fast, text
        if not splitter.byte_encode:
            assert [p.offsets(0, len(p.text)) for p in aligned] == [
                (sum(map(len, fast[:i])), sum(map(len, fast[:i + 1]))) for i in range(len(fast))]


def test_every_pre_type_covers_its_text() -> None:
    for entry in PRE_TYPES.values():
        splitter = LlamaRegexSplit(entry.regexes, byte_encode=False)
        for text in edge_texts():
            assert "".join(splitter.pre_tokenize(text)) == text, (entry.name, text)


def _data_tables() -> tuple[list[tuple[int, int]], set[int], dict[int, int]]:
    src = llama_cpp_source_path("unicode-data.cpp").read_text(encoding="utf-8")

    def table(name: str) -> str:
        start = src.index(name)
        return src[src.index("{", src.index("=", start)) + 1:src.index("};", start)]

    pair = re.compile(r"\{0x([0-9A-F]+), 0x([0-9A-F]+)\}")
    ranges = [(int(a, 16), int(b, 16)) for a, b in pair.findall(table("unicode_ranges_flags"))]
    spaces = {int(a, 16) for a in re.findall(r"0x([0-9A-F]+)", table("unicode_set_whitespace"))}
    lower = {int(a, 16): int(b, 16) for a, b in pair.findall(table("unicode_map_lowercase"))}
    return ranges, spaces, lower


def test_category_of_every_code_point_is_llama_cpps() -> None:
    ranges, spaces, lower = _data_tables()
    expected = bytearray(0x110000)
    for (start, flags), (end, _) in zip(ranges, ranges[1:]):
        expected[start:end] = bytes([flags]) * (end - start)
    assert [category_flags(c) & 0xFF for c in range(0x110000)] == list(expected)
    assert {c for c in range(0x110000) if category_flags(c) & 0x100} == spaces
    assert all(to_lower(c) == lower.get(c, c) for c in range(0x110000))
    assert category_flags(0x110000) == 0x01


def test_collapsed_text_of_every_code_point() -> None:
    ranges, spaces, _ = _data_tables()
    codes = {0x02: 0xD1, 0x04: 0xD2, 0x20: 0xD3, 0x10: 0xD4, 0x40: 0xD5}
    everything = "".join(map(chr, range(0x110000)))
    expected = []
    for (start, flags), (end, _) in zip(ranges, ranges[1:]):
        for c in range(start, end):
            expected.append(c if c < 128 else 0x0B if c in spaces else codes.get(flags, 0xD0))
    assert collapse(everything) == "".join(map(chr, expected))
