"""The words of a ``byte_level`` BPE model: text whose UTF-8 bytes merge (see `polytok.models.bpe`'s notes).

tiktoken 0.14.0, src/lib.rs (``CoreBPE::encode_ordinary``, ``byte_pair_encode``): each piece
the pattern finds is merged as its UTF-8 bytes. The vocabulary spells bytes in the GPT-2
byte alphabet (`polytok.text.byte_alphabet`), so a word is written in it before the merge
loops read it, and the spans found over that spelling (one character per byte) are given
back over the word's own characters.
"""

from __future__ import annotations

from ..errors import not_utf8
from ..text.byte_alphabet import BYTES_TO_CHARS
from ._vocab import byte_to_char

_TABLE = tuple(BYTES_TO_CHARS)  # str.translate table, indexed by a latin-1 char's ordinal


def byte_form(word: str) -> str:
    """`word` in the byte alphabet, one character per UTF-8 byte (the vocabulary's spelling)."""
    try:
        return word.encode("utf-8").decode("latin-1").translate(_TABLE)
    except UnicodeEncodeError as exc:
        raise not_utf8(exc) from None


def char_spans(word: str, spans: list[tuple[int, int, int]]) -> list[tuple[int, int, int]]:
    """``(id, start, end)`` spans over the byte form of `word` as spans over `word`: a token
    covers every character it holds a byte of (as HF's offsets through ByteLevel's alignments)."""
    if word.isascii():
        return spans
    owners = byte_to_char(word)
    out = []
    for id_, start, end in spans:
        first = owners[start] if start < len(owners) else len(word)
        out.append((id_, first, owners[end - 1] + 1 if end > start else first))
    return out
