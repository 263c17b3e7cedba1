"""Which strings sentencepiece's trainers may make pieces of, and how they cut words.

Reproduces sentencepiece 0.2.3: ``TrainerInterface::IsValidSentencePiece``
(src/trainer_interface.cc), ``SplitIntoWords`` (src/model_interface.cc) and
``unicode_script::GetScript`` (src/unicode_script.cc over the table in
`sentencepiece_scripts`).

A piece is refused when it is empty or longer than ``max_sentencepiece_length``
characters, holds the unknown mark ``"▅"``, NUL, the pretokenization boundary
U+001F, a space or a surrogate, or a ``"▁"`` anywhere but where the whitespace
rules allow it (first, or alone with ``allow_whitespace_only_pieces``; last
with ``treat_whitespace_as_suffix``). With ``split_by_unicode_script`` a piece
may not mix scripts; Hiragana, Katakana and U+30FC count as Han, an Inherited
character takes the script of the one before it, and with
``split_by_number=False`` decimal digits (ASCII and full-width) match any
script. With ``split_digits`` a digit is a piece only alone.
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass

from .sentencepiece_scripts import SCRIPT_NAMES, SCRIPT_RANGES

__all__ = ["PieceRules", "script_of", "split_into_words", "WS", "UNK_CHAR", "BOUNDARY"]

WS = "\u2581"
UNK_CHAR = "\u2585"
BOUNDARY = "\x1f"

_STARTS = [first for first, _, _ in SCRIPT_RANGES]
_COMMON = -1
_HAN = SCRIPT_NAMES.index("Han")
_KANA = (SCRIPT_NAMES.index("Hiragana"), SCRIPT_NAMES.index("Katakana"))
_INHERITED = SCRIPT_NAMES.index("Inherited")
_ANY = -2


def script_of(code: int) -> int:
    """Index into `SCRIPT_NAMES` of `code`'s script, or -1 for Common (sentencepiece's default)."""
    at = bisect_right(_STARTS, code) - 1
    if at >= 0:
        first, last, script = SCRIPT_RANGES[at]
        if first <= code <= last:
            return script
    return _COMMON


def _is_decimal(code: int) -> bool:
    return 0x30 <= code <= 0x39 or 0xFF10 <= code <= 0xFF19


@dataclass(frozen=True)
class PieceRules:
    """The trainer_spec fields `is_valid` reads."""

    max_sentencepiece_length: int = 16
    split_by_unicode_script: bool = True
    split_by_number: bool = True
    split_by_whitespace: bool = True
    split_digits: bool = False
    treat_whitespace_as_suffix: bool = False
    allow_whitespace_only_pieces: bool = False

    def is_valid(self, piece: str) -> bool:
        """Whether the trainers may make `piece` (``IsValidSentencePiece``)."""
        size = len(piece)
        if size == 0 or size > self.max_sentencepiece_length:
            return False
        whitespace_only = self.allow_whitespace_only_pieces and piece.count(WS) == size
        prev = _ANY
        for pos, char in enumerate(piece):
            code = ord(char)
            if char in (UNK_CHAR, "\0", BOUNDARY, " ") or 0xD800 <= code <= 0xDFFF:
                return False
            if char == WS:
                if whitespace_only:
                    continue
                if self.treat_whitespace_as_suffix:
                    if (self.split_by_whitespace and pos < size - 1) or (
                            not self.split_by_whitespace and pos < size - 1 and pos == 0):
                        return False
                elif (self.split_by_whitespace and pos > 0) or (
                        not self.split_by_whitespace and pos > 0 and pos == size - 1):
                    return False
                continue
            script = script_of(code)
            if script in _KANA or code == 0x30FC:
                script = _HAN
            elif script == _INHERITED:
                script = prev
            digit = _is_decimal(code)
            if digit and not self.split_by_number:
                script = _ANY
            if digit and self.split_digits and size > 1:
                return False
            if self.split_by_unicode_script and script != _ANY and prev != _ANY and prev != script:
                return False
            prev = script
        return True


def split_into_words(text: str, treat_whitespace_as_suffix: bool = False,
                     allow_whitespace_only_pieces: bool = False) -> list[str]:
    """`text` cut at each ``"▁"`` as sentencepiece's ``SplitIntoWords`` cuts it."""
    words: list[str] = []
    if treat_whitespace_as_suffix:
        if text:
            words.append("")
        in_run = False
        for pos, char in enumerate(text):
            is_ws = char == WS
            if is_ws:
                in_run = True
            elif in_run:
                if allow_whitespace_only_pieces:
                    words.append("")
                in_run = False
            words[-1] += char
            if pos + 1 < len(text) and is_ws and not allow_whitespace_only_pieces:
                words.append("")
        return words
    in_run = False
    for pos, char in enumerate(text):
        is_ws = char == WS
        if pos == 0 or (is_ws and (not in_run or not allow_whitespace_only_pieces)):
            words.append("")
            in_run = True
        if in_run and not is_ws:
            in_run = False
        words[-1] += char
    return words
