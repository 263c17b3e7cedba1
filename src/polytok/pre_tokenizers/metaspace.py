"""Metaspace pre-tokenizer (SentencePiece style): spaces become a visible marker.

JSON: ``{"type": "Metaspace", "replacement": char, "prepend_scheme":
"always" | "first" | "never", "split": bool}``; `replacement` is required,
`prepend_scheme` defaults to ``always`` and `split` to true. Legacy keys:
``add_prefix_space: true`` and ``str_rep`` are ignored, ``add_prefix_space:
false`` means ``never`` and is an error with any other declared scheme.

Reproduces HF tokenizers 0.23.3 ``tokenizers/src/pre_tokenizers/metaspace.rs``
(``Metaspace::pre_tokenize`` and its ``Deserialize``). For every piece:
replace each U+0020 (only that char) with `replacement`, then prepend
`replacement` unless the piece already starts with it, as the scheme says:

- ``always`` (HF default): every piece, so again after each added token;
- ``first``: only a piece whose original start offset is 0 (HF
  ``offsets_original().0 == 0``); the fast path learns it from `at_origin`;
- ``never``: no piece.

With `split`, the piece is then cut before every `replacement`
(``MergedWithNext``): ``"▁Hello▁▁world▁"`` gives ``▁Hello``, ``▁``, ``▁world``, ``▁``.
"""

from __future__ import annotations

from typing import Any, Literal

from .._config import join, optional, required, single_char
from ..errors import FormatError
from ..normalized import NormalizedString
from ..text.chars import regex_class
from .base import PreTokenizerBase
from .split_behavior import CharSplitter

PrependScheme = Literal["always", "first", "never"]
_SCHEMES = ("always", "first", "never")


class Metaspace(PreTokenizerBase):
    """Metaspace pre-tokenizer.

    Args:
        replacement: the char that stands for a space (usually U+2581 ``▁``).
        prepend_scheme: "always" | "first" | "never", see the module docstring.
        split: cut each piece before every `replacement`.
    """

    def __init__(self, replacement: str = "\u2581", *, prepend_scheme: PrependScheme = "always",
                 split: bool = True) -> None:
        if len(replacement) != 1:
            raise ValueError(f"replacement must be a single character, not {replacement!r}")
        if prepend_scheme not in _SCHEMES:
            raise ValueError(f"prepend_scheme must be one of {_SCHEMES}, not {prepend_scheme!r}")
        self.replacement = replacement
        self.prepend_scheme = prepend_scheme
        self.split = split
        self.splits_pieces = split
        self.reads_origin = prepend_scheme == "first"
        self._splitter = CharSplitter(regex_class(frozenset(replacement)), "merged_with_next")

    @classmethod
    def from_config(cls, d: dict[str, Any], path: str) -> Metaspace:
        replacement = single_char(d, "replacement", path)
        scheme = required(d, "prepend_scheme", str, path) if "prepend_scheme" in d else "always"
        if scheme not in _SCHEMES:
            raise FormatError(f"unknown prepend_scheme {scheme!r}, expected one of {', '.join(_SCHEMES)}",
                              key=join(path, "prepend_scheme"))
        optional(d, "str_rep", (str, type(None)), path)
        if optional(d, "add_prefix_space", (bool, type(None)), path) is False and scheme != "never":
            raise FormatError("add_prefix_space does not match declared prepend_scheme",
                              key=join(path, "add_prefix_space"))
        split = optional(d, "split", (bool, type(None)), path)
        return cls(replacement, prepend_scheme=scheme, split=True if split is None else split)  # type: ignore[arg-type]

    def _prepends(self, text: str, at_origin: bool) -> bool:
        if text.startswith(self.replacement):
            return False
        return self.prepend_scheme == "always" or (self.prepend_scheme == "first" and at_origin)

    def pre_tokenize(self, text: str, at_origin: bool = True) -> list[str]:
        if not text:
            return []
        text = text.replace(" ", self.replacement)
        if self._prepends(text, at_origin):
            text = self.replacement + text
        return self._splitter.pieces(text) if self.split else [text]

    def pre_tokenize_aligned(self, ns: NormalizedString) -> list[NormalizedString]:
        if not ns.text:
            return []
        ns = NormalizedString(ns.text, ns.align, ns.orig_start, ns.orig_end)
        ns.map_chars({" ": self.replacement})
        if self._prepends(ns.text, ns.orig_start == 0):
            ns.prepend(self.replacement)
        return ns.slices(self._splitter.spans(ns.text)) if self.split else [ns]
