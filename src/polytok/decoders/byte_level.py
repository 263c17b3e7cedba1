"""ByteLevel decoder: byte-alphabet pieces back to text.

Stage: decoder. JSON: ``{"type": "ByteLevel", "add_prefix_space": bool,
"trim_offsets": bool, "use_regex": bool}`` (the first two required, as HF's
struct has no defaults for them; ``use_regex`` defaults to true).

Reproduces HF tokenizers 0.23.3 ``tokenizers/src/pre_tokenizers/byte_level.rs``
(``impl Decoder for ByteLevel``, ``decode_chain``): a token whose every char is
in the GPT-2 byte alphabet stands for those bytes; any other token stands for
its own UTF-8 bytes. The bytes of all tokens are joined and decoded once,
lossily, so the result is a single string. The three flags are read and kept
but change nothing here (they belong to the pre-tokenizer and post-processor
halves, which live in their own stage packages).

Python's ``bytes.decode("utf-8", "replace")`` puts one U+FFFD per maximal
invalid subsequence, as Rust's ``String::from_utf8_lossy`` does.
"""

from __future__ import annotations

import re
from typing import Any

from ..text.byte_alphabet import BYTES_TO_CHARS, byte_level_flags

# alphabet char -> the Latin-1 char of its byte, so str.translate + latin-1 encode yields the bytes
_TO_LATIN1 = {ord(c): b for b, c in enumerate(BYTES_TO_CHARS)}
_FOREIGN = re.compile("[^" + "".join(re.escape(c) for c in BYTES_TO_CHARS) + "]")


def piece_bytes(piece: str) -> bytes:
    """The bytes the decoder takes one piece for: its characters through the byte alphabet,
    or its own UTF-8 when one of them is not in it."""
    if _FOREIGN.search(piece) is None:
        return piece.translate(_TO_LATIN1).encode("latin-1")
    return piece.encode("utf-8")


class ByteLevel:
    """Byte-level decoding; the flags are kept for round-tripping only."""

    def __init__(self, add_prefix_space: bool = True, trim_offsets: bool = True, use_regex: bool = True) -> None:
        self.add_prefix_space = add_prefix_space
        self.trim_offsets = trim_offsets
        self.use_regex = use_regex

    @classmethod
    def from_config(cls, d: dict[str, Any], path: str) -> ByteLevel:
        return cls(*byte_level_flags(d, path))

    def decode_chain(self, tokens: list[str]) -> list[str]:
        joined = "".join(tokens)
        if _FOREIGN.search(joined) is None:
            # common case: every token is byte-level, so one translate covers the whole list
            data = joined.translate(_TO_LATIN1).encode("latin-1")
        else:
            data = b"".join(map(piece_bytes, tokens))
        return [data.decode("utf-8", "replace")]
