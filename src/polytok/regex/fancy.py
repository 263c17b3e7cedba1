"""Rust ``fancy-regex`` patterns (tiktoken's ``pat_str``, Mistral tekken's ``pattern``) run with `regex`.

tiktoken 0.14.0 compiles its pattern with ``fancy_regex::Regex::new`` (src/lib.rs,
``CoreBPE::new_internal``) and walks it with ``find_iter`` (``encode_ordinary``);
only the matches become pieces, the text between them is dropped. Both engines
are backtracking, leftmost-first, with possessive quantifiers, atomic groups and
look-around, so a pattern reads the same in both except for:

- ``$`` (outside a class): end of the text in Rust (no multi-line flag), while
  Python's also matches before a final newline → ``\\Z``; Rust's ``\\z`` → ``\\Z``;
  fancy-regex's ``\\Z`` (end of the text, or before the newlines that end it,
  src/vm.rs ``EndTextIgnoreTrailingNewlines``) → ``(?=\\n*\\Z)``.
- character classes: nested classes, ``&&`` / ``--`` / ``~~``, ASCII classes and
  fancy-regex's rewriting of escapes in them (`regex.fancy_class`), written as
  `regex` version 1 sets; so the whole pattern is compiled as version 1
  (``(?V1-f)``: with simple case folding, as Rust's ``(?i)``; version 1 also
  scopes an inline flag to its group, as Rust does).
- escapes outside a class: hex escapes become the character; ``\\h``, and
  the Oniguruma property names fancy-regex rewrites (``\\p{alnum}``…), become
  their classes. Constructs whose meaning would differ in `regex` (``\\<``,
  ``\\>``, ``\\b{…}``, ``\\k``, ``\\K``, ``\\G``, ``\\R``, ``\\O``,
  ``\\N``, ``\\g``, back-references past ``\\9``, the flags ``m``, ``x``,
  ``U``, ``R``, ``-u``) raise `FormatError` naming the position.
- Unicode data: the Rust ``regex-syntax`` tables tiktoken 0.14.0 was built with
  are older than `regex`'s (2026.5.9). Measured on every code point (outside the
  surrogates) through tiktoken itself, for ``\\p{L}``, ``\\p{N}``, ``\\p{Lu}``,
  ``\\p{Lt}``, ``\\p{Lm}``, ``\\p{Lo}``, ``\\p{M}``, ``\\p{Ll}``, ``\\d``, ``\\w``,
  ``\\s``, ``\\S``, ``(?i:'s|'t|'re|'ve|'m|'ll|'d)``, ``\\p{Han}`` and Kimi K2's
  ``[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}&&[^\\p{Han}]]`` and
  ``[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}&&[^\\p{Han}]]``: `regex` differs on ~4,700
  code points, and they are exactly the ones `regex.oniguruma.OnigPattern`
  replaces by stand-ins for HF's onig (the same Unicode version), so a fancy
  pattern runs through the same `OnigPattern` view. After it the two agree on
  every code point (tests/formats/test_tiktoken_regex.py; the full sweep is
  marked slow).
- ``\\s`` is Unicode White_Space in both; ``(?i)`` uses simple case folding in
  both (``ſ`` matches ``s``, ``K`` (Kelvin) matches ``k``), but `regex` also pairs
  ``İ`` with ``i`` and ``ı`` with ``I``: outside a class these four are written
  case-sensitively (``(?i)i`` → ``(?-i:[iI])``); a class under ``(?i)`` that
  holds one of them, and a Unicode property under ``(?i)`` (which `regex` reads as
  any cased letter), raise `FormatError` (`regex.fancy_class.FOLDING_DIFFERS`).
"""

from __future__ import annotations

from functools import lru_cache

import regex

from ..errors import FormatError
from .fancy_class import FOLDING_DIFFERS, literal, read_escape, translate_class, translate_class_text, unsupported
from .guard import needs_bound
from .oniguruma import OnigPattern

__all__ = ["compile_fancy", "translate_fancy"]

_VERSION = "(?V1-f)"  # version 1 sets, simple case folding
# escapes outside a class that `regex` reads as fancy-regex does, or is told to
_ASSERTIONS = {"A": r"\A", "z": r"\Z", "Z": r"(?=\n*\Z)", "b": r"\b", "B": r"\B"}
# fancy-regex escapes (outside a class) that `regex` lacks or reads otherwise
_REFUSED = {"<": "a word-start assertion", ">": "a word-end assertion", "k": "a named back-reference",
            "K": "\\K", "G": "\\G", "R": "\\R", "O": "\\O", "N": "\\N", "g": "a subroutine call"}
