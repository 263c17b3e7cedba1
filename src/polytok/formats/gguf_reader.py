"""GGUF metadata reader: the header and the key/value section of any ``.gguf``, nothing else.

Format reference: llama.cpp ggml/src/gguf.cpp (gguf_init_from_reader and the
gguf_reader read helpers) as vendored in llama-cpp-python 0.3.36, and gguf-py
0.19.0 gguf/gguf_reader.py (GGUFReader.__init__, _get_field_parts).  A file is
"GGUF", a uint32 version, uint64 tensor count, uint64 KV count, then per KV a
string key (uint64 length + UTF-8 bytes), a uint32 value type and the value; an
array is a uint32 element type, a uint64 count and the elements.  The tensor
infos and data that follow are never touched: the file is memory-mapped and only
the pages of the KV section are read, so a multi-gigabyte model costs what its
vocabulary costs.

Where llama.cpp and gguf-py differ, or where this reader chooses:
  - version 1 (uint32 lengths) is rejected, as both do; versions above 3 too.
  - big-endian files (their version reads with the low 16 bits zero, gguf-py's
    test) are read as big-endian, as gguf-py does; gguf.cpp refuses them.
  - nested arrays are read (gguf-py reads them; gguf.cpp rejects an ARRAY
    element type).  Nesting deeper than MAX_NESTING is rejected.
  - a duplicate or empty key is rejected: gguf.cpp fails the load on both
    ("duplicate key", "key is empty"), gguf-py raises on duplicates.
  - BOOL is any non-zero byte (gguf.cpp ``tmp != 0``).
  - ``general.alignment`` must be UINT32, non-zero and a power of two (both).
  - strings must be valid UTF-8 (gguf-py decodes strictly; gguf.cpp keeps bytes).

Safety: every length and count is checked against the bytes that remain before
anything is sliced or allocated (an element needs at least its fixed size, a
string its length field, an inner array its type and count), so a count of
2**63 fails at once; arrays of arrays are capped at MAX_INNER_ARRAYS in all.  Errors are
`FormatError`s naming the file, the key ("header" or "kv[i]" until the key is
read; "key[index]" inside arrays) and the byte offset.

Performance notes (gemma-4's vocab: 262k tokens and 515k merges, 15.8 MB of
KV section; ~0.3 s here): the string loop is the hot path.  Slicing the mmap (or
bytes) and calling ``.decode()`` beat ``str(memoryview[a:b], "utf-8")`` by ~35%
and ``int.from_bytes`` lengths by ~10%; a two-pass "offsets first, decode after"
loop was slower still.  Lengths come from a bound ``Struct.unpack_from``, bound
checks are one comparison per string, and a short read is caught as
``struct.error`` outside the loop.  Numeric arrays are one copy of their bytes into
an ``array.array`` (a 64 MiB UINT8 array costs 64 MiB, not 1.1 GB of ints).
(gguf-py's GGUFReader needs ~2 min for the 19 vocab files.)  With the compiled
kernels, ``polytok._kernels.wire.gguf_strings`` reads a whole string array in one
call; on a string that does not fit or is not UTF-8 it answers None and the loop
here runs, so the error is the same.  A caller that reads an array itself (a GGUF
load's merges: `polytok.formats.gguf`) names it in ``raw_strings``: with the
kernels, its strings are checked in place (``gguf_string_array_end``: the same
checks, no str made) and kept as their bytes, a `GGUFStrings`.
"""

from __future__ import annotations

import array as array_module
import mmap
import os
import struct
from array import array
from collections.abc import Collection, Iterator, Sequence
from dataclasses import dataclass
from enum import IntEnum
from typing import Any, overload

from .. import kernels
from ..errors import FormatError
from .gguf_keys import General

__all__ = ["ValueType", "GGUFMetadata", "GGUFStrings", "read_gguf_metadata", "parse_gguf_metadata", "MAX_NESTING",
           "MAX_INNER_ARRAYS"]

MAGIC = b"GGUF"
SUPPORTED_VERSIONS = (2, 3)
DEFAULT_ALIGNMENT = 32
MAX_NESTING = 16
# llama.cpp refuses arrays of arrays outright; polytok reads them as gguf-py does,
# but at most this many inner arrays per file, so a file of millions of empty
# inner arrays (12 bytes each) is refused instead of walked one by one.
MAX_INNER_ARRAYS = 1 << 16


class ValueType(IntEnum):
    """GGUF value types (gguf.h enum gguf_type; gguf-py GGUFValueType)."""

    UINT8 = 0
    INT8 = 1
    UINT16 = 2
    INT16 = 3
    UINT32 = 4
    INT32 = 5
    FLOAT32 = 6
    BOOL = 7
    STRING = 8
    ARRAY = 9
    UINT64 = 10
    INT64 = 11
    FLOAT64 = 12


