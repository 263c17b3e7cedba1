"""``polytok verify-corpus DIR``: re-check a corpus folder against its manifest.

Checks that the run is complete; that every listed file exists with the size
and sha256 listed; that each ``.idx`` holds ``documents + 1`` offsets, rising
from 0 to the shard's token count, and each ``.bin`` that many ids of the
manifest's dtype (for Parquet shards: rows and ids, read with pyarrow); that the
shards' counts add up to the manifest's totals and the errors to its bad
records; that ``settings.truncation`` (whether the tokenizer's truncation and
padding were applied) is one of the values `polytok.corpus` writes, or absent (a
manifest written before it was recorded); and that no file in the folder is a
shard the manifest does not list (or a leftover temporary file). Then, unless
``shards_only``, that the tokenizer and the inputs are unchanged (`verify_sources`).
"""

from __future__ import annotations

import os
import sys
from array import array
from typing import Any

from ..errors import FormatError
from .manifest import MANIFEST, read_manifest
from .readers import pyarrow_parquet
from .shards import TEMP_SUFFIX, TRUNCATION_CHOICES, sha256_file
from .verify_sources import check_sources

__all__ = ["verify"]


def verify(out_dir: str, *, shards_only: bool = False) -> dict[str, Any]:
    """Check the corpus in `out_dir` (see the module notes).

    Args:
        out_dir: a folder written by `polytok.corpus.tokenize`.
        shards_only: check the shards and manifest alone; by default the tokenizer
            and the inputs must also be the ones the manifest records (`verify_sources`).

    Returns:
        The manifest, when every check passes.

    Raises:
        FormatError: naming the file (and manifest key) of the first check that fails.
    """
    manifest = read_manifest(out_dir)
    path = os.path.join(out_dir, MANIFEST)
    if not manifest.get("complete"):
        raise FormatError("the run is not complete (continue it with --resume)", file=path, key="complete")
    applied = manifest["settings"].get("truncation", "none")
    if applied not in TRUNCATION_CHOICES:
        raise FormatError(f"{applied!r} is none of {', '.join(TRUNCATION_CHOICES)}", file=path,
                          key="settings.truncation")
    listed: set[str] = set()
    totals = {"documents": 0, "tokens": 0, "bad_records": 0, "input_lines": 0}
    for number, shard in enumerate(manifest["shards"]):
        for info in shard["files"].values():
            _check_file(out_dir, info, f"shards[{number}].files")
            listed.add(info["name"])
        _check_counts(out_dir, shard, manifest["settings"]["dtype"], number)
        for key, source in (("documents", "documents"), ("tokens", "tokens"), ("bad_records", "bad_records"),
                            ("input_lines", "lines")):
            totals[key] += shard[source]
    for key, total in totals.items():
        if manifest.get(key) != total:
            raise FormatError(f"{manifest.get(key)} but the shards add up to {total}", file=path, key=key)
    if len(manifest["errors"]) != manifest["bad_records"]:
        raise FormatError("the errors listed do not match the count", file=path, key="errors")
    for name in sorted(os.listdir(out_dir)):
        if name.endswith(TEMP_SUFFIX) or (name.startswith("shard-") and name not in listed):
            raise FormatError("a file the manifest does not list", file=os.path.join(out_dir, name))
    if not shards_only:
        check_sources(manifest, path)
    return manifest


def _check_file(out_dir: str, info: dict[str, Any], key: str) -> None:
    path = os.path.join(out_dir, info["name"])
    if not os.path.isfile(path):
        raise FormatError("listed in the manifest but missing", file=path, key=key)
    if os.path.getsize(path) != info["bytes"]:
        raise FormatError(f"{os.path.getsize(path)} bytes, the manifest says {info['bytes']}", file=path, key=key)
    if sha256_file(path) != info["sha256"]:
        raise FormatError("sha256 differs from the manifest's", file=path, key=key)


def _check_counts(out_dir: str, shard: dict[str, Any], dtype: str, number: int) -> None:
    key = f"shards[{number}]"
    files = shard["files"]
    if "parquet" in files:
        lengths = _parquet_lengths(os.path.join(out_dir, files["parquet"]["name"]))
        offsets = array("Q", [0])
        for n in lengths:
            offsets.append(offsets[-1] + n)
        where, tokens = os.path.join(out_dir, files["parquet"]["name"]), offsets[-1]
    else:
        where = os.path.join(out_dir, files["idx"]["name"])
        offsets = _read_array("Q", where)
        size = 2 if dtype == "uint16" else 4
        if files["bin"]["bytes"] % size:
            raise FormatError(f"not a whole number of {dtype} ids", file=os.path.join(out_dir, files["bin"]["name"]))
        tokens = files["bin"]["bytes"] // size
    if len(offsets) != shard["documents"] + 1 or offsets[0] != 0:
        raise FormatError(f"{len(offsets) - 1} documents, the manifest says {shard['documents']}", file=where,
                          key=key)
    if any(a > b for a, b in zip(offsets, offsets[1:])) or offsets[-1] != tokens or tokens != shard["tokens"]:
        raise FormatError(f"offsets do not rise from 0 to the {shard['tokens']} tokens listed", file=where, key=key)


def _read_array(code: str, path: str) -> array[int]:
    values = array(code)
    with open(path, "rb") as f:
        data = f.read()
    if len(data) % values.itemsize:
        raise FormatError(f"{len(data)} bytes, not a whole number of uint64 offsets", file=path)
    values.frombytes(data)
    if sys.byteorder != "little":
        values.byteswap()
    return values


def _parquet_lengths(path: str) -> list[int]:
    pq = pyarrow_parquet()
    import pyarrow.compute as pc  # type: ignore[import-untyped]

    try:
        column = pq.read_table(path, columns=["ids"]).column("ids")
        return [int(n) for n in pc.list_value_length(column).to_pylist()]
    except (OSError, ValueError, TypeError, KeyError) as exc:  # ArrowInvalid is a ValueError
        raise FormatError(f"not a Parquet shard with a list column ids ({exc})", file=path) from None
