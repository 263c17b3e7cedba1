"""A small reader of the protobuf wire format (proto2), for the few messages polytok reads.

Used by `polytok.formats.sentencepiece` to read SentencePiece's ``ModelProto``.
Follows the encoding rules of https://protobuf.dev/programming-guides/encoding/
as protobuf's C++ parser applies them to proto2 messages (the parser
sentencepiece 0.2.3 links): varints of up to 10 bytes, an ``int32`` is the low
32 bits of its varint read as signed, a ``bool`` is any non-zero varint, a
``float`` is 4 little-endian bytes; a singular field seen twice keeps the last
value (a message field merges both); a repeated field appends; unknown fields,
groups included, are skipped; an enum value outside the enum leaves the field
unset (proto2 keeps it among the unknown fields).

Why not the ``protobuf`` package: polytok has no runtime dependency besides
``regex``; it needs a dozen fields of four messages; and a hand-written reader
can say *where* a file is broken (byte offset and field path) instead of
protobuf's bare ``DecodeError``.

A schema is ``{field number: Field}``; `read_message` returns ``{name: value}``
holding only the fields present (the caller applies the proto defaults, which
is also how proto2 presence such as ``has_unk_surface()`` is kept).
"""

from __future__ import annotations

import struct
from typing import Any

from ..errors import FormatError

__all__ = ["Field", "merge_fields", "read_message", "read_varint", "skip_field", "WireError"]

VARINT, FIXED64, LENGTH, START_GROUP, END_GROUP, FIXED32 = 0, 1, 2, 3, 4, 5
_WIRE_NAMES = {VARINT: "varint", FIXED64: "64-bit", LENGTH: "length-delimited", START_GROUP: "group start",
               END_GROUP: "group end", FIXED32: "32-bit"}
_FLOAT = struct.Struct("<f")


class WireError(FormatError):
    """A protobuf message that cannot be read; the message names the field path and byte offset."""


class Field:
    """One field of a schema (read-only by convention).

    kind: ``"string"`` (UTF-8), ``"bytes"``, ``"bool"``, ``"int32"``, ``"uint64"``,
    ``"float"``, ``"enum"`` (with `values`) or ``"message"`` (with `schema`).

    A plain class rather than a frozen dataclass: building a dataclass costs about a
    millisecond at import, and this module is imported by every ``.model`` load.
    """

    __slots__ = ("name", "kind", "repeated", "schema", "values")

    def __init__(self, name: str, kind: str, repeated: bool = False, schema: dict[int, Field] | None = None,
                 values: frozenset[int] = frozenset()) -> None:
        self.name = name
        self.kind = kind
        self.repeated = repeated
        self.schema = schema
        self.values = values

    def __repr__(self) -> str:
        return f"Field({self.name!r}, {self.kind!r})"

    @property
    def wire(self) -> int:
        if self.kind in ("string", "bytes", "message"):
            return LENGTH
        return FIXED32 if self.kind == "float" else VARINT


def _error(file: str | None, path: str, offset: int, reason: str) -> WireError:
    return WireError(reason, file=file, key=path or None, offset=offset)


