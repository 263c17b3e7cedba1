"""tiktoken's special-token controls, for every format: parse only some markers, or refuse them.

Besides `SpecialTokens.PARSE` and `SpecialTokens.AS_TEXT`, ``special=`` takes:

- `SpecialTokens.RAISE` (``"raise"``): a text holding any special-token marker raises
  `EncodeError`, naming the marker and where it starts; a text holding none is encoded as
  ``AS_TEXT`` encodes it. tiktoken's default (``disallowed_special="all"``): a data
  pipeline refuses forged control tokens instead of encoding them either way.
- a collection of marker strings (a set, frozenset, list or tuple): those markers are
  parsed, every other one is read as text (tiktoken's ``allowed_special=S,
  disallowed_special=()``).
- `AllowedSpecial` ``(markers, others="raise")``: those markers are parsed, any other
  raises (tiktoken's ``allowed_special=S`` with its default ``disallowed_special="all"``).

The markers are those ``special=`` governs in the format (`markers`): HF's added tokens
flagged special (a non-special added token matches in every mode, as in HF), llama.cpp's
CONTROL and UNKNOWN entries (USER_DEFINED ones always match), tiktoken's and tekken's
special tokens. A marker outside the collection is read as ``AS_TEXT`` reads it: HF's
``encode_special_tokens`` for that token (its span is not searched again), llama.cpp's
``parse_special=false``. So ``special=set()`` is ``AS_TEXT`` and ``special=markers(tok)``
is ``PARSE``, id for id. tiktoken's own loop (``_encode_native`` in its ``src/lib.rs``)
searches again one character after a marker it leaves as text; the two differ only for a
marker that starts inside another one, which no tiktoken file has.

The split for a collection is made once per tokenizer and collection (`restricted`), a
copy of the tokenizer sharing every stage but its special-token split.
"""

from __future__ import annotations

import copy
import weakref
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

import regex

from ..errors import EncodeError, PolytokError
from ..special import AddedVocabulary, LongestFirstPartition, PartitionEntry, SpecialTokens

if TYPE_CHECKING:
    from .tokenizer import Tokenizer

__all__ = ["AllowedSpecial", "SpecialArg", "markers", "resolve", "check_texts", "restricted", "is_plain"]

_KEPT = 8  # restricted copies kept per tokenizer (the collections a program uses are few)


@dataclass(frozen=True)
class AllowedSpecial:
    """``special=AllowedSpecial(markers, others=...)``: parse `markers`; every other marker is
    read as text (``others="text"``, what a plain collection means) or raises (``"raise"``)."""

    markers: frozenset[str]
    others: Literal["text", "raise"] = "text"

    def __init__(self, markers: Iterable[str], others: Literal["text", "raise"] = "text") -> None:
        if isinstance(markers, str):
            raise PolytokError("AllowedSpecial takes a collection of markers, not one string "
                               f"(write {{{markers!r}}})")
        found = frozenset(markers)
        if not all(isinstance(m, str) for m in found):
            raise PolytokError("AllowedSpecial markers must be strings")
        if others not in ("text", "raise"):
            raise PolytokError(f"AllowedSpecial others must be 'text' or 'raise', not {others!r}")
        object.__setattr__(self, "markers", found)
        object.__setattr__(self, "others", others)


#: what ``special=`` takes: a mode (`SpecialTokens` or its value), markers to parse, `AllowedSpecial`
SpecialArg = SpecialTokens | str | Collection[str] | AllowedSpecial | None


def markers(tok: Tokenizer) -> frozenset[str]:
    """The marker strings ``special=`` governs in `tok` (see the module notes)."""
    split = tok.special_split
    if isinstance(split, LongestFirstPartition):
        return frozenset(entry.text for entry in split.parsed_only())
    if isinstance(split, AddedVocabulary):
        return frozenset(split.special_contents)
    return frozenset()


def _allowed(tok: Tokenizer, special: Any) -> AllowedSpecial:
    if isinstance(special, AllowedSpecial):
        return special
    if isinstance(special, (set, frozenset, list, tuple)):
        return AllowedSpecial(special)
    raise PolytokError("special must be 'parse', 'text' or 'raise' (polytok.SpecialTokens), a collection of "
                       f"marker strings or polytok.AllowedSpecial, not {special!r}")


