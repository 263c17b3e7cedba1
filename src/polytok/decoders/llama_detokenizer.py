"""llama.cpp's detokenizer: ids → pieces → bytes, for GGUF vocabularies.

Decode stage for the GGUF format. Reproduces llama.cpp (as vendored by
llama-cpp-python 0.3.36) ``src/llama-vocab.cpp``: ``impl::token_to_piece``
(the piece cache built at load with ``special=true``; an UNKNOWN or CONTROL
token renders empty unless special rendering is asked for; ``lstrip`` skips
leading spaces) and ``impl::detokenize`` (remove_special drops a leading BOS
and a trailing EOS only when the vocabulary adds them, and keeps the first
piece's space then; add_space_prefix removes one leading space of the first
piece; clean_spaces runs its three byte passes over the whole output).

How each vocabulary type renders a piece (first matching attribute):
- SPM, UGM, WPM: CONTROL / UNKNOWN / USER_DEFINED → the raw text; NORMAL → the
  text with ``▁`` as a space; BYTE ``<0xXX>`` → that byte; otherwise nothing.
- BPE: the same, except NORMAL → with ``escape_whitespaces`` the text with ``▁``
  as a space, else GPT-2 byte-level decoding (a character outside the byte
  alphabet writes ``[UNK_BYTE_0x<hex>…]`` as llama.cpp does).
- PLaMo-2: a BYTE ``<0xHH>`` → that byte; anything else → the raw text.
- RWKV: the `rwkv_unescape` given (its vocabulary stores escaped byte strings).
Returns bytes: pieces may end inside a UTF-8 character.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ..errors import DecodeError
from ..formats.gguf_token_attrs import ATTR_BYTE, ATTR_CONTROL, ATTR_NORMAL, ATTR_UNKNOWN, ATTR_USER_DEFINED
from ..text.byte_alphabet import CHARS_TO_BYTES
from . import IdsDecoder

_SHOWN_RAW = ATTR_CONTROL | ATTR_UNKNOWN | ATTR_USER_DEFINED
_HIDDEN = ATTR_CONTROL | ATTR_UNKNOWN


@dataclass
class LlamaDetokenizer(IdsDecoder):
    """llama.cpp's detokenizer. `decode` is ``llama_detokenize`` with ``remove_special =
    skip_special`` and ``unparse_special = not skip_special``, read as UTF-8 with U+FFFD;
    `token_bytes` is ``llama_token_to_piece(id, lstrip=0, special=true)``."""

    texts: list[str]
    attrs: list[int]
    vocab_type: str  # "spm" | "bpe" | "wpm" | "ugm" | "rwkv" | "plamo2"
    escape_whitespaces: bool = False
    clean_spaces: bool = False
    add_space_prefix: bool = False
    add_bos: bool = False
    add_eos: bool = False
    bos_id: int | None = None
    eos_id: int | None = None
    rwkv_unescape: Callable[[str], bytes] | None = None

    def __post_init__(self) -> None:
        self._cache: dict[int, bytes] = {}

    def __getstate__(self) -> dict[str, object]:
        """Pickled without the rendered pieces (rendered again as ids are met)."""
        return {**self.__dict__, "_cache": {}}

    def token_bytes(self, id: int) -> bytes:
        return self.token_to_piece(id, True)

    def decode(self, ids: list[int], *, skip_special: bool) -> str:
        return self.detokenize(ids, skip_special, not skip_special).decode("utf-8", "replace")

    def token_to_piece(self, id: int, special: bool = True, lstrip: int = 0) -> bytes:
        """``llama_token_to_piece(id, lstrip, special)``: the bytes of `id`."""
        if not (isinstance(id, int) and 0 <= id < len(self.texts)):  # llama.cpp: id_to_token.at(id) throws
            raise DecodeError(f"token id {id!r:.40} is outside the vocabulary (0..{len(self.texts) - 1})")
        if not special and self.attrs[id] & _HIDDEN:
            return b""
        piece = self._cache.get(id)
        if piece is None:
            piece = self._cache[id] = self._render(id)
        k = 0
        while k < lstrip and k < len(piece) and piece[k] == 0x20:
            k += 1
        return piece[k:]

    def _render(self, id: int) -> bytes:
        text, attr, kind = self.texts[id], self.attrs[id], self.vocab_type
        if kind == "rwkv":
            if self.rwkv_unescape is None:
                raise DecodeError("an RWKV vocabulary needs its unescape function")
            return self.rwkv_unescape(text)
        if kind == "plamo2":
            if attr & ATTR_BYTE and len(text) == 6 and text.startswith("<0x") and text.endswith(">"):
                return bytes([int(text[3:5], 16)])
            return text.encode("utf-8")
        if attr & _SHOWN_RAW:
            return text.encode("utf-8")
        if attr & ATTR_NORMAL:
            if kind != "bpe" or self.escape_whitespaces:
                return text.replace("\u2581", " ").encode("utf-8")
            return _byte_level_decode(text)
        if attr & ATTR_BYTE:
            return bytes([int(text[3:5], 16)])
        return b""

    def detokenize(self, ids: list[int], remove_special: bool = False, unparse_special: bool = False) -> bytes:
        """``llama_detokenize(ids, remove_special, unparse_special)``."""
        size = len(self.texts)
        if ids and (min(ids) < 0 or max(ids) >= size):  # llama.cpp: id_to_token.at(id) throws
            position, bad = next((p, i) for p, i in enumerate(ids) if not 0 <= i < size)
            raise DecodeError(f"position {position}: token id {bad} is outside the vocabulary (0..{size - 1})")
        remove_space = self.add_space_prefix
        if remove_special and self.add_bos and ids and ids[0] == self.bos_id:
            ids = ids[1:]
            remove_space = False
        if remove_special and self.add_eos and ids and ids[-1] == self.eos_id:
            ids = ids[:-1]
        out = bytearray()
        for id_ in ids:
            out += self.token_to_piece(id_, unparse_special, 1 if remove_space else 0)
            remove_space = False
        return _clean_spaces(out) if self.clean_spaces else bytes(out)


def _byte_level_decode(text: str) -> bytes:
    out = bytearray()
    for c in text:
        b = CHARS_TO_BYTES.get(c)
        if b is None:
            out += b"[UNK_BYTE_0x" + c.encode("utf-8").hex().encode() + text.encode("utf-8") + b"]"
        else:
            out.append(b)
    return bytes(out)


def _clean_spaces(text: bytearray) -> bytes:
    """llama.cpp's three in-place passes over the output bytes, index for index."""
    t = text
    total = _pass(t, len(t), _drop_space_before_punct)
    total = _pass_quote(t, total)
    total = _pass(t, total, _drop_space_before_contraction)
    return bytes(t[:total])


