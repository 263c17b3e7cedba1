"""The compiled split scanners (`polytok._kernels.split`) against the pure path's `regex` findall.

For every known pattern (`polytok.regex.scanners`) in every dialect it is known in, the
scanner's pieces must equal ``findall`` of the pattern as the pure path compiles it
(`compile_onig` / `compile_fancy`), on the bench corpora, the edge texts, every code point
in many contexts, and hypothesis text; then whole tokenizers built on the compiled path must
give the pure path's ids on every fixture that uses those patterns.
"""

from __future__ import annotations

import os
import pickle
import re
from array import array
from functools import cache, partial

import pytest
import regex
from fixtures import HF_JSON_FIXTURES, bench_slice, edge_texts, fixture_path, gguf_vocab_path
from hypothesis import given, settings
from hypothesis import strategies as st

import polytok
import polytok.kernels
from kernels._compiled import compiled
from polytok.pre_tokenizers import llama_regex_split as llama_split
from polytok.pre_tokenizers.split_behavior import RegexSplitter
from polytok.regex.fancy import compile_fancy
from polytok.regex.oniguruma import OnigPattern, compile_onig
from polytok.regex.scanners import _SOURCES, KNOWN, scanner_for

EXAMPLES = int(os.environ.get("POLYTOK_MAX_EXAMPLES", "150"))
CASES = [(name, dialect, source) for source, dialects, name in _SOURCES for dialect in dialects]
IDS = [f"{name}-{dialect}-{k}" for k, (name, dialect, _) in enumerate(CASES)]
LIMIT = 0x110000


def _pattern(dialect: str, source: str) -> OnigPattern:
    return compile_onig(source) if dialect == "onig" else compile_fancy(source)


def _assert_same(name: str, dialect: str, source: str, texts: list[str]) -> None:
    split = compiled("split")
    pattern = _pattern(dialect, source)
    scanner = split.SCANNERS[name]
    for text in texts:
        expected = pattern.findall(text)
        actual = split.scan(scanner, text)
        if actual != expected:
            k = next((k for k, (a, b) in enumerate(zip(actual, expected, strict=False)) if a != b),
                     min(len(actual), len(expected)))
            pytest.fail(f"{name} ({dialect}) differs from regex at piece {k} of {text[:60]!r}: "
                        f"scanner {actual[max(0, k - 2):k + 3]!r}, regex {expected[max(0, k - 2):k + 3]!r}")


def test_tables_come_from_the_installed_regex():
    assert regex.__version__ == compiled("split").REGEX_VERSION, "run tools/gen_split_tables.py"


@cache
def _expected_bits() -> bytes:
    split = compiled("split")
    text = "".join(map(chr, range(LIMIT)))
    bits = bytearray(LIMIT)
    for bit, cls in [(split.L, r"\p{L}"), (split.N, r"\p{N}"), (split.WS, r"\s"),
                     (split.UP, r"[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]"), (split.LO, r"[\p{Ll}\p{Lm}\p{Lo}\p{M}]")]:
        members = [m.start() for m in compile_onig(cls).finditer(text)]
        assert [m.start() for m in compile_fancy(cls).finditer(text)] == members, cls
        for cp in members:
            bits[cp] |= bit
    return bytes(bits)


def test_every_code_point_has_the_bits_regex_gives_it():
    split = compiled("split")
    expected = _expected_bits()
    actual = bytes(map(split.char_bits, range(LIMIT)))
    if actual != expected:
        cp = next(cp for cp in range(LIMIT) if actual[cp] != expected[cp])
        pytest.fail(f"U+{cp:04X}: table bits {actual[cp]:#x}, regex {expected[cp]:#x}")


def test_every_known_pattern_is_recognised():
    assert set(KNOWN.values()) == set(compiled("split").SCANNERS)
    for name, dialect, source in CASES:
        pattern = _pattern(dialect, source)
        assert scanner_for(pattern) is not None, (name, dialect)
        assert KNOWN[pattern.native.pattern] == name
    assert scanner_for(compile_onig(r"\p{L}+|\s+")) is None
    assert scanner_for(compile_onig(CASES[0][2] + "|x")) is None
    with polytok.kernels.pure_path():
        assert scanner_for(_pattern(CASES[0][1], CASES[0][2])) is None


