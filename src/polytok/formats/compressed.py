"""A file's bytes, gzip-decompressed when it starts with the gzip magic: the one place readers do that.

``tokenizer.json.gz``, ``tekken.json.gz`` and the built-in tokenizer are gzip
files; the sniffer reads their head. Python's ``gzip`` signals a bad file three
ways, and each becomes a `FormatError` naming the file here: a file cut short
(``EOFError``: the stream ends before its end-of-stream marker), corrupt data
(``zlib.error``), and a bad header (``gzip.BadGzipFile``, an ``OSError``).
"""

from __future__ import annotations

import gzip
import zlib
from pathlib import Path

from ..errors import FormatError

__all__ = ["GZIP_MAGIC", "read_bytes", "read_head"]

GZIP_MAGIC = b"\x1f\x8b"


def read_bytes(path: Path) -> bytes:
    """The whole file, decompressed if it is gzip data."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise FormatError(f"cannot read the file: {exc.strerror or exc}", file=str(path)) from None
    if raw[:2] != GZIP_MAGIC:
        return raw
    try:
        return gzip.decompress(raw)
    except (EOFError, zlib.error, gzip.BadGzipFile) as exc:
        raise _bad_gzip(path, exc) from None


def read_head(path: Path, n: int = 256) -> bytes:
    """The first `n` bytes of the file, of its decompressed data if it is gzip data."""
    try:
        with path.open("rb") as f:
            head = f.read(n)
        if head[:2] != GZIP_MAGIC:
            return head
        with gzip.open(path, "rb") as g:
            return g.read(n)
    except (EOFError, zlib.error, gzip.BadGzipFile) as exc:
        raise _bad_gzip(path, exc) from None
    except OSError as exc:
        raise FormatError(f"cannot read the file: {exc.strerror or exc}", file=str(path)) from None


def _bad_gzip(path: Path, exc: Exception) -> FormatError:
    if isinstance(exc, EOFError):
        return FormatError("truncated gzip file: the data ends before the end-of-stream marker", file=str(path))
    return FormatError(f"corrupt gzip data ({exc})", file=str(path))
