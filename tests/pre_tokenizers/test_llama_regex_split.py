"""LlamaRegexSplit against llama.cpp (llama-cpp-python 0.3.36, src/unicode.cpp).

Expected pieces are the worked examples of llama_vocab.md section 8.5, which were produced by
the compiled ``unicode_regex_split`` (spec: "[verified against the compiled splitter]"), plus
rules read off unicode.cpp where noted. The Unicode tables are checked, code point by code point,
against llama.cpp's ``src/unicode-data.cpp``, read from the llama-cpp-python sdist by
tests/fixtures.py ``llama_cpp_source_path`` (skipped, saying so, when PyPI cannot be reached).
End-to-end id parity with llama.cpp is the job of the GGUF golden files.
"""

from __future__ import annotations

import re

import pytest

from fixtures import edge_texts, llama_cpp_source_path
from polytok.byte_alphabet import BYTES_TO_CHARS
from polytok.normalized import NormalizedString
from polytok.pre_tokenizers.llama_pre_types import PRE_TYPES
from polytok.pre_tokenizers.llama_regex_split import (
    LlamaRegexSplit, category_flags, collapse, collapse_regex, to_lower)


def split(pre: str, text: str) -> list[str]:
    return LlamaRegexSplit(PRE_TYPES[pre].regexes, byte_encode=False).pre_tokenize(text)


WORKED_EXAMPLES = [  # llama_vocab.md 8.5
    ("gpt-4o", "ÄPFEL", ["Ä", "PFEL"]),
    ("gpt-4o", "ÉCOLE normale", ["É", "COLE", " normale"]),
    ("gpt-4o", "iPhone ÜBER", ["i", "Phone", " Ü", "BER"]),
    ("gpt-4o", "q\u0301x", ["q", "\u0301x"]),
    ("tiny_aya", "HelloWorld", ["HelloWorld"]),
    ("tiny_aya", "McDonald'S", ["McDonald'S"]),
    ("llama3", "DON'T", ["DON", "'T"]),
    ("llama3", "I'll  go\n\n now", ["I", "'ll", " ", " go", "\n\n", " now"]),
    ("llama3", "  \n  x", ["  \n", " ", " x"]),
    ("llama3", "a\r\n\r\nb", ["a", "\r\n\r\n", "b"]),
    ("gpt-2", "  \n  x", ["  \n ", " x"]),
    ("gpt-2", "a\r\n\r\nb", ["a", "\r\n\r", "\n", "b"]),
    ("gpt-2", "x\u00a0y", ["x", "\u00a0", "y"]),
    ("gpt-2", "a\u001cb", ["a", "\u001c", "b"]),
    ("deepseek-v3", "ab12345", ["ab", "123", "45"]),
    ("superbpe", "hello world 123", ["hello world ", "123"]),  # plus an empty piece, which gives no token
    ("exaone-moe", "hello world 123", ["hello world", " ", "1", "2", "3"]),
    ("gemma4", "a\u2581\u2581b\n", ["a\u2581\u2581b", "\n"]),
    ("afmoe", "ab12345", ["ab", "12", "345"]),  # 8.4 C-digits3 [verified]
    ("tiny_aya", "ab12345", ["ab", "12", "345"]),
]


@pytest.mark.parametrize(("pre", "text", "pieces"), WORKED_EXAMPLES)
def test_worked_examples(pre: str, text: str, pieces: list[str]) -> None:
    assert split(pre, text) == pieces


VERIFIED_WITH_LLAMA_CPP = [
    # Checked 2026-12-02 with llama-cpp-python 0.3.36 (vocab_only, add_bos=False, special=False) on
    # the vendored models/ggml-vocab-<name>.gguf: llama.cpp's ids equal the vocab tokens of these
    # pieces (byte-encoded). In the same way, the fixture edge texts plus ~30 multilingual ones
    # matched id for id for every pre type (the llama-bpe vocab re-labelled with each pre name
    # by gguf-py's gguf_new_metadata.py; gemma4/sarvam-moe on the gemma-4 vocab), BPE over
    # these splits with polytok's BPE; differences left only where the BPE model or the
    # special-token partition differ, not the split.
    ("llama3", "1234567", ["123", "456", "7"]),
    ("qwen2", "123", ["1", "2", "3"]),
    ("gpt-2", "'S", ["'", "S"]),  # C-gpt2 contractions are lower-case only
    ("deepseek-llm", "a \n", ["a", " ", "\n"]),  # S-w '$' is the chunk end
    # the llama-bpe vocab re-labelled with each pre name (gguf_new_metadata.py --pre-tokenizer);
    # llama.cpp's ids equal polytok's BPE over these pieces
    ("kimi-k2", "Hello世界abc's 12345 你好，世界！ こんにちは カタカナ 한국어",
     ["Hello", "世界", "abc's", " ", "123", "45", " ", "你好", "，", "世界", "！", " こんにちは", " カタカナ", " 한국어"]),
    ("kimi-k2", "a  \n\n  b\r\r  c   ", ["a", "  \n\n", " ", " b", "\r\r", " ", " c", "   "]),
    ("kimi-k2", "don't WON'T it'S we'Re", ["don't", " WON'T", " it'S", " we'Re"]),
    ("afmoe", "1 12 123 1234 12345 123456",
     ["1", " ", "12", " ", "123", " ", "1", "234", " ", "12", "345", " ", "123", "456"]),
    ("chameleon", "IMGIMGABCZ <sentinel:12> 12:30",
     ["IMGIMGABCZ", " ", "<", "sentinel", ":", "1", "2", ">", " ", "1", "2", ":", "3", "0"]),
    ("youtu", "Hello世界abc's 12345 你好，世界！ こんにちは カタカナ 한국어",
     ["Hello", "世界", "abc's", " ", "1", "2", "3", "4", "5", " ", "你好", "，", "世界", "！", " ", "こんにちは", " ",
      "カタカナ", " ", "한국어"]),
    ("deepseek-llm", "Ǉ ᾼ ῼ", ["Ǉ", " ", "ᾼ", " ", "ῼ"]),  # 'ࠀ-一' of the CJK regex holds U+1FBC
]


@pytest.mark.parametrize(("pre", "text", "pieces"), VERIFIED_WITH_LLAMA_CPP)
def test_verified_with_llama_cpp(pre: str, text: str, pieces: list[str]) -> None:
    assert split(pre, text) == pieces


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