def _pass(t: bytearray, n: int, drop: Callable[[bytearray, int, int], bool]) -> int:
    total = 1 if n else 0
    for i in range(1, n):
        x = t[i]
        if drop(t, i, n):
            total -= 1
        t[total] = x
        total += 1
    return total


def _drop_space_before_punct(t: bytearray, i: int, n: int) -> bool:
    return t[i - 1] == 0x20 and t[i] in b"?!.,"


def _drop_space_before_contraction(t: bytearray, i: int, n: int) -> bool:
    if t[i - 1] != 0x20 or t[i] != 0x27 or i + 1 >= n:
        return False
    x1 = t[i + 1]
    if x1 in b"sm":
        return True
    if x1 in b"td" or i + 2 >= n:
        return False
    return (x1, t[i + 2]) in ((0x72, 0x65), (0x76, 0x65))  # 're, 've ('ll keeps its space)


def _pass_quote(t: bytearray, n: int) -> int:
    """`` ' `` with a space on each side loses both spaces (the right one is zeroed and skipped)."""
    total = 1 if n else 0
    i = 1
    while i < n:
        x = t[i]
        if x == 0x27 and i + 1 < n and t[i - 1] == 0x20 and t[i + 1] == 0x20:
            total -= 1
            i += 1
            t[i] = 0
        t[total] = x
        total += 1
        i += 1
    return total
