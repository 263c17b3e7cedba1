"""Token shards: one split's documents encoded, and its files written under a temporary name, then renamed.

A ``bin`` shard is two files:

- ``shard-NNNNNN.bin``: the ids of every document, one after the other, as flat
  little-endian ``uint16`` (when every id the tokenizer can produce is below
  65 536) or ``uint32``;
- ``shard-NNNNNN.idx``: little-endian ``uint64`` offsets into the ids, one per
  document and one more, so document ``i`` is ``ids[idx[i]:idx[i + 1]]``.

A ``parquet`` shard is one file, ``shard-NNNNNN.parquet``, with one row per
document and one column ``ids`` (a list of ``uint16``/``uint32``).

Each document is encoded with `Tokenizer.encode` on its own, in this process
(never `encode_batch`, which pads and may start a pool of its own), so the ids
are those of ``tok.encode(document, add_special=..., special=...)``, plus the
separator id when one is appended; `tok` is the tokenizer without its file's
truncation and padding unless the run applies them (``Settings.truncation``). A document the tokenizer refuses (a lone
surrogate from a JSON escape, where the reference engines refuse it too) is a
bad record like any other.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import sys
from array import array
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..errors import EncodeError, FormatError
from .readers import Bad, Split, parse_line, pyarrow, pyarrow_parquet, read_split, split_lines

if TYPE_CHECKING:
    from ..tokenizer import Tokenizer

__all__ = ["Settings", "ShardResult", "encode_split", "write_shard", "shard_name", "sha256_file",
           "write_atomic", "write_error"]

TEMP_SUFFIX = ".tmp"
TRUNCATION_CHOICES = ("none", "ignored", "applied")  # Settings.truncation


@dataclass(frozen=True, slots=True)
class Settings:
    """Everything that decides the shards' bytes; the manifest records it and ``--resume`` checks it."""

    add_special: bool
    special: str
    append_eos: int | None
    dtype: str
    out_format: str
    shard_bytes: int
    field: str
    column: str
    input_format: str
    on_error: str
    #: the tokenizer's truncation and padding: "none" (it has neither), "ignored" (whole
    #: documents, the default) or "applied" (``truncation=True``: the ids of ``encode``)
    truncation: str

    def as_dict(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.__dataclass_fields__}


@dataclass(slots=True)
class ShardResult:
    """One split encoded: the raw ids and offsets (little-endian) and its counts."""

    index: int
    ids: bytes
    offsets: bytes
    documents: int
    tokens: int
    lines: int
    bad: list[Bad] = field(default_factory=list)


def _little_endian(values: array) -> bytes:  # type: ignore[type-arg]
    if sys.byteorder != "little":
        values.byteswap()
    return values.tobytes()


def encode_split(tok: Tokenizer, split: Split, settings: Settings) -> ShardResult:
    """Read `split` and encode each of its documents (see the module notes)."""
    docs, bad, lines = read_split(split, settings.field, settings.column)
    ids = array("H" if settings.dtype == "uint16" else "I")
    offsets = array("Q", [0])
    encode, eos = tok.encode, settings.append_eos
    add_special, special = settings.add_special, settings.special
    for number, doc in enumerate(docs):
        try:
            ids.extend(encode(doc, add_special=add_special, special=special))
        except EncodeError as exc:
            bad.append(Bad(-1 - number, str(exc)))  # placed below, once the document's line is known
            continue
        if eos is not None:
            ids.append(eos)
        offsets.append(len(ids))
    if any(b.place < 0 for b in bad):
        bad = _place_refused(split, settings, bad)
    return ShardResult(split.index, _little_endian(ids), _little_endian(offsets), len(offsets) - 1, len(ids),
                       lines, bad)


def _place_refused(split: Split, settings: Settings, bad: list[Bad]) -> list[Bad]:
    """Bad records sorted by place, documents the tokenizer refused given their line (or row) too."""
    placed = [b for b in bad if b.place >= 0]
    refused = {-1 - b.place: b.reason for b in bad if b.place < 0}
    for number, place in enumerate(_document_places(split, settings)):
        if number in refused:
            placed.append(Bad(place, refused[number]))
    return sorted(placed, key=lambda b: b.place)


def _document_places(split: Split, settings: Settings) -> list[int]:
    """The line index (or row) of each document of `split`, in order (read again: refusals are rare)."""
    if split.kind == "parquet":
        docs_bad = read_split(split, settings.field, settings.column)[1]
        bad_rows = {b.place for b in docs_bad}
        return [row for row in range(split.start, split.end) if row not in bad_rows]
    places = []
    for number, (offset, line) in enumerate(split_lines(split.path, split.start, split.end)):
        if isinstance(parse_line(line, offset, split.kind, settings.field), str):
            places.append(number)
    return places


def shard_name(index: int) -> str:
    return f"shard-{index:06d}"


def sha256_file(path: str) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def write_atomic(path: str, data: bytes) -> None:
    """Write `data` to ``path + .tmp``, flush it to disk, rename it to `path`. When that fails (a full
    disk), the temporary file is removed and a `FormatError` names `path` (`write_error`)."""
    temp = path + TEMP_SUFFIX
    try:
        with open(temp, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(temp, path)
    except OSError as exc:
        with contextlib.suppress(OSError):
            os.remove(temp)
        raise write_error(exc, path) from None


def write_error(exc: OSError, path: str) -> FormatError:
    """The one-line error for a failed write of `path`: a full disk says what to do."""
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        name = "ENOSPC" if exc.errno == errno.ENOSPC else "EDQUOT"
        return FormatError(f"the disk is full ({name}) while writing it: free space, then run the same "
                           "command with --resume (the shards already listed are kept)", file=path)
    return FormatError(f"cannot write it: {exc.strerror or exc}", file=path)


def _write_atomic(path: str, data: bytes) -> dict[str, Any]:
    """`write_atomic`; the file's name, size and sha256."""
    write_atomic(path, data)
    return {"name": os.path.basename(path), "bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}


def write_shard(out_dir: str, result: ShardResult, settings: Settings) -> dict[str, Any]:
    """The shard's files, each complete under its final name; their names, sizes and sha256."""
    base = os.path.join(out_dir, shard_name(result.index))
    if settings.out_format == "parquet":
        return {"parquet": _write_atomic(base + ".parquet", _parquet_bytes(result, settings.dtype))}
    return {"bin": _write_atomic(base + ".bin", result.ids), "idx": _write_atomic(base + ".idx", result.offsets)}


def _parquet_bytes(result: ShardResult, dtype: str) -> bytes:
    """The shard as a Parquet file (column ``ids``, list of `dtype`), built from the same ids and offsets."""
    pa, pq = pyarrow(), pyarrow_parquet()
    values = pa.py_buffer(result.ids)
    offsets = pa.py_buffer(result.offsets)
    flat = pa.Array.from_buffers(getattr(pa, dtype)(), result.tokens, [None, values])
    lists = pa.LargeListArray.from_buffers(pa.large_list(flat.type), result.documents, [None, offsets], children=[flat])
    sink = pa.BufferOutputStream()
    pq.write_table(pa.table({"ids": lists}), sink, compression="zstd")
    return bytes(sink.getvalue().to_pybytes())
