"""The words of a ``byte_level`` BPE model: text whose UTF-8 bytes merge (see `polytok.models.bpe`'s notes).

tiktoken 0.14.0, src/lib.rs (``CoreBPE::encode_ordinary``, ``byte_pair_encode``): each piece
the pattern finds is merged as its UTF-8 bytes. The vocabulary spells bytes in the GPT-2
byte alphabet (`polytok.text.byte_alphabet`), so a word is written in it before the merge
loops read it, and the spans found over that spelling (one character per byte) are given
back over the word's own characters.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

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


def batch_merger(byte_level: bool, merge_kernel: Any, merger: Callable[[], Any]) -> Any:
    """The compiled `Merger` that `polytok._kernels.batch` runs for this model, or None.

    Args:
        byte_level: the model merges each word's UTF-8 bytes (tiktoken's rule).
        merge_kernel: the model's `bpe_merge` kernel, chosen only where the compiled loop covers
            the model (no dropout or affixes; for byte_level, no unk token, byte fallback or
            blocked characters, every byte an entry, no id shared), else None.
        merger: builds (or gives) the model's `Merger`.

    The batch kernel merges a word exactly as the model's compiled loop does, from the Merger's
    tables: a byte_level word with the ``ignore_merges`` whole-word lookup; a spelt word (HF's)
    cut into `BPE._cut`'s chunks, with byte fallback and the unk rules, where the Merger has no
    blocked characters and no ``ignore_merges`` (`Merger.batch_covered`). It keeps its own word
    cache and leaves a word the pure loop would raise on to the pure path.
    """
    if merge_kernel is None:
        return None
    compiled = merger()
    return compiled if byte_level or compiled.batch_covered() else None
