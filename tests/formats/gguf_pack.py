"""Hand-packed GGUF bytes for the reader's tests, written with struct.pack only.

The layout follows llama.cpp ggml/src/gguf.cpp and gguf-py's writer: magic,
uint32 version, uint64 tensor count, uint64 KV count, then per KV a
length-prefixed key, a uint32 type and the value (arrays: uint32 element type,
uint64 count, elements).  Nothing here uses polytok.
"""

from __future__ import annotations

import struct
from typing import Any

UINT8, INT8, UINT16, INT16, UINT32, INT32, FLOAT32, BOOL, STRING, ARRAY, UINT64, INT64, FLOAT64 = range(13)
CODES = {UINT8: "B", INT8: "b", UINT16: "H", INT16: "h", UINT32: "I", INT32: "i", FLOAT32: "f",
         BOOL: "?", UINT64: "Q", INT64: "q", FLOAT64: "d"}  # fmt: skip


def pack_string(text: str | bytes, order: str = "<") -> bytes:
    raw = text.encode("utf-8") if isinstance(text, str) else text
    return struct.pack(order + "Q", len(raw)) + raw


def pack_array(item: int | tuple[int, ...], values: list[Any], order: str = "<") -> bytes:
    """An array body (element type, count, elements); ``item`` (ARRAY, X) nests."""
    inner = item[1:] if isinstance(item, tuple) else ()
    head = item[0] if isinstance(item, tuple) else item
    out = struct.pack(order + "IQ", head, len(values))
    for value in values:
        out += pack_payload(head, value, order, inner)
    return out


def pack_payload(vtype: int, value: Any, order: str = "<", inner: tuple[int, ...] = ()) -> bytes:
    if vtype == STRING:
        return pack_string(value, order)
    if vtype == ARRAY:
        return pack_array(inner if len(inner) > 1 else inner[0], value, order)
    return struct.pack(order + CODES[vtype], value)


def pack_kv(key: str | bytes, vtype: int | tuple[int, ...], value: Any, order: str = "<") -> bytes:
    """One KV; ``vtype`` is a type id, or (ARRAY, element type[, ...]) for arrays."""
    if isinstance(vtype, tuple):
        body = pack_array(vtype[1] if len(vtype) == 2 else vtype[1:], value, order)
        return pack_string(key, order) + struct.pack(order + "I", ARRAY) + body
    return pack_string(key, order) + struct.pack(order + "I", vtype) + pack_payload(vtype, value, order)


def pack_header(kv_count: int, version: int = 3, order: str = "<", tensor_count: int = 0) -> bytes:
    return b"GGUF" + struct.pack(order + "IQQ", version, tensor_count, kv_count)


def pack_gguf(kvs: list[tuple[Any, Any, Any]], version: int = 3, order: str = "<", tensor_count: int = 0) -> bytes:
    body = b"".join(pack_kv(key, vtype, value, order) for key, vtype, value in kvs)
    return pack_header(len(kvs), version, order, tensor_count) + body
