"""Corpus input: the documents of one split of an input file, and the bad records with their place.

Three kinds of input, each read in splits that a worker reads on its own:

- ``text``: one document per line, without its line end (``\\n`` or ``\\r\\n``);
  empty lines are (empty) documents. This is the ``sample_by="line"`` default
  of HF datasets' text builder (datasets/packaged_modules/text/text.py,
  Text._generate_tables), so a corpus counts the same there and here.
- ``jsonl``: one JSON object per line, the document in one string field
  (``--field``); lines holding only whitespace are not records.
- ``parquet``: one document per row, in one string column (``--column``).

A text or JSONL split is a byte range ``[start, end)`` of the file and holds
every line whose first byte lies in it (the usual way of cutting line files for
parallel readers), so a worker needs nothing but the path and the range. A
Parquet split is a range of rows. Bad records (a line that is not UTF-8 or not
a JSON object, a missing field, a value that is not a string, a null) come back
with their line index inside the split (or their row in the file); the caller,
which knows how many lines the earlier splits held, turns that into a line
number.

A hostile record is a bad record like any other, never an error that stops the
run: JSON nested deeper than Python's parser goes (``json.loads`` raises
`RecursionError`; HF datasets' JSON builder, which reads with pyarrow, refuses
such a file as a whole), an integer of more digits than Python converts
(``ValueError``), a line longer than `MAX_LINE_BYTES` (skipped unread, so one
line with no newline in a 50 GB file does not fill the memory), a Parquet
string that is not UTF-8.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from ..errors import FormatError, PolytokError

__all__ = ["KINDS", "Split", "Bad", "input_kind", "read_split", "split_lines", "parse_line", "parquet_rows",
           "check_parquet_column", "pyarrow", "pyarrow_parquet"]

KINDS = ("text", "jsonl", "parquet")
MAX_LINE_BYTES = 1 << 28  # 256 MiB: a longer line is a bad record, skipped without being read whole
_SUFFIXES = {".jsonl": "jsonl", ".ndjson": "jsonl", ".parquet": "parquet", ".pq": "parquet"}


@dataclass(frozen=True, slots=True)
class Split:
    """One shard's share of one input: bytes ``[start, end)`` (text, JSONL) or rows (Parquet)."""

    index: int
    file_index: int
    path: str
    kind: str
    start: int
    end: int


@dataclass(frozen=True, slots=True)
class Bad:
    """A record that is not a document: its line index in the split (or row in the file) and why."""

    place: int
    reason: str


def input_kind(path: str, declared: str = "auto") -> str:
    """`declared` unless it is ``auto``; else from the suffix (``.jsonl``/``.ndjson``, ``.parquet``), else text."""
    if declared != "auto":
        return declared
    lowered = path.lower()
    for suffix, kind in _SUFFIXES.items():
        if lowered.endswith(suffix):
            return kind
    return "text"


def read_split(split: Split, field: str, column: str) -> tuple[list[str], list[Bad], int]:
    """The documents of `split`, its bad records, and how many lines started in it (0 for Parquet)."""
    if split.kind == "parquet":
        docs, bad = _parquet_split(split, column)
        return docs, bad, 0
    docs, bad = [], []
    count = 0
    for count, (offset, line) in enumerate(split_lines(split.path, split.start, split.end), 1):
        text = parse_line(line, offset, split.kind, field)
        if isinstance(text, str):
            docs.append(text)
        elif text is not None:
            bad.append(Bad(count - 1, text.reason))
    return docs, bad, count


def split_lines(path: str, start: int, end: int) -> Iterator[tuple[int, bytes | int]]:
    """(file offset, raw line) of each line whose first byte lies in ``[start, end)``; instead of a
    line longer than `MAX_LINE_BYTES`, its length (an int), the line itself left unread."""
    try:
        with open(path, "rb") as f:
            pos = start
            if start > 0:
                f.seek(start - 1)
                pos = start - 1 + _skip_line(f)  # the rest of a line begun before the split
            while pos < end:
                line = f.readline(MAX_LINE_BYTES + 1)
                if not line:
                    return
                if len(line) > MAX_LINE_BYTES and not line.endswith(b"\n"):
                    size = len(line) + _skip_line(f)
                    yield pos, size
                    pos += size
                    continue
                yield pos, line
                pos += len(line)
    except OSError as exc:
        raise FormatError(exc.strerror or str(exc), file=path) from None


def _skip_line(f: Any) -> int:
    """Read past the rest of the current line, a block at a time; the bytes passed."""
    passed = 0
    while True:
        block = f.readline(1 << 20)
        passed += len(block)
        if not block or block.endswith(b"\n"):
            return passed