def test_a_splitter_with_a_scanner_pickles():
    splitter = RegexSplitter(compile_onig(CASES[0][2]), "isolated")
    assert isinstance(splitter._findall, partial)
    again = pickle.loads(pickle.dumps(splitter))
    text = "it's 12 o'clock"
    assert again.pieces(text) == splitter.pieces(text) == ["it", "'s", " 12", " o", "'", "clock"]


@cache
def _bench_texts() -> tuple[str, ...]:
    try:
        return tuple(bench_slice(name, 10**9) for name in ("en", "code", "multi"))
    except pytest.skip.Exception:
        return ()


@pytest.mark.parametrize(("name", "dialect", "source"), CASES, ids=IDS)
def test_bench_corpora_whole(name, dialect, source):
    texts = list(_bench_texts())
    if not texts:
        pytest.skip("../shared/fixtures (the bench corpora) is absent")
    _assert_same(name, dialect, source, texts)


# the apostrophe in every case and spelling, runs of each kind of white space, digits of other scripts
HAND_TEXTS = [
    "", "a", " ", "  ", "\n", "'", "''", "'s", "'S", "'ſ", "'st", "'re", "'RE", "'Re", "'rE", "'ve", "'VE", "'ll",
    "'LL", "'lL", "'d", "'D", "'m", "'M", "'t", "'T", "'x", "x's", "X'S", "XS'S", "it's", "IT'S", "You'LL", "'ſt",
    "we'Ve", "x'", "x''s", "x '", "a'\n", "HELLOworld", "helloWORLD", "HeLLo", "Ǆemo ǅemo ǆemo", "ʰʰa", "ĲŒ",
    "ABCdef'Ll GH'S", "a\u0301b\u0301", "\u0301", "\u0301\u0301A", "A\u0301", " \u0301a", "\u0301'S", "ǅ'd",
    "123", "1234567", " 12345", "١٢٣٤٥", "߀߁߂߃", "Ⅻ½³", "x1y22z333w4444", "𝟘𝟙𝟚𝟛𝟜",
    "a  b", "a   b", "a \n b", " \n\n ", "\r\n", "a\r\n\r\nb", "\t\t x", "\u00a0\u00a0x", "x\u2028y", "\u2029",
    "\u3000\u3000a", "\x1c\x1d\x1e\x1f", "\x85", " \x85x", "a \n", "a  ", " ", "\n \n x", " !!\n\n/x",
    "!/\n/\r/", "a /b", " ?", " ?!\r\n", "x\ud800y", "\udfff", "\ud83d\ude00", " \ud800", "'\ud800", "😀😀 😀",
    "𝐇𝐞𝐥𝐥𝐨", "ℌello", "\U000e0041", "\U0010ffff", "\x00'\x00s", "\x00", "a\x00b",
    "ßẞ ﬁ ﬀ", "İstanbul ıi", "Ωmega ΣΑΣ", "ᾼ ᾳ", "𐐀𐐨", "\u0c5c\u0295", "Kelvin \u212a 's",
]


@pytest.mark.parametrize(("name", "dialect", "source"), CASES, ids=IDS)
def test_edge_and_hand_texts(name, dialect, source):
    texts = edge_texts() + HAND_TEXTS
    texts += [a + b for a in HAND_TEXTS[:60] for b in HAND_TEXTS[40:]]
    _assert_same(name, dialect, source, texts)


@cache
def _code_point_texts() -> tuple[str, ...]:
    """At least one string per 256-code-point block, and every code point at a table boundary
    (whose bits differ from the one before it) with its neighbours, each in many contexts."""
    bits = _expected_bits()
    picked: set[int] = set(range(0, LIMIT, 64))
    for cp in range(1, LIMIT):
        if bits[cp] != bits[cp - 1]:
            picked.update((cp - 1, cp))
    order = sorted(picked)
    texts = []
    for at in range(0, len(order), 256):
        chunk = "".join(map(chr, order[at:at + 256]))
        texts.append("".join(f"{c}{c} {c}'{c}a{c}A{c}1{c}\n{c}  {c}'s{c}" for c in chunk))
        texts.append(chunk)
    return tuple(texts)


