"""GGUF tensor infos, checked as llama.cpp checks them before any tensor byte is copied.

Reproduces the checks of llama.cpp ggml/src/gguf.cpp ``gguf_init_from_reader``
(llama-cpp-python 0.3.36): per tensor a name shorter than GGML_MAX_NAME (64)
and not repeated, at most 4 dimensions, none negative, an element count that fits
in int64, a known ggml type whose block size divides the first dimension, then a
uint64 offset; the data section starts at the KV/info end padded to the
alignment, and each tensor's offset must be exactly where the previous one ended,
padded (so no gap, no overlap, no wrap-around).  As llama-model-loader.cpp does,
every tensor's bytes must lie inside the file.  Block and type sizes are ggml.c's
``type_traits`` (blck_size, type_size); ids ggml no longer defines have none.
"""

from __future__ import annotations

import mmap
import os
import struct
from dataclasses import dataclass

from ..errors import FormatError
from .gguf_reader import GGUFMetadata, parse_gguf_metadata

__all__ = ["TensorInfo", "read_gguf_tensors"]

MAX_NAME = 64
MAX_DIMS = 4
INT64_MAX = (1 << 63) - 1
# ggml type id -> (block size, bytes per block), ggml.c type_traits / ggml-common.h
GGML_TYPES: dict[int, tuple[int, int]] = {
    0: (1, 4), 1: (1, 2), 2: (32, 18), 3: (32, 20), 6: (32, 22), 7: (32, 24), 8: (32, 34), 9: (32, 40),
    10: (256, 84), 11: (256, 110), 12: (256, 144), 13: (256, 176), 14: (256, 210), 15: (256, 292),
    16: (256, 66), 17: (256, 74), 18: (256, 98), 19: (256, 50), 20: (32, 18), 21: (256, 110), 22: (256, 82),
    23: (256, 136), 24: (1, 1), 25: (1, 2), 26: (1, 4), 27: (1, 8), 28: (1, 8), 29: (256, 56), 30: (1, 2),
    34: (256, 54), 35: (256, 66), 39: (32, 17), 40: (64, 36), 41: (128, 18), 42: (64, 18),
}  # fmt: skip


@dataclass(frozen=True, slots=True)
class TensorInfo:
    """One tensor: its name, dims, ggml type, offset in the data section and size in bytes."""

    name: str
    dims: tuple[int, ...]
    ggml_type: int
    offset: int
    nbytes: int


def read_gguf_tensors(path: str | os.PathLike[str]) -> tuple[GGUFMetadata, list[TensorInfo]]:
    """The metadata and the checked tensor infos of a GGUF file (see the module notes).

    Raises:
        FormatError: the file is unreadable, or a tensor info or its data is out of bounds (names the tensor).
    """
    name = str(path)
    try:
        with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as data:
            meta = parse_gguf_metadata(data, file=name)
            return meta, _Infos(data, meta).read()
    except FormatError:
        raise
    except (OSError, ValueError) as err:  # ValueError: mmap of an empty file
        raise FormatError(f"cannot read the file: {err}", file=name) from err


class _Infos:
    def __init__(self, data: mmap.mmap, meta: GGUFMetadata) -> None:
        self.data, self.meta, self.pos, self.end = data, meta, meta.kv_end, len(data)
        self.order = "<" if meta.byte_order == "little" else ">"

    def fail(self, reason: str, key: str) -> FormatError:
        return FormatError(reason, file=self.meta.file, key=key, offset=self.pos)

    def unpack(self, code: str, key: str) -> int:
        size = struct.calcsize(code)
        if size > self.end - self.pos:
            raise self.fail(f"truncated: {size} bytes needed, {self.end - self.pos} remain", key)
        (value,) = struct.unpack_from(self.order + code, self.data, self.pos)
        self.pos += size
        return int(value)

    def read(self) -> list[TensorInfo]:
        count = self.meta.tensor_count
        # each info needs at least a name length, n_dims, type and offset (8 + 4 + 4 + 8 bytes)
        if count * 24 > self.end - self.pos:
            raise self.fail(f"{count} tensor infos cannot fit in the {self.end - self.pos} bytes left", "header")
        infos: list[TensorInfo] = []
        seen: set[str] = set()
        for i in range(count):
            info = self.info(f"tensor[{i}]")
            if info.name in seen:
                raise self.fail(f"duplicate tensor name {info.name!r} (llama.cpp refuses the file)", f"tensor[{i}]")
            seen.add(info.name)
            infos.append(info)
        self.check_data(infos)
        return infos

    def info(self, key: str) -> TensorInfo:
        size = self.unpack("Q", key)
        if size >= MAX_NAME or size > self.end - self.pos:
            raise self.fail(f"tensor name of {size} bytes (llama.cpp allows < {MAX_NAME})", key)
        raw = bytes(self.data[self.pos : self.pos + size])
        self.pos += size
        name = raw.decode("utf-8", "replace")
        key = f"tensor {name!r}"
        n_dims = self.unpack("I", key)
        if n_dims > MAX_DIMS:
            raise self.fail(f"{n_dims} dimensions, llama.cpp allows {MAX_DIMS}", key)
        dims = tuple(self.unpack("q", key) for _ in range(n_dims))
        count = 1
        for dim in dims:
            if dim < 0:
                raise self.fail(f"negative dimension {dim}", key)
            count *= dim
        if count > INT64_MAX:
            raise self.fail(f"shape {dims} has more than INT64_MAX elements", key)
        ggml_type = self.unpack("I", key)
        if ggml_type not in GGML_TYPES:
            raise self.fail(f"unknown ggml type {ggml_type}", key)
        block, type_size = GGML_TYPES[ggml_type]
        if (dims[0] if dims else 1) % block:
            raise self.fail(f"first dimension {dims[0]} is not a multiple of the block size {block}", key)
        offset = self.unpack("Q", key)
        return TensorInfo(name, dims, ggml_type, offset, count // block * type_size)

    def check_data(self, infos: list[TensorInfo]) -> None:
        align = self.meta.alignment
        start = -(-self.pos // align) * align if infos else self.pos
        expected = 0
        for info in infos:
            key = f"tensor {info.name!r}"
            if info.offset != expected:
                raise self.fail(f"data offset {info.offset}, expected {expected} (llama.cpp refuses gaps, "
                                "overlaps and out-of-order tensors)", key)
            if start + info.offset + info.nbytes > self.end:
                raise self.fail(f"{info.nbytes} bytes of data at {start + info.offset} run past the end of the "
                                f"file ({self.end} bytes)", key)
            expected += -(-info.nbytes // align) * align
