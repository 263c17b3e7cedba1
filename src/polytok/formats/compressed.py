"""A file's bytes, gzip-decompressed when it starts with the gzip magic: the one place readers do that.

``tokenizer.json.gz``, ``tekken.json.gz`` and the built-in tokenizer are gzip
files; the sniffer reads their head. Python's ``gzip`` signals a bad file three
ways, and each becomes a `FormatError` naming the file here: a file cut short
(``EOFError``: the stream ends before its end-of-stream marker), corrupt data
(``zlib.error``), and a bad header (``gzip.BadGzipFile``, an ``OSError``).

Decompression is streamed in 1 MiB chunks and stops at a limit, so a small bomb
(1 MB of gzip holding 1 GiB) is refused before it is held in memory: the larger of
256 MiB and 64 x the compressed size, never more than 2 GiB. The largest real
tokenizer file (Gemma 3's 33 MB tokenizer.json) is far below the floor, and real
tokenizer files compress 3-6 x, far below the ratio; a bomb of zeros is ~1000 x.
``POLYTOK_MAX_DECOMPRESSED`` (bytes) or `read_bytes`' `limit` sets another limit.
The reference engines open plain files only (see `polytok.formats.folder`).
"""

from __future__ import annotations

import gzip
import io
import os
import zlib
from pathlib import Path

from ..errors import FormatError

__all__ = ["GZIP_MAGIC", "read_bytes", "read_head", "decompressed_limit"]

GZIP_MAGIC = b"\x1f\x8b"
LIMIT_ENV = "POLYTOK_MAX_DECOMPRESSED"
_FLOOR, _RATIO, _CEILING = 256 << 20, 64, 2 << 30
_CHUNK = 1 << 20


def decompressed_limit(compressed_size: int) -> int:
    """The most bytes a gzip file of `compressed_size` bytes may decompress to (see the module notes)."""
    override = os.environ.get(LIMIT_ENV, "").strip()
    if override:
        if not override.isdigit():
            raise FormatError(f"{LIMIT_ENV} must be a number of bytes, found {override[:40]!r}")
        return int(override)
    return min(_CEILING, max(_FLOOR, _RATIO * compressed_size))


def read_bytes(path: Path, *, limit: int | None = None) -> bytes:
    """The whole file, decompressed if it is gzip data (at most `limit` bytes, default
    `decompressed_limit`; a `FormatError` naming the file and the limit beyond it)."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise FormatError(f"cannot read the file: {exc.strerror or exc}", file=str(path)) from None
    if raw[:2] != GZIP_MAGIC:
        return raw
    if limit is None:
        limit = decompressed_limit(len(raw))
    chunks, total = [], 0
    try:
        with gzip.GzipFile(fileobj=io.BytesIO(raw)) as g:
            while chunk := g.read(_CHUNK):
                total += len(chunk)
                if total > limit:
                    raise FormatError(f"gzip data decompresses to more than {limit} bytes from {len(raw)} (a "
                                      f"decompression bomb?); set {LIMIT_ENV} to allow more", file=str(path))
                chunks.append(chunk)
    except (EOFError, zlib.error, gzip.BadGzipFile) as exc:
        raise _bad_gzip(path, exc) from None
    return b"".join(chunks)


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