@pytest.mark.parametrize(("name", "dialect", "source"), CASES, ids=IDS)
def test_every_code_point_in_context(name, dialect, source):
    _assert_same(name, dialect, source, list(_code_point_texts()))


_CHARS = st.one_of(
    st.sampled_from(list("aAzZsStTrReEvVlLmMdDſ'’ \t\n\r/!?.,-_0123456789")
                    + ["\u00a0", "\u2028", "\u3000", "\x85", "\x0b", "\x1c", "\u0301", "\u0308", "\u20dd",
                       "ǅ", "ʰ", "ß", "İ", "ı", "Ω", "σ", "Ж", "ж", "中", "ア", "١", "٣", "߂", "Ⅻ", "½", "𝟙",
                       "😀", "𐐀", "𐐨", "\U000e0001", "\ud800", "\udc00", "\u0c5c", "\u0295", "\U0010ffff"]),
    st.characters(codec=None),
)
_TEXT = st.lists(st.one_of(_CHARS, st.sampled_from(["'s", "'LL", "'Re", "\r\n", "  ", " \n ", "123456"])),
                 max_size=40).map("".join)


@settings(max_examples=EXAMPLES, deadline=None)
@given(texts=st.lists(_TEXT, min_size=1, max_size=8))
def test_hypothesis_text(texts):
    for name, dialect, source in CASES:
        _assert_same(name, dialect, source, texts)


def test_scan_refuses_bad_arguments():
    split = compiled("split")
    with pytest.raises(ValueError):
        split.scan(99, "x")
    with pytest.raises(ValueError):
        split.scan(-1, "x")
    with pytest.raises(TypeError):
        split.scan(0, b"x")
    with pytest.raises(TypeError):
        split.scan(0)
    assert split.scan(0, "") == []


def test_long_runs_are_linear_and_exact():
    texts = [" " * 200_000 + "x", "\n" * 100_000 + " " * 100_000 + "y", "A" * 200_000 + " ", "a" * 200_000,
             "'" * 100_001 + "s", "1" * 100_000, "\u0301" * 100_000 + "A" * 100_000 + "!"]
    for name, dialect, source in CASES[::2]:
        _assert_same(name, dialect, source, texts)


# --- end to end: every fixture whose pre-tokenizer uses a known pattern --------------------

HF_NAMES = ["gpt2", "roberta-base", "whisper-tiny", "claude", "falcon", "clip", "llama3", "qwen3", "gpt4o",
            "olmo-dolma2"]
RANK_FILES = [("cl100k_base-tiktoken", "cl100k_base.tiktoken"), ("whisper-gpt2-tiktoken", "gpt2.tiktoken"),
              ("llama3-tiktoken", "tokenizer.model"), ("llama4-tiktoken", "tokenizer.model")]
TEKKEN = ["tekken-240718", "tekken-240911"]
FILES = ([(name, HF_JSON_FIXTURES[name]) for name in HF_NAMES] + RANK_FILES
         + [(name, "tekken.json") for name in TEKKEN])


