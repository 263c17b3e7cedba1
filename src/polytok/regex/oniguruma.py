"""Oniguruma (Ruby syntax) patterns from tokenizer files, run with the `regex` module.

HF tokenizers 0.23.3 compiles every ``{"Regex": …}`` pattern of ``Split``,
``Replace`` (normalizer and decoder) and the ByteLevel GPT-2 pattern with the
onig crate (``tokenizers/src/utils/onig.rs``, Ruby syntax), and walks matches
with onig's ``find_iter``; ``tokenizer/pattern.rs`` turns them into a covering
list of ``((start, end), is_match)`` pieces. This module translates the few
constructs whose meaning differs in Python's `regex` (table in
reference/hf_tokenizers.md §3.5) and reproduces onig's iteration over empty
matches (§3.4).

Translations (upstream construct → polytok):
- ``\\w``, ``\\d`` (and ``\\W``, ``\\D``) → the exact sets onig
  matches, measured through the reference and frozen in `polytok.regex.oniguruma_classes`
  (onig's ``\\w`` is Alphabetic, M, Nd, Pc plus ``²³¹¼½¾``, from an older Unicode
  than `regex`'s; `regex`'s own ``\\w`` differs on thousands of code points).
- ``\\h`` / ``\\H`` → hex digit class / its complement.
- ``^`` → ``^(?!\\z)`` with MULTILINE: onig's ``^`` is always a line anchor but
  does not match at the very end of a string ending in a newline.
- ``$`` → ``$`` with MULTILINE (end of any line).
- ``\\Z`` → ``(?=\\n?\\z)``; ``\\z`` → ``\\Z`` (absolute end in `regex`).
- ``(?m)`` / ``(?m:…)`` → ``(?s)``: in Ruby syntax ``m`` is dot-matches-newline.
- ``\\b`` / ``\\B`` → look-arounds over onig's word set.
Everything else (``\\p{…}``, POSIX brackets, look-around, possessive and atomic
groups) has the same meaning in both engines, with one difference of data: the
`regex` module knows a newer Unicode than the reference's onig, which holds
about 4,800 recently assigned code points (e.g. U+0C5C, CJK Extension J) as
unassigned. `OnigPattern` matches a view of the text in which each of them is
replaced by an always-unassigned stand-in (U+0378), one for one, so offsets are
unchanged; U+0295, Ll for onig and Lo for `regex`, stands in as U+0138 (Ll).
The view is made only when such a character is present.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import lru_cache, partial
from typing import Any, TypeAlias

import regex

from ..errors import FormatError
from . import oniguruma_classes as onig_classes
from .guard import bounded_call, budget, mark_bounded, needs_bound


def _members(ranges: tuple[tuple[int, int], ...]) -> str:
    return "".join(f"\\U{a:08x}" if a == b else f"\\U{a:08x}-\\U{b:08x}" for a, b in ranges)


_WORD = _members(onig_classes.WORD)
_DIGIT = _members(onig_classes.DIGIT)
_WORD_IN_SET = _members(onig_classes.WORD_IN_SET)
_DIGIT_IN_SET = _members(onig_classes.DIGIT_IN_SET)
_HEX = "0-9a-fA-F"

# escapes translated outside / inside a character class
_OUTSIDE = {"w": f"[{_WORD}]", "W": f"[^{_WORD}]", "d": f"[{_DIGIT}]", "D": f"[^{_DIGIT}]",
            "h": f"[{_HEX}]", "H": f"[^{_HEX}]",
            "Z": r"(?=\n?\z)", "z": r"\Z"}
_BOUNDARY = f"(?:(?<=[{_WORD}])(?![{_WORD}])|(?<![{_WORD}])(?=[{_WORD}]))"
_OUTSIDE.update({"b": _BOUNDARY, "B": f"(?:(?<=[{_WORD}])(?=[{_WORD}])|(?<![{_WORD}])(?![{_WORD}]))"})
_INSIDE = {"w": _WORD_IN_SET, "d": _DIGIT_IN_SET, "h": _HEX}
# ``\s`` stays native: `regex`'s set equals onig's (tests/test_regex_dialect.py checks it), and is faster.


def translate(pattern: str) -> str:
    """The `regex`-module spelling of an Oniguruma (Ruby syntax) pattern."""
    out: list[str] = []
    i, n = 0, len(pattern)
    depth = 0  # character-class nesting
    while i < n:
        c = pattern[i]
        if c == "\\" and i + 1 < n:
            e = pattern[i + 1]
            table = _INSIDE if depth else _OUTSIDE
            out.append(table.get(e, c + e))
            i += 2
            continue
        if depth:
            if c == "[":
                depth += 1
            elif c == "]":
                depth -= 1
            out.append(c)
        elif c == "[":
            depth = 1
            out.append(c)
            # a ']' right after '[' or '[^' is a literal member
            if pattern.startswith("^]", i + 1):
                out.append("^]")
                i += 2
            elif pattern.startswith("]", i + 1):
                out.append("]")
                i += 1
        elif c == "^":
            out.append(r"(?:^(?!\z))")
        elif c == "(" and pattern.startswith("(?", i):
            j = i + 2
            while j < n and pattern[j] in "imx-":
                j += 1
            if j < n and pattern[j] in ":)" and j > i + 2:
                flags = pattern[i + 2:j].replace("m", "s")
                out.append("(?" + flags)
                i = j
                continue
            out.append(c)
        else:
            out.append(c)
        i += 1
    return "".join(out)


_STAND_INS = {p: 0x0378 for a, b in onig_classes.NEWER_THAN_ONIG for p in range(a, b + 1)}
_STAND_INS[0x0295] = 0x0138
_NEWER = frozenset(map(chr, _STAND_INS))


class OnigPattern:
    """A translated pattern that sees newer-than-onig code points as onig does (unassigned).

    `findall` returns substrings of the text given; the spans of `search` /
    `finditer` matches index it too (their `group()` may show stand-ins). A `bounded`
    pattern (one `regex.guard` finds risky) is matched under a time bound proportional
    to the text; the others run without one (a bound costs several times the matching, see `regex.guard`).
    """

    __slots__ = ("native", "pattern", "groups", "bounded")

    def __init__(self, native: regex.Pattern[str], pattern: str, bounded: bool = False) -> None:
        self.native = native
        self.pattern = pattern
        self.groups = native.groups
        self.bounded = bounded
        if bounded:
            mark_bounded()

    def view(self, text: str) -> str:
        """`text` itself, or the same-length copy with stand-ins for newer code points."""
        # subtle: isascii() is O(1) on CPython strings; the set test is linear in the text (bench/README.md).
        if text.isascii() or _NEWER.isdisjoint(text):
            return text
        return text.translate(_STAND_INS)

    def search(self, text: str, pos: int = 0) -> regex.Match[str] | None:
        if self.bounded:
            return bounded_call(self.native.search, self.pattern, self.view(text), pos)  # type: ignore[no-any-return]
        return self.native.search(self.view(text), pos)

    def finditer(self, text: str) -> Iterator[regex.Match[str]]:
        if self.bounded:
            return iter(bounded_call(_all_matches(self.native), self.pattern, self.view(text)))
        return self.native.finditer(self.view(text))

    def findall(self, text: str) -> list[str]:
        view = self.view(text)
        if self.bounded:
            return [text[m.start():m.end()] for m in bounded_call(_all_matches(self.native), self.pattern, view)]
        if view is text:
            return self.native.findall(text)
        return [text[m.start():m.end()] for m in self.native.finditer(view)]


def _all_matches(native: regex.Pattern[str]) -> Any:
    """``finditer`` run to the end inside the caller's time bound."""
    return lambda text, timeout: list(native.finditer(text, timeout=timeout))


