"""Hand-packed SentencePiece ModelProto bytes for tests (a few lines of protobuf writing)."""

from __future__ import annotations

import struct
from pathlib import Path

NORMAL, UNKNOWN, CONTROL, USER_DEFINED, UNUSED, BYTE = 1, 2, 3, 4, 5, 6


def varint(value: int) -> bytes:
    out = bytearray()
    value &= (1 << 64) - 1
    while True:
        byte, value = value & 0x7F, value >> 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


def field(number: int, payload: bytes | int | float) -> bytes:
    """One field: bytes are length-delimited, a float is 32-bit, an int is a varint."""
    if isinstance(payload, bytes):
        return varint(number << 3 | 2) + varint(len(payload)) + payload
    if isinstance(payload, float):
        return varint(number << 3 | 5) + struct.pack("<f", payload)
    return varint(number << 3) + varint(payload)


def piece(text: str, score: float = 0.0, kind: int = NORMAL) -> bytes:
    return field(1, field(1, text.encode()) + field(2, score) + field(3, kind))


def model(pieces: list[bytes], trainer: bytes = b"", normalizer: bytes = b"") -> bytes:
    return b"".join(pieces) + field(2, trainer) + field(3, normalizer)


def write(path: Path, pieces: list[bytes], trainer: bytes = b"", normalizer: bytes = b"") -> Path:
    path.write_bytes(model(pieces, trainer, normalizer))
    return path