@cache
def _e2e_texts() -> tuple[str, ...]:
    slices = [text[at:at + 20_000] for text in _bench_texts() for at in (0, len(text) // 2)]
    return tuple(edge_texts() + HAND_TEXTS + slices)


def _scanners(tok: polytok.Tokenizer) -> list[object]:
    """The compiled scanners the tokenizer's pre-tokenizers split with."""
    found, todo = [], [tok.pre_tokenizer]
    while todo:
        pre = todo.pop()
        todo += getattr(pre, "pretokenizers", [])
        splitter = getattr(pre, "_splitter", None)
        if isinstance(splitter, RegexSplitter) and isinstance(splitter._findall, partial):
            found.append(splitter._findall)
    return found


@pytest.mark.parametrize(("name", "filename"), FILES, ids=[n for n, _ in FILES])
def test_compiled_equals_pure_encode(name, filename):
    compiled("split")
    path = fixture_path(name, filename)
    fast = polytok.load(path)
    with polytok.kernels.pure_path():
        pure = polytok.load(path)
    assert _scanners(fast) and not _scanners(pure), "the fixture's pattern should run through a scanner"
    for text in _e2e_texts():
        for special in ("parse", "text"):
            try:
                expected = pure.encode(text, special=special)
            except polytok.PolytokError as exc:
                with pytest.raises(type(exc)):
                    fast.encode(text, special=special)
                continue
            assert fast.encode(text, special=special) == expected, (name, special, text[:80])


# --- llama.cpp's GGUF splitters: the same scanners over its collapsed text -------------------

LLAMA_TRIGGERS = sorted(llama_split._SCANNERS.items())
LLAMA_IDS = [f"{name}-{k}" for k, (_, name) in enumerate(LLAMA_TRIGGERS)]


def test_collapsed_table_is_what_re_reads():
    split = compiled("split")
    for bit, cls in [(split.L, r"\p{L}"), (split.N, r"\p{N}"), (split.WS, r"\s")]:
        pattern = re.compile(llama_split.collapse_regex(cls), re.ASCII)
        for code in range(256):
            assert bool(split.collapsed_bits(code) & bit) == bool(pattern.fullmatch(chr(code))), (cls, code)


def _assert_same_collapsed(trigger: str, name: str, texts: list[str]) -> None:
    split = compiled("split")
    pattern = re.compile(llama_split.collapse_regex(llama_split._SPLITTER_REGEXES[trigger]), re.ASCII)
    for text in texts:
        view = llama_split.collapse(text)
        cuts = [(0, len(view))] if view else []
        if len(view) > 8:  # chunks, as earlier regexes of a list leave them
            cuts = [(0, len(view) // 3), (len(view) // 3, len(view) // 3), (len(view) // 3, len(view))]
        for start, end in cuts:
            chunks = array("q", [start, end])
            expected = llama_split._regex_chunks(pattern, view, chunks)
            actual = llama_split._scanned_chunks(split.scan_collapsed, split.SCANNERS[name], view, chunks)
            assert actual == expected, (name, text[:60], start, end)


@pytest.mark.parametrize(("trigger", "name"), LLAMA_TRIGGERS, ids=LLAMA_IDS)
def test_llama_collapsed_texts(trigger, name):
    every_byte = "".join(map(chr, range(256)))
    contexts = "".join(f"{c}{c} {c}'{c}a{c}A{c}1{c}\n{c}  {c}'s{c}'S" for c in every_byte)
    texts = list(_bench_texts()) + edge_texts() + HAND_TEXTS + [every_byte, contexts]
    texts += [a + b for a in HAND_TEXTS[:60] for b in HAND_TEXTS[40:]]
    _assert_same_collapsed(trigger, name, texts)


@settings(max_examples=EXAMPLES, deadline=None)
@given(texts=st.lists(_TEXT, min_size=1, max_size=8))
def test_llama_collapsed_hypothesis(texts):
    for trigger, name in LLAMA_TRIGGERS:
        _assert_same_collapsed(trigger, name, texts)


def test_scan_collapsed_refuses_bad_arguments():
    split = compiled("split")
    with pytest.raises(TypeError):
        split.scan_collapsed(0, "\u0100", 0, 1)
    for start, end in [(-1, 1), (2, 1), (0, 4)]:
        with pytest.raises(ValueError):
            split.scan_collapsed(0, "abc", start, end)
    with pytest.raises(ValueError):
        split.scan_collapsed(7, "abc", 0, 3)
    assert split.scan_collapsed(0, "abc", 1, 1) == b""


GGUF_NAMES = ["gpt-2", "llama-bpe", "qwen2", "mpt", "falcon", "command-r", "starcoder", "refact", "aquila"]


@pytest.mark.parametrize("name", GGUF_NAMES)
def test_gguf_compiled_equals_pure_encode(name):
    compiled("split")
    path = gguf_vocab_path(name)
    fast = polytok.load(path)
    with polytok.kernels.pure_path():
        pure = polytok.load(path)
    uses = [step for pre in [fast.pre_tokenizer, *getattr(fast.pre_tokenizer, "pretokenizers", [])]
            if isinstance(pre, llama_split.LlamaRegexSplit) for _, step in pre._steps]
    assert any(isinstance(step, partial) and step.func is llama_split._scanned_chunks for step in uses)
    for text in _e2e_texts():
        for special in ("parse", "text"):
            assert fast.encode(text, special=special) == pure.encode(text, special=special), (name, text[:80])