_FLAGS = frozenset("imsxuUR-")


def translate_fancy(pattern: str) -> str:
    """The `regex`-module spelling (version 1) of a Rust (fancy-)regex pattern (see the module notes).

    Raises:
        FormatError: a construct polytok cannot read as tiktoken does, naming its position.
    """
    out: list[str] = [_VERSION]
    i, n = 0, len(pattern)
    casei, outer = False, []  # whether (?i) is on here; its value outside each open group
    while i < n:
        c = pattern[i]
        if c == "\\":
            text, i = _escape(pattern, i, casei)
        elif c == "[":
            text, i = translate_class(pattern, i, casei)
        elif c == "$":
            text, i = r"\Z", i + 1
        elif c == "(":
            text, i, opens, casei_after = _group_open(pattern, i, casei)
            if opens:
                outer.append(casei)
            casei = casei_after
        elif c == ")":
            text, i = c, i + 1
            casei = outer.pop() if outer else casei
        else:
            text, i = _fold_exact(c) if casei and c in FOLDING_DIFFERS else c, i + 1
        out.append(text)
    return "".join(out)


def _fold_exact(char: str) -> str:
    """Under (?i), one of the four characters whose case folding `regex` reads otherwise
    (`regex.fancy_class.FOLDING_DIFFERS`), spelt out case-sensitively: Rust pairs only i and I."""
    return "(?-i:[iI])" if char in "iI" else f"(?-i:{literal(char)})"


def _escape(pattern: str, i: int, casei: bool) -> tuple[str, int]:
    e = pattern[i + 1:i + 2]
    if e in _ASSERTIONS:
        if e in "bB" and regex.match(r"\{(?![\d,])", pattern[i + 2:]):
            raise unsupported("a \\b{...} word-boundary assertion", pattern, i)
        return _ASSERTIONS[e], i + 2
    if e in _REFUSED:
        raise unsupported(f"{_REFUSED[e]} (not translated to the regex module)", pattern, i)
    if e and e in "0123456789":
        if e == "0" or pattern[i + 2:i + 3].isdigit():
            raise unsupported("a back-reference other than \\1-\\9", pattern, i)
        return pattern[i:i + 2], i + 2
    char, inner, end = read_escape(pattern, i, in_class=False)
    if char is not None:
        return _fold_exact(char) if casei and char in FOLDING_DIFFERS else literal(char), end
    assert inner is not None
    if inner.startswith("["):
        return translate_class_text(inner, pattern, i, casei), end
    if casei and inner[1] in "pP":
        raise unsupported(f"the Unicode property {inner} under (?i) (`regex` reads it as any cased letter of "
                          "it, Rust folds the set)", pattern, i)
    return inner, end


def _group_open(pattern: str, i: int, casei: bool) -> tuple[str, int, bool, bool]:
    """An open parenthesis: ``(text, end, whether a group opens, whether (?i) is on after it)``.

    Inline flags are checked: only ``i``, ``s`` and ``u`` (a no-op) read the same in `regex`.
    """
    if not pattern.startswith("(?", i):
        return "(", i + 1, True, casei
    j = i + 2
    while j < len(pattern) and pattern[j] in _FLAGS:
        j += 1
    flags, closing = pattern[i + 2:j], pattern[j:j + 1]
    if not flags or closing not in (":", ")"):
        return "(?", i + 2, True, casei  # (?:, (?=, (?<!, (?P<name>…
    on, _, off = flags.partition("-")
    refused = sorted(set(flags) - set("isu-") | ({"-u"} if "u" in off else set()))
    if refused or flags.endswith("-"):
        raise unsupported(f"the inline flags {flags} (not translated to the regex module)", pattern, i)
    after = ("i" in on or casei) and "i" not in off
    kept = flags.replace("u", "")  # (?u) changes nothing: Unicode is on
    text = "(?" + kept + closing if kept.strip("-") else ("(?:" if closing == ":" else "")
    return text, j + 1, closing == ":", after


@lru_cache(maxsize=64)
def compile_fancy(pattern: str, key: str = "pattern") -> OnigPattern:
    """Compile a fancy-regex pattern; one that does not compile, or that polytok cannot translate, names `key`."""
    try:
        native = regex.compile(translate_fancy(pattern))
    except FormatError as exc:
        raise FormatError(exc.reason, key=key) from None
    except (regex.error, ValueError, OverflowError) as exc:
        raise FormatError(f"invalid regular expression {pattern!r}: {exc}", key=key) from None
    return OnigPattern(native, pattern, needs_bound(native, pattern))
