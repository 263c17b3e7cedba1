"""RWKV model: greedy longest byte match over an escaped vocabulary (GGUF model ``rwkv``).

Stage: model. No ``tokenizer.json`` type; the GGUF reader builds it from the token texts.

Reproduces llama.cpp (llama-cpp-python 0.3.36, vendor/llama.cpp/src/llama-vocab.cpp):
``llama_unescape_rwkv_token``, ``llm_tokenizer_rwkv`` and
``llm_tokenizer_rwkv_session::tokenize`` (lines 1258-1365); reference/llama_vocab.md §6.5.

* Token texts are un-escaped into bytes: ``\\t``, ``\\n``, ``\\r``; ``\\xHH``
  where each of the two characters is read as ``c - 'a' + 10`` if ``c`` is in
  ``a..\\x7f`` else ``c - '0'`` (so only lower-case hex means what it says;
  ``\\xAB`` decodes to a different byte, reproduced), modulo 256; ``\\c`` for
  any other ``c`` is ``c``; other bytes are literal.
* Every token, whatever its type, is a key; a text listed twice maps to its
  last id. So control texts such as ``<s>`` are matched from plain text.
* Matching works on the UTF-8 bytes of the piece: at each position the longest
  key that starts there wins. A byte with no key starting with it gives
  `unk_id` (llama.cpp's ``special_unk_id``; -1, ``LLAMA_TOKEN_NULL``, when the
  vocabulary has none) and one byte is skipped.
* If keys start with the byte but none of the walked prefixes is a whole key,
  llama.cpp emits id 0 and restarts from position 0 of the piece, which never
  ends; here that raises `EncodeError`. A vocabulary with all 256 one-byte
  tokens (RWKV's world vocabulary) never reaches it.

The ``rwkv`` package's ``TRIE_TOKENIZER`` (rwkv 0.8.32, rwkv/rwkv_tokenizer.py:
``TRIE.find_longest`` and ``TRIE_TOKENIZER.encodeBytes``) is the same greedy
longest match over byte keys: it walks the trie while a child exists and keeps
the last node that ends a token. The engines differ only where no token
matches, which the option ``missing_byte`` names:

- ``"unk"`` (llama.cpp, default): a byte no key starts with gives `unk_id`,
  and one byte is skipped;
- ``"error"`` (``TRIE_TOKENIZER``): ``find_longest`` fails (an unbound local
  in rwkv 0.8.32); here `EncodeError`.

Ids without a token (the world vocabulary starts at id 1) are None in `tokens`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from ..bounded_cache import BoundedCache
from ..errors import EncodeError, not_utf8
from ._cache import WordCache
from ._vocab import byte_spans_to_chars
from .base import ModelBase

_SIMPLE_ESCAPES = {ord("t"): 0x09, ord("n"): 0x0A, ord("r"): 0x0D}


def unescape(text: str) -> bytes:
    """The bytes an RWKV token text stands for (llama.cpp ``llama_unescape_rwkv_token``)."""
    out = bytearray()
    escaping = False
    hex_left = hex_value = 0
    for byte in text.encode("utf-8", "surrogateescape"):
        if hex_left:
            digit = byte - 0x61 + 10 if 0x61 <= byte <= 0x7F else byte - 0x30
            hex_value = ((hex_value << 4) + digit) & 0xFF
            hex_left -= 1
            if not hex_left:
                out.append(hex_value)
                hex_value = 0
        elif escaping:
            escaping = False
            if byte == 0x78:  # x
                hex_left = 2
            else:
                out.append(_SIMPLE_ESCAPES.get(byte, byte))
        elif byte == 0x5C:  # backslash
            escaping = True
        else:
            out.append(byte)
    return bytes(out)


class RWKV(ModelBase):
    """Greedy longest-match tokenizer over un-escaped byte keys, as llama.cpp's RWKV session.

    Args:
        tokens: the token texts as stored (escaped); a token's id is its index,
            None where an id has no token.
        unk_id: the id emitted for a byte no key starts with (None: -1, as llama.cpp).
        missing_byte: ``"unk"`` (llama.cpp) emits `unk_id` for such a byte;
            ``"error"`` (rwkv's ``TRIE_TOKENIZER``) raises `EncodeError`.
    """

    def __init__(self, tokens: Sequence[str | None], unk_id: int | None = None, *,
                 missing_byte: Literal["unk", "error"] = "unk") -> None:
        if missing_byte not in ("unk", "error"):
            raise ValueError(f"missing_byte must be 'unk' or 'error', not {missing_byte!r}")
        self._pieces = list(tokens)
        self._ids = {piece: index for index, piece in enumerate(self._pieces) if piece is not None}
        self._keys: dict[bytes, int] = {}
        prefixes: set[bytes] = set()
        for index, piece in enumerate(self._pieces):
            if piece is None:
                continue
            key = unescape(piece)
            self._keys[key] = index
            prefixes.update(key[:k] for k in range(1, len(key) + 1))
        self._prefixes = prefixes
        self._unk_id = -1 if unk_id is None else unk_id
        self._missing_is_error = missing_byte == "error"
        self._cache = WordCache()

    def tokenize(self, piece: str) -> list[int]:
        ids = self._cache.get(piece)
        if ids is None:
            try:
                ids = self._match(piece.encode("utf-8", "surrogateescape"))[0]
            except UnicodeEncodeError as exc:
                raise not_utf8(exc) from None
            self._cache.remember(piece, ids)
        return ids[:]

    def tokenize_spans(self, piece: str) -> list[tuple[int, int, int]]:
        ids, lengths = self._match(piece.encode("utf-8", "surrogateescape"))
        return byte_spans_to_chars(piece, ids, lengths)

    def token_to_id(self, token: str) -> int | None:
        return self._ids.get(token)

    def id_to_token(self, id: int) -> str | None:
        return self._pieces[id] if 0 <= id < len(self._pieces) else None

    def token_bytes(self, id: int) -> bytes:
        """The bytes token `id` stands for (its text un-escaped); KeyError for an id without a token."""
        piece = self._pieces[id] if 0 <= id < len(self._pieces) else None
        if piece is None:
            raise KeyError(id)
        return unescape(piece)

    def get_vocab(self) -> dict[str, int]:
        return dict(self._ids)

    def vocab_size(self) -> int:
        return len(self._pieces)

    def caches(self) -> list[BoundedCache[Any]]:
        return [self._cache]

    def _match(self, data: bytes) -> tuple[list[int], list[int]]:
        """Ids and their byte lengths, left to right."""
        keys, prefixes = self._keys, self._prefixes
        ids: list[int] = []
        lengths: list[int] = []
        position, size = 0, len(data)
        while position < size:
            if data[position:position + 1] not in prefixes:
                if self._missing_is_error:
                    raise EncodeError(f"RWKV: no token starts with byte {data[position:position + 1]!r}"
                                      f" at byte {position} (rwkv's TRIE_TOKENIZER fails here too)")
                ids.append(self._unk_id)
                lengths.append(1)
                position += 1
                continue
            best = 0
            end = position + 1
            while end <= size and data[position:end] in prefixes:
                if data[position:end] in keys:
                    best = end - position
                end += 1
            if not best:
                raise EncodeError(f"RWKV: no token is a prefix of {data[position:end - 1]!r}"
                                  f" at byte {position} (llama.cpp loops forever here)")
            ids.append(keys[data[position:position + best]])
            lengths.append(best)
            position += best
        return ids, lengths
