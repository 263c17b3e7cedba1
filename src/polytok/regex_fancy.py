"""Rust ``fancy-regex`` patterns (tiktoken's ``pat_str``, Mistral tekken's ``pattern``) run with `regex`.

tiktoken 0.14.0 compiles its pattern with ``fancy_regex::Regex::new`` (src/lib.rs,
``CoreBPE::new_internal``) and walks it with ``find_iter`` (``encode_ordinary``);
only the matches become pieces, the text between them is dropped. Both engines
are backtracking, leftmost-first, with possessive quantifiers, atomic groups and
look-around, so a pattern reads the same in both except for:

- ``$`` (outside a class): end of the text in Rust (no multi-line flag), while
  Python's also matches before a final newline → ``\\Z``; Rust's ``\\z`` → ``\\Z``.
- Unicode data: the Rust ``regex-syntax`` tables tiktoken 0.14.0 was built with
  are older than `regex`'s (2026.5.9). Measured on every code point (outside the
  surrogates) through tiktoken itself, for ``\\p{L}``, ``\\p{N}``, ``\\p{Lu}``,
  ``\\p{Lt}``, ``\\p{Lm}``, ``\\p{Lo}``, ``\\p{M}``, ``\\p{Ll}``, ``\\d``, ``\\w``,
  ``\\s``, ``\\S`` and ``(?i:'s|'t|'re|'ve|'m|'ll|'d)``: `regex` differs on ~4,700
  code points, and they are exactly the ones `regex_dialect.OnigPattern`
  replaces by stand-ins for HF's onig (the same Unicode version), so a fancy
  pattern runs through the same `OnigPattern` view. After it the two agree on
  every code point (tests/formats/test_tiktoken_regex.py; the full sweep is
  marked slow).
- ``\\s`` is Unicode White_Space in both; ``(?i)`` uses simple case folding in
  both (``ſ`` matches ``s``, ``K`` (Kelvin) matches ``k``).
"""

from __future__ import annotations

from functools import lru_cache

import regex

from .errors import FormatError
from .regex_dialect import OnigPattern
from .regex_guard import needs_bound

__all__ = ["compile_fancy", "translate_fancy"]


def translate_fancy(pattern: str) -> str:
    """The `regex`-module spelling of a Rust (fancy-)regex pattern (see the module notes)."""
    out: list[str] = []
    i, n, depth = 0, len(pattern), 0
    while i < n:
        c = pattern[i]
        if c == "\\" and i + 1 < n:
            e = pattern[i + 1]
            out.append(r"\Z" if e == "z" and not depth else c + e)
            i += 2
            continue
        if depth:
            depth += {"[": 1, "]": -1}.get(c, 0)
        elif c == "[":
            depth = 1
            if pattern.startswith("^]", i + 1) or pattern.startswith("]", i + 1):
                skip = 3 if pattern[i + 1] == "^" else 2
                out.append(pattern[i:i + skip])
                i += skip
                continue
        elif c == "$":
            out.append(r"\Z")
            i += 1
            continue
        out.append(c)
        i += 1
    return "".join(out)


@lru_cache(maxsize=64)
def compile_fancy(pattern: str, key: str = "pattern") -> OnigPattern:
    """Compile a fancy-regex pattern; one that does not compile names `key`."""
    try:
        native = regex.compile(translate_fancy(pattern))
    except (regex.error, ValueError, OverflowError) as exc:
        raise FormatError(f"invalid regular expression {pattern!r}: {exc}", key=key) from None
    return OnigPattern(native, pattern, needs_bound(native, pattern))