def read_varint(data: bytes, pos: int, end: int, file: str | None = None, path: str = "") -> tuple[int, int]:
    """``(value, next position)`` of the varint at `pos` (at most 10 bytes, before `end`)."""
    result = shift = 0
    start = pos
    while True:
        if pos >= end:
            raise _error(file, path, start, "truncated varint (the data ends inside it)")
        byte = data[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if byte < 0x80:
            return result & 0xFFFFFFFFFFFFFFFF, pos
        shift += 7
        if shift >= 70:
            raise _error(file, path, start, "varint longer than 10 bytes")


def skip_field(data: bytes, pos: int, end: int, wire: int, number: int, file: str | None, path: str,
          depth: int = 0) -> int:
    """Position after the value of an unknown field of wire type `wire`."""
    if wire == VARINT:
        return read_varint(data, pos, end, file, path)[1]
    if wire in (FIXED64, FIXED32):
        stop = pos + (8 if wire == FIXED64 else 4)
    elif wire == LENGTH:
        size, pos = read_varint(data, pos, end, file, path)
        stop = pos + size
    elif wire == START_GROUP and depth < 64:
        while True:
            tag_at = pos
            tag, pos = read_varint(data, pos, end, file, path)
            if tag & 7 == END_GROUP:
                if tag >> 3 != number:
                    raise _error(file, path, tag_at, f"group {number} closed as field {tag >> 3}")
                return pos
            pos = skip_field(data, pos, end, tag & 7, tag >> 3, file, path, depth + 1)
    else:
        raise _error(file, path, pos, f"invalid wire type {wire} for field {number}")
    if stop > end:
        raise _error(file, path, pos, f"field {number} runs {stop - end} bytes past the end of its message")
    return stop


def read_message(data: bytes, start: int, end: int, schema: dict[int, Field], *,
                 file: str | None = None, path: str = "") -> dict[str, Any]:
    """The fields of the message in ``data[start:end]`` that `schema` names, as ``{name: value}``."""
    out: dict[str, Any] = {}
    pos = start
    while pos < end:
        tag_at = pos
        tag, pos = read_varint(data, pos, end, file, path)
        number, wire = tag >> 3, tag & 7
        if number == 0:
            raise _error(file, path, tag_at, "field number 0 (not a protobuf message, or corrupt)")
        field = schema.get(number)
        if field is None:
            pos = skip_field(data, pos, end, wire, number, file, path)
            continue
        where = f"{path}.{field.name}" if path else field.name
        if wire != field.wire:
            raise _error(file, where, tag_at, f"expected a {_WIRE_NAMES[field.wire]} value for field {number}, "
                                              f"found wire type {_WIRE_NAMES.get(wire, wire)}")
        value, pos = _read_value(data, pos, end, field, file, where, out.get(field.name))
        if value is _UNSET:
            continue
        if field.repeated:
            out.setdefault(field.name, []).append(value)
        else:
            out[field.name] = value
    return out


_UNSET = object()


def merge_fields(old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    """A singular message seen twice: later scalars win, repeated fields append (protobuf MergeFrom).

    `old` is updated in place and returned: a file may repeat a message thousands of
    times, and copying the fields gathered so far at each repeat would make loading
    quadratic in the file's length.
    """
    for name, value in new.items():
        kept = old.get(name)
        if isinstance(value, list) and isinstance(kept, list):
            kept.extend(value)
        else:
            old[name] = value
    return old


def _read_value(data: bytes, pos: int, end: int, field: Field, file: str | None, where: str,
                previous: Any) -> tuple[Any, int]:
    kind = field.kind
    if kind == "float":
        if pos + 4 > end:
            raise _error(file, where, pos, "truncated float")
        return _FLOAT.unpack_from(data, pos)[0], pos + 4
    if field.wire == VARINT:
        raw, pos = read_varint(data, pos, end, file, where)
        if kind == "bool":
            return raw != 0, pos
        if kind == "uint64":
            return raw, pos
        value = raw & 0xFFFFFFFF
        value = value - (1 << 32) if value >= 1 << 31 else value
        if kind == "enum" and value not in field.values:
            return _UNSET, pos
        return value, pos
    size_at = pos
    size, pos = read_varint(data, pos, end, file, where)
    stop = pos + size
    if stop > end:
        raise _error(file, where, size_at, f"length {size} runs {stop - end} bytes past the end of its message")
    if kind == "message":
        assert field.schema is not None
        fields = read_message(data, pos, stop, field.schema, file=file, path=where)
        if previous is not None and not field.repeated:
            fields = merge_fields(previous, fields)
        return fields, stop
    raw_bytes = data[pos:stop]
    if kind == "bytes":
        return raw_bytes, stop
    try:
        return raw_bytes.decode("utf-8"), stop
    except UnicodeDecodeError as exc:
        raise _error(file, where, pos + exc.start, "string field is not valid UTF-8") from None
