"""The arguments every encode call checks: the special-token policy and the input's size."""

from __future__ import annotations

from typing import Any

from ..errors import PolytokError
from ..special import SpecialTokens

__all__ = ["TextInput", "parses_special", "n_chars"]

TextInput = str | list[str]


_PARSES: dict[object, bool] = {SpecialTokens.PARSE: True, SpecialTokens.AS_TEXT: False, "parse": True, "text": False}


def parses_special(special: object) -> bool:
    """True when special markers are parsed."""
    try:
        return _PARSES[special]
    except (KeyError, TypeError):  # TypeError: an unhashable value, refused below
        pass
    try:
        mode = SpecialTokens(special)  # type: ignore[arg-type]  # anything else: ValueError
    except ValueError:
        raise PolytokError("special must be 'parse', 'text' or 'raise' (polytok.SpecialTokens), a collection of "
                           f"marker strings or polytok.AllowedSpecial, not {special!r}") from None
    if mode is SpecialTokens.RAISE:  # `special_controls.resolve` takes it before any stage runs
        raise PolytokError("special='raise' is not taken here: read markers as text or parse them")
    return mode is SpecialTokens.PARSE


def n_chars(text: Any, pair: Any) -> int:
    """Characters of an input and its pair (a list of pre-split words counts each word)."""
    return sum(len(t) if isinstance(t, str) else sum(len(w) for w in t if isinstance(w, str))
               if isinstance(t, list) else 0 for t in (text, pair))
