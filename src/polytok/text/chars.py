"""Character predicates as the reference engines define them (not as `str` methods do).

`str.isspace()` is True for U+001C–U+001F, which are not White_Space; Rust's
``char::is_whitespace`` (used throughout HF tokenizers) is exactly White_Space.

The pre-tokenizers' punctuation, numeric and word classes come from Unicode
tables of different ages inside HF tokenizers 0.23.3 (``unicode_categories``
~8.0 for punctuation, the Rust std and `regex` crate for the others), none of
which is this Python's `unicodedata`; they are frozen in `char_classes` by
probing the reference on every code point (tools/gen_char_classes.py). For the
fast paths, which match runs of a class in C, `regex_set` gives each class as
a `regex` set and `regex_class` writes any set of chars as a class body.
"""

from __future__ import annotations

import sys
from array import array
from bisect import bisect_right
from functools import cache, lru_cache
from itertools import chain

import regex

from . import char_classes as _classes

WHITE_SPACE = frozenset(
    "\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u2028\u2029\u202f\u205f\u3000"
)


def is_whitespace(c: str) -> bool:
    """Rust ``char::is_whitespace``: the Unicode White_Space property."""
    return c in WHITE_SPACE


# -- the pre-tokenizers' classes, frozen from the reference (polytok/text/char_classes.py) -----

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


WHITE_SPACE_CLASS = regex_class(WHITE_SPACE)

# How the reference defines each class, as `regex` properties; `regex_set` corrects the
# Unicode-version differences. Rust's `regex` crate \w is UTS#18's word class.
_SPELLINGS = {
    "PUNCTUATION": r"\p{P}\x21-\x2F\x3A-\x40\x5B-\x60\x7B-\x7E",
    "NUMERIC": r"\p{N}",
    "WORD": r"\p{Alphabetic}\p{M}\p{Nd}\p{Pc}\p{Join_Control}",
}


@lru_cache(maxsize=1)
def _every_char() -> str:
    points = array("I", chain(range(0xD800), range(0xE000, 0x110000)))
    return points.tobytes().decode("utf-32-le" if sys.byteorder == "little" else "utf-32-be")


@cache
def regex_set(name: str) -> str:
    """A `regex` V1 set (with its brackets) matching exactly the frozen class `name`.

    `name` is "PUNCTUATION", "NUMERIC" or "WORD". One class of a few hundred
    ranges matches much slower in `regex` than a property class (bench/README.md,
    'Measurements behind design choices'), so the set is the property spelling of
    the class plus / minus the code points where this `regex` build's Unicode
    disagrees with the frozen table (compile the pattern with ``regex.V1``). For the
    pinned `regex` release the sets are stored (`polytok.text.regex_sets`, written by
    ``tools/gen_regex_sets.py``); another release is measured, once per process.
    """
    from . import regex_sets

    if regex.__version__ == regex_sets.REGEX_VERSION:
        return regex_sets.SETS[name]
    return measure_regex_set(name)


def measure_regex_set(name: str) -> str:
    """`regex_set(name)`, measured against this `regex` build by testing every code point."""
    spelling = _SPELLINGS[name]
    got = set(map(ord, regex.findall(f"(?V1)[{spelling}]", _every_char())))
    want = {c for first, last in getattr(_classes, name) for c in range(first, last + 1)}
    add, remove = sorted(want - got), sorted(got - want)
    body = f"[{spelling}||[{regex_class(_to_ranges(add))}]]" if add else f"[{spelling}]"
    return f"[{body}--[{regex_class(_to_ranges(remove))}]]" if remove else body