def parse_line(line: bytes | int, offset: int, kind: str, field: str) -> str | Bad | None:
    """A document, a Bad (place filled in by the caller), or None for a JSONL line that is no record.
    `line` is the raw line, or the length of one too long to read (`split_lines`)."""
    if isinstance(line, int):
        return Bad(0, f"a line of {line} bytes, longer than the {MAX_LINE_BYTES} read at most")
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as exc:
        return Bad(0, f"not UTF-8 at byte offset {offset + exc.start} ({exc.reason})")
    if kind == "text":
        return text[:-2] if text.endswith("\r\n") else text[:-1] if text.endswith("\n") else text
    if not text.strip():
        return None
    try:
        record = json.loads(text)
    except ValueError as exc:  # JSONDecodeError, or an integer of too many digits for int()
        return Bad(0, f"not JSON ({getattr(exc, 'msg', exc)})")
    except RecursionError:
        return Bad(0, "not JSON (nested deeper than the parser goes)")
    if not isinstance(record, dict):
        return Bad(0, f"a JSON {type(record).__name__}, not an object")
    if field not in record:
        return Bad(0, f"no field {field!r}")
    value = record[field]
    if not isinstance(value, str):
        return Bad(0, f"field {field!r} is {_json_type(value)}, not a string")
    return value


def _json_type(value: Any) -> str:
    names = {bool: "a boolean", int: "a number", float: "a number", list: "an array", dict: "an object"}
    return "null" if value is None else names.get(type(value), type(value).__name__)


def pyarrow() -> Any:
    """The ``pyarrow`` module; a `PolytokError` saying which extra to install when it is missing."""
    try:
        import pyarrow as pa  # type: ignore[import-untyped]
    except ImportError:
        raise PolytokError("reading or writing Parquet needs pyarrow: pip install 'polytok[parquet]'") from None
    return pa


def pyarrow_parquet() -> Any:
    """``pyarrow.parquet``, as `pyarrow`."""
    pyarrow()
    import pyarrow.parquet as pq  # type: ignore[import-untyped]

    return pq


def parquet_rows(path: str) -> tuple[int, int]:
    """(rows, uncompressed bytes) of a Parquet file, from its footer."""
    pq = pyarrow_parquet()
    try:
        meta = pq.ParquetFile(path).metadata
    except (OSError, ValueError) as exc:  # pyarrow's ArrowInvalid is a ValueError
        raise FormatError(f"not a Parquet file ({exc})", file=path) from None
    size = sum(meta.row_group(g).total_byte_size for g in range(meta.num_row_groups))
    return meta.num_rows, size


def check_parquet_column(path: str, column: str) -> None:
    """A FormatError naming the file and column unless `column` exists and holds strings."""
    pa = pyarrow()
    try:
        schema = pyarrow_parquet().read_schema(path)
    except (OSError, ValueError) as exc:  # pyarrow's ArrowInvalid is a ValueError
        raise FormatError(f"not a Parquet file ({exc})", file=path) from None
    if column not in schema.names:
        raise FormatError(f"no column {column!r} (columns: {', '.join(schema.names)})", file=path, key=column)
    kind = schema.field(column).type
    if not (pa.types.is_string(kind) or pa.types.is_large_string(kind) or pa.types.is_string_view(kind)):
        raise FormatError(f"column {column!r} holds {kind}, not strings", file=path, key=column)


def _parquet_split(split: Split, column: str) -> tuple[list[str], list[Bad]]:
    pq = pyarrow_parquet()
    parquet = pq.ParquetFile(split.path)
    groups: list[int] = []
    first = row = 0
    for g in range(parquet.metadata.num_row_groups):
        n = parquet.metadata.row_group(g).num_rows
        if row + n > split.start and row < split.end:
            if not groups:
                first = row
            groups.append(g)
        row += n
    if not groups:
        return [], []
    try:
        table = parquet.read_row_groups(groups, columns=[column])
    except (OSError, ValueError) as exc:  # a damaged row group; pyarrow's ArrowInvalid is a ValueError
        raise FormatError(f"cannot read rows {split.start}-{split.end} ({exc})", file=split.path) from None
    values = table.column(column).slice(split.start - first, split.end - split.start)
    docs, bad = [], []
    for row, value in enumerate(_strings(values), split.start):
        if isinstance(value, str):
            docs.append(value)
        elif isinstance(value, Bad):
            bad.append(Bad(row, value.reason))
        else:
            bad.append(Bad(row, f"{column} is {_json_type(value)}, not a string"))
    return docs, bad


def _strings(values: Any) -> list[Any]:
    """The column's values as Python objects; a value that is not UTF-8 (Parquet does not check) as a Bad."""
    try:
        return list(values.to_pylist())
    except UnicodeDecodeError:
        pass
    out: list[Any] = []
    for value in values:
        try:
            out.append(value.as_py())
        except UnicodeDecodeError as exc:
            out.append(Bad(0, f"not UTF-8 at byte {exc.start} of the value ({exc.reason})"))
    return out
