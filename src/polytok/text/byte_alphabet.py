"""The GPT-2 byte-to-unicode alphabet shared by every ByteLevel component.

HF tokenizers 0.23.3: tokenizers/src/pre_tokenizers/byte_level.rs (bytes_char):
the 188 printable Latin-1 bytes (``!``..``~``, ``¡``..``¬``, ``®``..``ÿ``) map to
themselves; the remaining 68 bytes, in increasing order, map to U+0100, U+0101, ...
so every byte becomes one visible, non-whitespace character.

``BYTES_TO_CHARS[b]`` is the character for byte ``b``; ``CHARS_TO_BYTES`` is the
inverse mapping.
"""

from __future__ import annotations

from typing import Any

from .._config import required


def _build_alphabet() -> list[str]:
    printable = [*range(0x21, 0x7F), *range(0xA1, 0xAD), *range(0xAE, 0x100)]
    table = [""] * 256
    for b in printable:
        table[b] = chr(b)
    extra = 0
    for b in range(256):
        if not table[b]:
            table[b] = chr(0x100 + extra)
            extra += 1
    return table


BYTES_TO_CHARS: list[str] = _build_alphabet()
CHARS_TO_BYTES: dict[str, int] = {c: b for b, c in enumerate(BYTES_TO_CHARS)}
#: the bytes UTF-8 text can hold (never 0xC0, 0xC1, 0xF5..0xFF): a byte-level vocabulary may lack the others
UTF8_BYTES: tuple[int, ...] = (*range(0xC0), *range(0xC2, 0xF5))


def byte_level_flags(d: dict[str, Any], path: str) -> tuple[bool, bool, bool]:
    """``(add_prefix_space, trim_offsets, use_regex)`` of a ByteLevel object, one struct in HF
    for all three stages: the first two are required; a missing ``use_regex`` is true, and an
    explicit null is an error (serde default, not Option)."""
    use_regex = required(d, "use_regex", bool, path) if "use_regex" in d else True
    return required(d, "add_prefix_space", bool, path), required(d, "trim_offsets", bool, path), use_regex
