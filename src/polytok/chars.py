"""Character predicates as the reference engines define them (not as `str` methods do).

`str.isspace()` is True for U+001C–U+001F, which are not White_Space; Rust's
``char::is_whitespace`` (used throughout HF tokenizers) is exactly White_Space.

The pre-tokenizers' punctuation, numeric and word classes come from Unicode
tables of different ages inside HF tokenizers 0.23.3 (``unicode_categories``
~8.0 for punctuation, the Rust std and `regex` crate for the others), none of
which is this Python's `unicodedata`; they are frozen in `char_classes` by
probing the reference on every code point (tools/gen_char_classes.py). Each
class also comes as the body of a `regex` character class (``*_CLASS``) so the
fast paths can match runs of it in C.
"""

from __future__ import annotations

from bisect import bisect_right

from . import char_classes as _classes

WHITE_SPACE = frozenset(
    "\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u2028\u2029\u202f\u205f\u3000"
)


def is_whitespace(c: str) -> bool:
    """Rust ``char::is_whitespace``: the Unicode White_Space property."""
    return c in WHITE_SPACE


# -- the pre-tokenizers' classes, frozen from the reference (polytok/char_classes.py) -----

Ranges = tuple[tuple[int, int], ...]


def _expand(ranges: Ranges) -> frozenset[str]:
    return frozenset(chr(c) for first, last in ranges for c in range(first, last + 1))


PUNCTUATION = _expand(_classes.PUNCTUATION)
NUMERIC = _expand(_classes.NUMERIC)
_WORD_STARTS = [first for first, _ in _classes.WORD]


def is_punctuation(c: str) -> bool:
    """HF ``is_bert_punc`` / ``is_punc``: ASCII punctuation, or P* of the ~Unicode 8 ``unicode_categories`` crate.

    ASCII symbols such as ``$ + < = > ^ ` | ~`` count; non-ASCII symbols (``€``) do not.
    """
    return c in PUNCTUATION


def is_numeric(c: str) -> bool:
    """Rust ``char::is_numeric`` (general category N*, so ``²`` and ``١`` but not ``五``)."""
    return c in NUMERIC


def is_word(c: str) -> bool:
    """The Rust `regex` crate's Unicode ``\\w``: Alphabetic, M*, Nd, Pc and Join_Control."""
    i = bisect_right(_WORD_STARTS, ord(c)) - 1
    return i >= 0 and ord(c) <= _classes.WORD[i][1]


def regex_class(ranges: Ranges | frozenset[str]) -> str:
    """The body of a `regex` character class (no brackets) holding exactly `ranges` (or those chars)."""
    if isinstance(ranges, frozenset):
        ranges = _to_ranges(sorted(map(ord, ranges)))
    return "".join(f"\\U{a:08X}" if a == b else f"\\U{a:08X}-\\U{b:08X}" for a, b in ranges)


def _to_ranges(points: list[int]) -> Ranges:
    out: list[tuple[int, int]] = []
    for c in points:
        if out and out[-1][1] == c - 1:
            out[-1] = (out[-1][0], c)
        else:
            out.append((c, c))
    return tuple(out)


PUNCTUATION_CLASS = regex_class(_classes.PUNCTUATION)
NUMERIC_CLASS = regex_class(_classes.NUMERIC)
WORD_CLASS = regex_class(_classes.WORD)
WHITE_SPACE_CLASS = regex_class(WHITE_SPACE)