# struct code of each fixed-size type; BOOL reads as a byte and is tested != 0.
_CODES = {
    ValueType.UINT8: "B", ValueType.INT8: "b", ValueType.UINT16: "H", ValueType.INT16: "h",
    ValueType.UINT32: "I", ValueType.INT32: "i", ValueType.FLOAT32: "f", ValueType.BOOL: "B",
    ValueType.UINT64: "Q", ValueType.INT64: "q", ValueType.FLOAT64: "d",
}  # fmt: skip
_SIZES = {vtype: struct.calcsize(code) for vtype, code in _CODES.items()}
# Numeric arrays are kept as array.array (one machine value per element, not a
# Python int each): the struct codes are array typecodes of the same size here.
assert all(array(code).itemsize == _SIZES[vtype] for vtype, code in _CODES.items())
_BOOL_BYTES = bytes([0]) + bytes([1]) * 255  # translate table: any non-zero byte is True
# Fewest bytes one element can take: a string is at least its length field, an
# array its element type and count.
_MIN_SIZE = {**_SIZES, ValueType.STRING: 8, ValueType.ARRAY: 12}


@dataclass(frozen=True, slots=True)
class GGUFMetadata:
    """The header and KV section of a GGUF file.

    ``kv`` maps each key, in file order, to its Python value (int, float, bool,
    str; an array of strings is a list, an array of numbers an `array.array` of
    the same item size (BOOL as 0/1 bytes), an array of arrays a list of them).  ``types``
    gives each key's GGUF types: ``(UINT32,)``, ``(ARRAY, STRING)``, and for
    nested arrays the element types of the first element, as gguf-py's
    ``ReaderField.types``.  ``kv_end`` is the byte offset where the KV section
    ends (the tensor infos start there).
    """

    file: str
    version: int
    byte_order: str
    tensor_count: int
    kv: dict[str, Any]
    types: dict[str, tuple[ValueType, ...]]
    alignment: int
    kv_end: int


class GGUFStrings(Sequence[str]):
    """A top-level array of strings kept as its bytes (checked: every length fits, every string
    is UTF-8), for a reader that reads them itself (``polytok._kernels.wire.gguf_merges``):
    no str per string until one is asked for; then all of them are decoded once."""

    __slots__ = ("data", "length", "big_endian", "_decoded")

    def __init__(self, data: bytes, length: int, big_endian: bool) -> None:
        self.data, self.length, self.big_endian = data, length, big_endian
        self._decoded: list[str] | None = None

    def decoded(self) -> list[str]:
        """The strings as a list (decoded on the first call)."""
        if self._decoded is None:
            reader = _Reader(self.data, "<strings>")
            reader.order = ">" if self.big_endian else "<"
            self._decoded = reader.strings("strings", self.length)
        return self._decoded

    def __len__(self) -> int:
        return self.length

    @overload
    def __getitem__(self, index: int) -> str: ...
    @overload
    def __getitem__(self, index: slice) -> list[str]: ...
    def __getitem__(self, index: int | slice) -> str | list[str]:
        return self.decoded()[index]

    def __iter__(self) -> Iterator[str]:
        return iter(self.decoded())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, GGUFStrings):
            return self.decoded() == other.decoded()
        return isinstance(other, list) and self.decoded() == other

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"GGUFStrings({self.length} strings, {len(self.data)} bytes)"


def read_gguf_metadata(path: str | os.PathLike[str], *, raw_strings: Collection[str] = ()) -> GGUFMetadata:
    """Read the header and KV section of a GGUF file through a memory map.

    Args:
        path: a ``.gguf`` file (vocab-only or a whole model; v2 or v3, either byte order).
        raw_strings: keys whose array of strings is kept as a `GGUFStrings` (when the
            compiled kernels are there) instead of a list: checked as the list would be.

    Returns:
        The `GGUFMetadata`.

    Raises:
        FormatError: the file is missing, truncated or invalid (names file, key, offset).
    """
    name = str(path)
    try:
        with open(path, "rb") as f:
            if os.fstat(f.fileno()).st_size == 0:
                raise FormatError("file is empty, expected the GGUF magic", file=name, key="header", offset=0)
            with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
                return parse_gguf_metadata(mapped, file=name, raw_strings=raw_strings)
    except OSError as err:
        raise FormatError(f"cannot read the file: {err}", file=name) from err