Pattern: TypeAlias = "OnigPattern | regex.Pattern[str]"


@lru_cache(maxsize=256)
def compile_onig(pattern: str, key: str = "pattern") -> OnigPattern:
    """Compile an Oniguruma pattern; a pattern that does not compile names `key`."""
    try:
        native = regex.compile(translate(pattern), regex.MULTILINE)
    except (regex.error, ValueError, OverflowError) as exc:
        raise FormatError(f"invalid regular expression {pattern!r}: {exc}", key=key) from None
    return OnigPattern(native, pattern, needs_bound(native, pattern))


@lru_cache(maxsize=256)
def compile_literal(literal: str) -> regex.Pattern[str]:
    """A ``{"String": s}`` pattern: `s` taken literally."""
    return regex.compile(regex.escape(literal))


def read_pattern(d: dict[str, Any], path: str) -> tuple[str, bool, str]:
    """``(source, is_regex, key path)`` of the ``"pattern"`` object that Split and both Replace
    components share: ``{"String": s}`` (a literal) or ``{"Regex": r}`` (Oniguruma)."""
    from .._config import as_object, join, required

    ppath = join(path, "pattern")
    spec = as_object(required(d, "pattern", dict, path), ppath)
    if len(spec) != 1 or next(iter(spec)) not in ("String", "Regex"):
        raise FormatError(f'expected {{"String": …}} or {{"Regex": …}}, found {spec!r:.80}', key=ppath)
    kind = next(iter(spec))
    source: str = required(spec, kind, str, ppath)
    return source, kind == "Regex", join(ppath, kind)


def match_spans(pattern: OnigPattern | regex.Pattern[str], text: str) -> list[tuple[int, int]]:
    """The (start, end) of every match, iterated as onig's ``find_iter`` does.

    After an empty match at the position where the previous match ended, onig
    steps one character forward instead of retrying there, so ``x*`` on
    ``"abxxc"`` gives (0,0) (1,1) (2,4) (5,5), where Python gives an extra (4,4).
    """
    if not text:
        return []
    if isinstance(pattern, OnigPattern):
        # subtle: the view is made once for the whole walk, and a risky pattern's searches
        # share one deadline (regex.guard.budget): a view or a fresh bound per match made
        # the walk quadratic in time and unbounded as a whole
        view = pattern.view(text)
        if pattern.bounded:
            with budget(len(text)):
                return _spans(partial(bounded_call, pattern.native.search, pattern.pattern, view), len(text))
        return _spans(partial(pattern.native.search, view), len(text))
    return _spans(partial(pattern.search, text), len(text))


def _spans(search: Any, n: int) -> list[tuple[int, int]]:
    """onig's ``find_iter`` walk over a text of `n` characters; `search(pos)` finds the next match."""
    spans: list[tuple[int, int]] = []
    pos, last_end = 0, -1
    while pos <= n:
        m = search(pos)
        if m is None:
            break
        s, e = m.span()
        if s == e and e == last_end:
            pos = s + 1
            continue
        spans.append((s, e))
        last_end = pos = e
    return spans


def find_matches(pattern: OnigPattern | regex.Pattern[str], text: str,
                 invert: bool = False) -> list[tuple[int, int, bool]]:
    """Covering list of ``(start, end, is_match)`` pieces (HF ``Pattern::find_matches``)."""
    if not text:
        return [(0, 0, invert)]
    pieces: list[tuple[int, int, bool]] = []
    prev = 0
    for s, e in match_spans(pattern, text):
        if prev != s:
            pieces.append((prev, s, invert))
        pieces.append((s, e, not invert))
        prev = e
    if prev != len(text):
        pieces.append((prev, len(text), invert))
    return pieces
