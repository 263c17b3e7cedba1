"""BertPreTokenizer: split on whitespace, then isolate every punctuation char.

JSON: ``{"type": "BertPreTokenizer"}``.

Reproduces HF tokenizers 0.23.3 ``tokenizers/src/pre_tokenizers/bert.rs``
(``BertPreTokenizer::pre_tokenize``): a ``Removed`` split at
``char::is_whitespace``, then an ``Isolated`` split at ``is_bert_punc`` (ASCII
punctuation or ~Unicode 8 P*, `polytok.text.chars.is_punctuation`; no whitespace
char is punctuation). The two passes are one regex here: a punctuation char
alone, or a run of chars that are neither, which gives the same pieces and,
since slices of slices keep their alignment, the same offsets. The wordpiece kernel
(when built) makes the plain cut in one pass over the same two character sets.
"""

from __future__ import annotations

from typing import Any

from .. import kernels
from ..text.chars import PUNCTUATION, WHITE_SPACE, WHITE_SPACE_CLASS, regex_set
from .split_behavior import CharSplitter, SplittingPreTokenizer


def _compiled_split() -> Any:
    """The wordpiece kernel's BertSplit over polytok's white space and punctuation, or None."""
    module = kernels.kernel("wordpiece")
    return None if module is None else module.BertSplit("".join(sorted(WHITE_SPACE)), "".join(sorted(PUNCTUATION)))


class BertPreTokenizer(SplittingPreTokenizer):
    """BertPreTokenizer: ``"Hey friend!  a$b€c"`` gives ``Hey``, ``friend``, ``!``, ``a``, ``$``, ``b€c``."""

    def __init__(self) -> None:
        punctuation = regex_set("PUNCTUATION")
        self._splitter = CharSplitter.from_pieces_regex(f"{punctuation}|[^{punctuation}{WHITE_SPACE_CLASS}]+")
        self._compiled = _compiled_split()

    def __getstate__(self) -> dict[str, Any]:
        """Pickled without the compiled cut (rebuilt on unpickling)."""
        return {**self.__dict__, "_compiled": None}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._compiled = _compiled_split()

    def pre_tokenize(self, text: str, at_origin: bool = True) -> list[str]:
        if self._compiled is not None:
            return self._compiled.pieces(text)  # type: ignore[no-any-return]
        return self._splitter.pieces(text)

    @classmethod
    def from_config(cls, d: dict[str, Any], path: str) -> BertPreTokenizer:
        return cls()
