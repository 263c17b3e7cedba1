"""The frozen character classes (polytok.text.chars) against the live `tokenizers`.

A sample of code points runs by default (every range edge of each table and
its neighbours, plus a random sample); ``-m slow`` checks every code point.
"""

from __future__ import annotations

import random

import pytest

from polytok.pre_tokenizers.unicode_scripts import fixed_script
from polytok.pre_tokenizers.unicode_scripts_table import SCRIPT_RANGES
from polytok.text import char_classes, chars

from ._helpers import reference

ALL = [c for c in range(0x110000) if not 0xD800 <= c < 0xE000]


def _sample() -> list[int]:
    edges = {c + d for table in (char_classes.PUNCTUATION, char_classes.NUMERIC, char_classes.WORD)
             for first, last in table for c in (first, last) for d in (-1, 0, 1)}
    edges |= {c + d for first, last, _ in SCRIPT_RANGES for c in (first, last) for d in (-1, 0, 1)}
    edges |= set(random.Random(15).sample(ALL, 20000))
    return sorted(c for c in edges if 0 <= c < 0x110000 and not 0xD800 <= c < 0xE000)


def _check(points: list[int]) -> None:
    punct = reference({"type": "Punctuation", "behavior": "Removed"})
    digits = reference({"type": "Digits", "individual_digits": True})
    words = reference({"type": "Whitespace"})
    split = reference({"type": "WhitespaceSplit"})
    bad = []
    for c in points:
        ch = chr(c)
        if (punct.pre_tokenize_str("a" + ch + "a") == [("a", (0, 1)), ("a", (2, 3))]) != chars.is_punctuation(ch):
            bad.append(f"punctuation U+{c:04X}")
        if (len(digits.pre_tokenize_str("a" + ch + "a")) == 3) != chars.is_numeric(ch):
            bad.append(f"numeric U+{c:04X}")
        if (words.pre_tokenize_str("a" + ch) == [("a" + ch, (0, 2))]) != chars.is_word(ch):
            bad.append(f"word U+{c:04X}")
        if (split.pre_tokenize_str(ch) == []) != chars.is_whitespace(ch):
            bad.append(f"whitespace U+{c:04X}")
    assert not bad, f"{len(bad)} differ: {bad[:10]}"


def test_sampled_code_points():
    _check(_sample())


def test_scripts_sampled():
    scripts = reference({"type": "UnicodeScripts"})
    bad = []
    for c in _sample()[::3]:
        for other in ("a", "日", "1"):
            hf_same = len(scripts.pre_tokenize_str(other + chr(c))) == 1
            ours_same = fixed_script(chr(c)) in ("Any", fixed_script(other))
            if hf_same != ours_same:
                bad.append(f"U+{c:04X} after {other!r}")
    assert not bad, f"{len(bad)} differ: {bad[:10]}"


@pytest.mark.slow
def test_every_code_point():
    _check(ALL)


@pytest.mark.parametrize("name", ["PUNCTUATION", "NUMERIC", "WORD"])
def test_regex_sets_equal_the_frozen_classes(name):
    import regex

    every = "".join(map(chr, ALL))
    got = set(map(ord, regex.findall(chars.regex_set(name), every, flags=regex.V1)))
    want = {c for first, last in getattr(char_classes, name) for c in range(first, last + 1)}
    assert got == want


@pytest.mark.parametrize("name", ["PUNCTUATION", "NUMERIC", "WORD"])
def test_stored_regex_sets_are_what_the_pinned_regex_measures(name: str) -> None:
    # the stored sets spare every process the measurement; they must be exactly what the
    # installed `regex` gives (tools/gen_regex_sets.py rewrites them for a new pin)
    import regex

    from polytok.text import regex_sets

    assert regex.__version__ == regex_sets.REGEX_VERSION, "regex's pin changed: run tools/gen_regex_sets.py"
    assert regex_sets.SETS[name] == chars.measure_regex_set(name)


def test_another_regex_release_is_measured(monkeypatch: pytest.MonkeyPatch) -> None:
    from polytok.text import regex_sets

    monkeypatch.setattr(regex_sets, "REGEX_VERSION", "0.0")
    monkeypatch.setattr(regex_sets, "SETS", {})
    chars.regex_set.cache_clear()
    try:
        assert chars.regex_set("NUMERIC") == chars.measure_regex_set("NUMERIC")
    finally:
        chars.regex_set.cache_clear()
