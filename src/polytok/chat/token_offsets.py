"""The character offsets of a chat's ids from the tokens' bytes, where they are `Tokenizer.encode_full`'s.

`Tokenizer.encode_full` (the aligned stages, in Python) gives the offsets of every format,
slowly. When the tokens' bytes, joined, are the text's UTF-8 (byte-level BPE, tiktoken,
GGUF BPE: whatever the stages did, each token stands for a run of the text's own bytes),
a token starts at the character that holds its first byte and ends after the character
that holds its last — a character cut between tokens is in each of them, as HF's
alignments give it (tokenizers 0.23.3 ``normalizer.rs`` ``convert_offsets``). The
post-processor then does to these offsets what it does to `encode_full`'s (ByteLevel's
``trim_offsets``). Anything else — a prefix space the stages added, a dropped or changed
character, a token with no bytes — gives None, and the caller takes `encode_full`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..encoding import Encoding

if TYPE_CHECKING:
    from ..tokenizer import Tokenizer

__all__ = ["byte_offsets"]

Span = tuple[int, int]


def byte_offsets(tok: Tokenizer, text: str, ids: list[int], ignored: str = "") -> list[Span] | None:
    """``(start, end)`` of each id in `text`, or None where the tokens' bytes are not the text's.

    Characters of `ignored` (markers the encoder cut out) belong to no token; the offsets
    still count them."""
    kept: list[int] | None = None
    if ignored and any(c in text for c in ignored):
        kept = [i for i, c in enumerate(text) if c not in ignored]
        plain = "".join(text[i] for i in kept)
    else:
        plain = text
    distinct = set(ids)
    bytes_of = {i: tok.token_bytes(i) for i in distinct}
    pieces = [bytes_of[i] for i in ids]
    if not all(pieces) or b"".join(pieces) != plain.encode("utf-8", "surrogatepass"):
        return None
    char_of_byte: list[int] = []
    if plain.isascii():
        char_of_byte = list(range(len(plain)))
    else:
        for i, c in enumerate(plain):
            char_of_byte.extend([i] * len(c.encode("utf-8", "surrogatepass")))
    offsets: list[Span] = []
    at = 0
    for piece in pieces:
        start, end = char_of_byte[at], char_of_byte[at + len(piece) - 1] + 1
        at += len(piece)
        offsets.append((start, end) if kept is None else (kept[start], kept[end - 1] + 1))
    if tok.post_processor is None:
        return offsets
    n = len(ids)
    token_of = {i: tok.id_to_token(i) or "" for i in distinct}
    tokens = [token_of[i] for i in ids]
    found = tok.post_processor.process(Encoding(list(ids), tokens, offsets, [None] * n, [0] * n, [0] * n, [1] * n),
                                       None, False)
    return list(found.offsets) if list(found.ids) == ids else None