def resolve(tok: Tokenizer, special: Any, texts: Iterable[Any], *,
            batch: bool = False) -> tuple[Tokenizer, SpecialTokens]:
    """The tokenizer and plain mode that encode `texts` as `special` asks (RAISE, a collection,
    `AllowedSpecial`), after checking every text where markers are refused.

    Raises:
        EncodeError: a text holds a refused marker (naming it, where it starts and, for a
            batch, which text).
        PolytokError: `special` is none of the forms ``special=`` takes.
    """
    if special is SpecialTokens.RAISE or (type(special) is str and special == "raise"):
        check_texts(tok, texts, frozenset(), batch=batch)
        return tok, SpecialTokens.AS_TEXT
    if type(special) is str or isinstance(special, SpecialTokens):
        return tok, SpecialTokens(special) if special in ("parse", "text") else _refuse_mode(special)
    allowed = _allowed(tok, special)
    if allowed.others == "raise":
        check_texts(tok, texts, allowed.markers, batch=batch)
    return restricted(tok, allowed.markers), SpecialTokens.AS_TEXT


def _refuse_mode(special: str) -> SpecialTokens:
    raise PolytokError(f"special must be 'parse', 'text' or 'raise' (polytok.SpecialTokens), not {special!r}")


# -- refusing markers ---------------------------------------------------------------------

# per tokenizer: the split and added-vocabulary size the entries were made for, and the entries
_patterns: weakref.WeakKeyDictionary[Any, tuple[Any, int, dict[frozenset[str], regex.Pattern[str] | None]]] = \
    weakref.WeakKeyDictionary()
_copies: weakref.WeakKeyDictionary[Any, tuple[Any, int, dict[frozenset[str], Tokenizer]]] = \
    weakref.WeakKeyDictionary()


def _kept(table: weakref.WeakKeyDictionary[Any, tuple[Any, int, dict[frozenset[str], Any]]],
          tok: Tokenizer) -> dict[frozenset[str], Any]:
    """`tok`'s entries in `table`, emptied when its split changed since (`Tokenizer.add_tokens`)."""
    split, size = tok.special_split, len(tok.added)
    found = table.get(tok)
    if found is None or found[0] is not split or found[1] != size or len(found[2]) >= _KEPT:
        found = table[tok] = (split, size, {})
    return found[2]


def _pattern(tok: Tokenizer, allowed: frozenset[str]) -> regex.Pattern[str] | None:
    """The refused markers of `tok` as one pattern, longest first at a place (None: none)."""
    known = _kept(_patterns, tok)
    if allowed not in known:
        refused = sorted((m for m in markers(tok) - allowed if m), key=lambda m: (-len(m), m))
        known[allowed] = regex.compile("|".join(map(regex.escape, refused))) if refused else None
    return known[allowed]  # type: ignore[no-any-return]


def check_texts(tok: Tokenizer, texts: Iterable[Any], allowed: frozenset[str], *, batch: bool = False) -> None:
    """Raise `EncodeError` for the first refused marker in `texts` (inputs as `encode` takes
    them: a str, a list of pre-split words, or None for an absent pair); `batch`: name the text."""
    pattern = _pattern(tok, allowed)
    if pattern is None:
        return
    for index, text in enumerate(texts):
        words = [text] if isinstance(text, str) else text if isinstance(text, list) else []
        for w, word in enumerate(words):
            found = pattern.search(word) if isinstance(word, str) else None
            if found is not None:
                where = f"at character {found.start()}"
                if not isinstance(text, str):
                    where += f" of word {w}"
                if batch:
                    where += f" of text {index}"
                elif index:
                    where += " of the pair"
                raise EncodeError(f"special-token marker {found.group()!r} {where}: parse it with "
                                  f"special={{{found.group()!r}}}, or read every marker as text with "
                                  "special='text'")


# -- parsing some markers -----------------------------------------------------------------


def restricted(tok: Tokenizer, allowed: frozenset[str]) -> Tokenizer:
    """`tok` with a split that, reading markers as text (``AS_TEXT``), parses those in `allowed`."""
    known = _kept(_copies, tok)
    found = known.get(allowed)
    if found is None:
        found = known[allowed] = tok.with_special_split(_split_parsing(tok.special_split, allowed))
    return found


def _split_parsing(split: Any, allowed: frozenset[str]) -> Any:
    """A split that, asked to read markers as text, still parses those in `allowed`."""
    if isinstance(split, AddedVocabulary):
        made = copy.copy(split)  # shares the tries: only the special set differs
        made.special_contents = set(split.special_contents) - allowed
        return made
    if isinstance(split, LongestFirstPartition):
        return LongestFirstPartition([PartitionEntry(e.id, e.text, e.always or e.text in allowed, e.lstrip, e.rstrip)
                                      for e in split.entries()])
    raise PolytokError(f"special= cannot take a collection of markers for a {type(split).__name__} split")


def is_plain(special: Any) -> bool:
    """Whether `special` is None, PARSE or AS_TEXT (the modes the encode paths take as they are)."""
    return special is None or (type(special) is str or isinstance(special, SpecialTokens)) and \
        special in ("parse", "text")
