"""UnicodeScripts pre-tokenizer: cut wherever the writing system changes.

JSON: ``{"type": "UnicodeScripts"}``.

Reproduces HF tokenizers 0.23.3
``tokenizers/src/pre_tokenizers/unicode_scripts/pre_tokenizer.rs``
(``fixed_script``, ``UnicodeScripts::pre_tokenize``) over the crate's own script
table (``scripts.rs``, ``get_script``), frozen in `unicode_scripts_table`:

- Hiragana, Katakana and U+30FC count as Han; U+0020 and every code point the
  old table does not list (e.g. emoji newer than it, such as U+1F970) are
  script ``Any``, which never starts a piece and joins the piece before it;
- a piece starts at every non-``Any`` char whose script differs from the last
  non-``Any`` one (digits and punctuation are ``Common``, their own script);
- bug-compatible: the first cut is at the first non-``Any`` char, so a
  piece's leading ``Any`` chars are dropped (``"  abc  def"`` gives one piece
  ``"abc  def"``) and a piece of only ``Any`` chars disappears.
"""

from __future__ import annotations

from bisect import bisect_right
from typing import Any

from ..normalized import NormalizedString
from .base import PreTokenizerBase
from .unicode_scripts_table import SCRIPT_RANGES

Span = tuple[int, int]

_ANY = "Any"
_STARTS = [first for first, _, _ in SCRIPT_RANGES]


def _table_script(c: str) -> str:
    i = bisect_right(_STARTS, ord(c)) - 1
    if i >= 0 and ord(c) <= SCRIPT_RANGES[i][1]:
        return SCRIPT_RANGES[i][2]
    return _ANY


def fixed_script(c: str) -> str:
    """The script the pre-tokenizer uses for `c` (HF ``fixed_script``)."""
    if c == "\u30fc":
        return "Han"
    if c == " ":
        return _ANY
    script = _table_script(c)
    return "Han" if script in ("Hiragana", "Katakana") else script


class UnicodeScripts(PreTokenizerBase):
    """UnicodeScripts pre-tokenizer: ``"どこで生れ。Yes 123"`` gives ``どこで生れ``, ``。``, ``Yes ``, ``123``."""

    def __init__(self) -> None:
        self._scripts: dict[str, str] = {}

    def __getstate__(self) -> dict[str, Any]:
        """Pickled without the per-character script cache (refilled as characters are met)."""
        return {**self.__dict__, "_scripts": {}}

    @classmethod
    def from_config(cls, d: dict[str, Any], path: str) -> UnicodeScripts:
        return cls()

    def _spans(self, text: str) -> list[Span]:
        scripts = self._scripts
        cuts: list[int] = []
        last = None
        for i, c in enumerate(text):
            script = scripts.get(c)
            if script is None:
                script = scripts[c] = fixed_script(c)
            if script != _ANY and script != last:
                cuts.append(i)
                last = script
        cuts.append(len(text))
        return list(zip(cuts, cuts[1:]))

    def pre_tokenize(self, text: str, at_origin: bool = True) -> list[str]:
        return [text[a:b] for a, b in self._spans(text)]

    def pre_tokenize_aligned(self, ns: NormalizedString) -> list[NormalizedString]:
        return ns.slices(self._spans(ns.text))
