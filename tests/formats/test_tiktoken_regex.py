"""tiktoken's patterns (Rust fancy-regex) through polytok's `regex.fancy`, against tiktoken 0.14.0 live.

Each check builds the same pattern on both sides over a byte-only rank table (every
byte its own token), so the ids spell exactly the matched text: tiktoken's matches are
``bytes(encode_ordinary(text))``, polytok's the pieces of ``Split(dialect="fancy")``.
The Unicode sweep runs each property class over every code point (outside the
surrogates), in chunks: a sample of chunks by default, all of them with ``-m slow``.
"""

from __future__ import annotations

import functools

import pytest
import tiktoken

from polytok.formats.tiktoken import build_tiktoken
from polytok.formats.tiktoken_known import KNOWN_RANKS
from polytok.regex.fancy import compile_fancy, translate_fancy

BYTES = {bytes([b]): b for b in range(256)}
CLASSES = [r"\p{L}", r"\p{N}", r"\p{Lu}", r"\p{Lt}", r"\p{Lm}", r"\p{Lo}", r"\p{M}", r"\p{Ll}", r"\d", r"\w",
           r"\s", r"\S", r"[^\r\n\p{L}\p{N}]", r"[^\s\p{L}\p{N}]", r"(?i:'s|'t|'re|'ve|'m|'ll|'d)",
           # Kimi K2's (class set operations, see test_tiktoken_class_sets.py)
           r"\p{Han}", r"[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}&&[^\p{Han}]]", r"[\p{Ll}\p{Lm}\p{Lo}\p{M}&&[^\p{Han}]]"]
CODE_POINTS = [c for c in range(0x110000) if not 0xD800 <= c < 0xE000]
CHUNK = 4096
CHUNKS = range(0, len(CODE_POINTS), CHUNK)
# by default: the chunks holding the code points where `regex`'s own tables differ from
# tiktoken's (measured: U+0295, U+088F, U+0C5C…, U+A7CE…, U+10940…, U+11DE0…, U+16EA0…,
# U+1E6FF…) and the Han blocks, then every 16th chunk
_DIFFERING = (0x0295, 0x088F, 0x0C5C, 0x1ACF, 0xA7CE, 0x10940, 0x10EC5, 0x11DD9, 0x11DE0, 0x16EA0, 0x16FF2,
              0x1E6FF, 0x20000, 0x31350, 0x323B0,
              0x3005, 0x3400, 0x4E00, 0x9FFF, 0xF900, 0x2EBF0)  # Han: the ideographs and the blocks around them
SAMPLE = sorted({CODE_POINTS.index(c) // CHUNK * CHUNK for c in _DIFFERING} | set(CHUNKS[::16]))


@functools.cache
def _engines(pattern: str):
    ref = tiktoken.Encoding("bytes", pat_str=pattern, mergeable_ranks=BYTES, special_tokens={})
    return compile_fancy(pattern), ref


def _chunk_text(cls: str, start: int) -> str:
    text = "".join(map(chr, CODE_POINTS[start:start + CHUNK]))
    return "".join("'" + c for c in text) if "'" in cls else text


def _check_chunks(starts) -> None:
    for cls in CLASSES:
        mine, ref = _engines(cls)
        for start in starts:
            text = _chunk_text(cls, start)
            expected = bytes(ref.encode_ordinary(text)).decode("utf-8")
            got = "".join(mine.findall(text))
            if got != expected:
                differing = sorted(set(got) ^ set(expected))
                pytest.fail(f"{cls}: {len(differing)} code points differ from tiktoken, e.g. "
                            + ", ".join(f"U+{ord(c):04X}" for c in differing[:10]))


def test_unicode_classes_match_tiktoken_sampled():
    _check_chunks(SAMPLE)


@pytest.mark.slow
def test_unicode_classes_match_tiktoken_every_code_point():
    _check_chunks(CHUNKS)


TEXTS = ["x\n", "ab \n", "ab\n\n", "a  \nb", "  ", " \n \n", "x", "It's ŉ 'S 'ſ 'K 'K", "\t\u00a0\u2028\u3000x",
         "I'M HERE 'LL 'Re 'vE", "a1234567 89\r\n\r\n  /x/ \n\n", "ǅungla Ǆ ǆ", "e\u0301\u0301x"]


@pytest.mark.parametrize("pattern", [r"x$|.", r"\w+$|\w+\n|.", r"\s+$|\S+|\s", r"\s++$|\s+(?!\S)|\s|\S+", r"(?s:.)",
                                     r"x\z|.", *sorted({row.pattern for row in KNOWN_RANKS.values()})])
def test_patterns_split_as_tiktoken(pattern):
    _, ref = _engines(pattern)
    tok = build_tiktoken(list(BYTES), range(256), pattern, {}, source="bytes")
    for text in TEXTS:
        assert tok.encode(text) == ref.encode_ordinary(text), (pattern, text)


def test_dollar_is_end_of_text():
    assert translate_fancy(r"\s++$") == r"(?V1-f)\s++\Z"
    assert translate_fancy(r"[$]\$") == r"(?V1-f)[\$]\$"
    assert translate_fancy(r"[]$]|[^]$]") == r"(?V1-f)[\]\$]|[^\]\$]"
