"""Character predicates as the reference engines define them (not as `str` methods do).

`str.isspace()` is True for U+001C–U+001F, which are not White_Space; Rust's
``char::is_whitespace`` (used throughout HF tokenizers) is exactly White_Space.
"""

from __future__ import annotations

WHITE_SPACE = frozenset(
    "\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u2028\u2029\u202f\u205f\u3000"
)


def is_whitespace(c: str) -> bool:
    """Rust ``char::is_whitespace``: the Unicode White_Space property."""
    return c in WHITE_SPACE