def parse_gguf_metadata(data: bytes | bytearray | memoryview | mmap.mmap, *, file: str = "<bytes>",
                        raw_strings: Collection[str] = ()) -> GGUFMetadata:
    """Parse the header and KV section of GGUF bytes (see `read_gguf_metadata`)."""
    if not isinstance(data, (bytes, mmap.mmap)):
        data = bytes(data)
    reader = _Reader(data, file)
    reader.raw_strings = frozenset(raw_strings)
    return reader.metadata()


class _Reader:
    """A cursor over the file's bytes that checks every read against the end."""

    def __init__(self, data: bytes | mmap.mmap, file: str) -> None:
        # Slices of bytes and of an mmap are bytes, whose .decode() is the
        # quickest way from a slice to a str (memoryview + str() measured slower; bench/README.md).
        self.data = data
        self.end = len(data)
        self.file = file
        self.pos = 0
        self.order = "<"
        self.inner_arrays = 0
        self.kernel = kernels.kernel("wire")  # the string arrays in one call; None: the loop below
        self.raw_strings: frozenset[str] = frozenset()  # keys read as GGUFStrings (with the kernel)

    def fail(self, reason: str, key: str, offset: int) -> FormatError:
        return FormatError(reason, file=self.file, key=key, offset=offset)

    def need(self, size: int, key: str, what: str) -> None:
        if size > self.end - self.pos:
            left = self.end - self.pos
            raise self.fail(f"truncated: {what} needs {size} bytes, {left} remain", key, self.pos)

    def fixed(self, vtype: ValueType, key: str) -> Any:
        self.need(_SIZES[vtype], key, vtype.name)
        (value,) = struct.unpack_from(self.order + _CODES[vtype], self.data, self.pos)
        self.pos += _SIZES[vtype]
        return value != 0 if vtype is ValueType.BOOL else value

    def string(self, key: str) -> str:
        size = self.fixed(ValueType.UINT64, key)
        self.need(size, key, f"a string of length {size}")
        try:
            text = self.data[self.pos : self.pos + size].decode()
        except UnicodeDecodeError as err:
            raise self.fail(f"invalid UTF-8 in a string: {err.reason}", key, self.pos + err.start) from None
        self.pos += size
        return text

    def value_type(self, key: str) -> ValueType:
        offset = self.pos
        raw = self.fixed(ValueType.UINT32, key)
        try:
            return ValueType(raw)
        except ValueError:
            raise self.fail(f"unknown GGUF value type {raw}", key, offset) from None

    def metadata(self) -> GGUFMetadata:
        version, tensor_count, kv_count = self.header()
        kv: dict[str, Any] = {}
        types: dict[str, tuple[ValueType, ...]] = {}
        align_at = 0
        for i in range(kv_count):
            offset = self.pos
            key = self.string(f"kv[{i}]")
            if not key:
                raise self.fail("empty key (llama.cpp rejects it)", f"kv[{i}]", offset)
            if key in kv:
                raise self.fail("duplicate key (llama.cpp refuses the file)", key, offset)
            kv[key], types[key] = self.value(key, 0)
            align_at = offset if key == General.ALIGNMENT else align_at
        alignment = self.alignment(kv, types, align_at)
        byte_order = "little" if self.order == "<" else "big"
        return GGUFMetadata(self.file, version, byte_order, tensor_count, kv, types, alignment, self.pos)

    def header(self) -> tuple[int, int, int]:
        self.need(4, "header", "the magic")
        magic = bytes(self.data[:4])
        if magic != MAGIC:
            raise self.fail(f"not a GGUF file: magic {magic!r}, expected {MAGIC!r}", "header", 0)
        self.pos = 4
        version = self.fixed(ValueType.UINT32, "header")
        if version & 0xFFFF == 0 and version:
            # subtle: a big-endian file's small version reads as v << 24 here.
            self.order = ">"
            version = int.from_bytes(self.data[4:8], "big")
        if version not in SUPPORTED_VERSIONS:
            hint = " (GGUF v1 is obsolete; re-convert the model)" if version == 1 else ""
            raise self.fail(f"unsupported GGUF version {version}{hint}; polytok reads 2 and 3", "header", 4)
        counts = []
        for what in ("tensor count", "KV count"):
            offset = self.pos
            count = self.fixed(ValueType.UINT64, "header")
            if count >= 1 << 63:
                raise self.fail(f"{what} {count} is negative as llama.cpp's int64", "header", offset)
            counts.append(count)
        tensor_count, kv_count = counts
        # Each KV takes at least a key length, a type and a one-byte value.
        if kv_count * 13 > self.end - self.pos:
            raise self.fail(f"KV count {kv_count} cannot fit in the {self.end - self.pos} bytes left", "header", 16)
        return version, tensor_count, kv_count

    def value(self, key: str, depth: int) -> tuple[Any, tuple[ValueType, ...]]:
        vtype = self.value_type(key)
        if vtype is ValueType.STRING:
            return self.string(key), (vtype,)
        if vtype is not ValueType.ARRAY:
            return self.fixed(vtype, key), (vtype,)
        return self.array(key, depth)

    def array(self, key: str, depth: int) -> tuple[Any, tuple[ValueType, ...]]:
        if depth >= MAX_NESTING:
            raise self.fail(f"arrays nested deeper than {MAX_NESTING}", key, self.pos)
        item = self.value_type(key)
        offset = self.pos
        count = self.fixed(ValueType.UINT64, key)
        if count > (self.end - self.pos) // _MIN_SIZE[item]:
            left = self.end - self.pos
            raise self.fail(f"array of {count} {item.name} cannot fit in the {left} bytes left", key, offset)
        if item is ValueType.STRING:
            if depth == 0 and key in self.raw_strings and self.kernel is not None:
                end = self.kernel.gguf_string_array_end(self.data, self.pos, self.end, count, self.order == ">")
                if end is not None:  # None: the loop in `strings` says what is wrong, and where
                    raw = GGUFStrings(bytes(self.data[self.pos : end]), count, self.order == ">")
                    self.pos = end
                    return raw, (ValueType.ARRAY, item)
            return self.strings(key, count), (ValueType.ARRAY, item)
        if item is not ValueType.ARRAY:
            return self.numbers(item, key, count), (ValueType.ARRAY, item)
        self.inner_arrays += count
        if self.inner_arrays > MAX_INNER_ARRAYS:
            reason = f"more than {MAX_INNER_ARRAYS} arrays nested in arrays (llama.cpp refuses any)"
            raise self.fail(reason, key, offset)
        values: list[Any] = []
        inner: tuple[ValueType, ...] = (ValueType.ARRAY, ValueType.ARRAY)
        for i in range(count):
            # each element array declares its own element type and count
            value, types = self.array(f"{key}[{i}]", depth + 1)
            values.append(value)
            inner = (ValueType.ARRAY, *types) if i == 0 else inner
        return values, inner

    def numbers(self, item: ValueType, key: str, count: int) -> array_module.array[Any]:
        """``count`` values as one compact `array.array` (BOOL as 0/1 bytes): no Python int per element."""
        size = _SIZES[item] * count
        self.need(size, key, f"{count} {item.name} values")
        raw = self.data[self.pos : self.pos + size]
        values = array(_CODES[item], raw.translate(_BOOL_BYTES) if item is ValueType.BOOL else raw)
        if self.order == ">" and _SIZES[item] > 1:
            values.byteswap()
        self.pos += size
        return values

    def strings(self, key: str, count: int) -> list[str]:
        """The hot loop: ``count`` length-prefixed strings, each decoded once."""
        if self.kernel is not None:
            # None: a string does not fit or is not UTF-8; the loop below says which, and where
            read = self.kernel.gguf_strings(self.data, self.pos, self.end, count, self.order == ">")
            if read is not None:
                out_list: list[str]
                out_list, self.pos = read
                return out_list
        data, end, pos, i = self.data, self.end, self.pos, 0
        length = struct.Struct(self.order + "Q").unpack_from
        out: list[str] = []
        append = out.append
        try:
            for i in range(count):  # noqa: B007 - `i` names the failing string in the errors below
                (size,) = length(data, pos)
                start = pos + 8
                pos = start + size
                if pos > end:
                    break
                append(data[start:pos].decode())
        except struct.error:
            reason = f"truncated: a string length needs 8 bytes, {end - pos} remain"
            raise self.fail(reason, f"{key}[{i}]", pos) from None
        except UnicodeDecodeError as err:
            reason = f"invalid UTF-8 in a string: {err.reason}"
            raise self.fail(reason, f"{key}[{i}]", start + err.start) from None
        if pos > end:
            self.pos = start
            self.need(size, f"{key}[{i}]", f"a string of length {size}")
        self.pos = pos
        return out

    def alignment(self, kv: dict[str, Any], types: dict[str, tuple[ValueType, ...]], offset: int) -> int:
        key = General.ALIGNMENT
        if key not in kv:
            return DEFAULT_ALIGNMENT
        if types[key] != (ValueType.UINT32,):
            raise self.fail(f"must be UINT32, not {types[key][0].name}", key, offset)
        if kv[key] == 0 or kv[key] & (kv[key] - 1):
            raise self.fail(f"alignment {kv[key]} is not a power of two", key, offset)
        return int(kv[key])
