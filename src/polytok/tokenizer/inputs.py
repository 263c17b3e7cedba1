"""The arguments every encode call checks: the special-token policy and the input's size."""

from __future__ import annotations

from typing import Any

from ..errors import PolytokError
from ..special import SpecialTokens

__all__ = ["TextInput", "parses_special", "n_chars"]

TextInput = str | list[str]


_PARSES = {SpecialTokens.PARSE: True, SpecialTokens.AS_TEXT: False, "parse": True, "text": False}


def parses_special(special: SpecialTokens | str) -> bool:
    """True when special markers are parsed."""
    try:
        return _PARSES[special]
    except (KeyError, TypeError):  # TypeError: an unhashable value, refused below
        pass
    try:
        return SpecialTokens(special) is SpecialTokens.PARSE
    except ValueError:
        raise PolytokError(f"special must be 'parse' or 'text' (polytok.SpecialTokens), not {special!r}") from None


def n_chars(text: Any, pair: Any) -> int:
    """Characters of an input and its pair (a list of pre-split words counts each word)."""
    return sum(len(t) if isinstance(t, str) else sum(len(w) for w in t if isinstance(w, str))
               if isinstance(t, list) else 0 for t in (text, pair))
