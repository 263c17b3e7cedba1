"""The corpus manifest (``manifest.json``): what was tokenized, how, and the list of complete shards.

The manifest holds only what decides the output's bytes and what the output is:
the tokenizer (as named, its format and the sha256 of its files), the polytok
version, the settings, the inputs (as named on the command line, size and
sha256), the counts and the shards (with the sha256 of each file), and the bad
records with file and line (or row). It holds no time, host, engine, worker
count or temporary path, so every engine and worker count writes the same
bytes for the same input and settings.

It is rewritten (to a temporary name, then renamed) each time the next shard in
input order is complete, so at any moment it lists a prefix of the shards, each
one whole on disk; ``complete`` turns true when the last is written. ``--resume``
keeps that prefix and encodes the rest.
"""

from __future__ import annotations

import json
import os
from importlib import resources
from typing import TYPE_CHECKING, Any

from .. import __version__
from ..errors import FormatError
from .manifest_check import check_manifest
from .readers import Split, check_parquet_column, input_kind, parquet_rows
from .shards import Settings, sha256_file, write_atomic

if TYPE_CHECKING:
    from ..tokenizer import Tokenizer

__all__ = ["MANIFEST", "FORMAT", "plan", "tokenizer_identity", "header", "read_manifest", "write_manifest"]

MANIFEST = "manifest.json"
FORMAT = "polytok-corpus/1"
_TOKENIZER_FILE_PREFIXES = ("tokenizer", "vocab", "merges", "special_tokens_map", "added_tokens", "tekken",
                            "chat_template", "config.json")
_TEMPLATE_FOLDER = "additional_chat_templates"  # polytok.formats.folder.additional_templates reads it
_TOKENIZER_FILE_SUFFIXES = (".model", ".tiktoken", ".gguf")


def plan(paths: list[str], settings: Settings) -> tuple[list[dict[str, Any]], list[Split]]:
    """The inputs' records (kind, size, sha256) and the splits, by input order: one shard each."""
    inputs: list[dict[str, Any]] = []
    splits: list[Split] = []
    for file_index, path in enumerate(paths):
        kind = input_kind(path, settings.input_format)
        try:
            size = os.path.getsize(path)
            digest = sha256_file(path)
        except OSError as exc:
            raise FormatError(exc.strerror or str(exc), file=path) from None
        inputs.append({"path": path, "kind": kind, "bytes": size, "sha256": digest})
        if kind == "parquet":
            check_parquet_column(path, settings.column)
            rows, raw = parquet_rows(path)
            step, stop = max(1, rows * settings.shard_bytes // raw if raw else rows), rows
        else:
            step, stop = settings.shard_bytes, size
        for start in range(0, stop, step):
            splits.append(Split(len(splits), file_index, path, kind, start, min(start + step, stop)))
    return inputs, splits


def _builtin_sha256(name: str) -> str | None:
    try:
        data = resources.files("polytok").joinpath("data", f"{name}.json.gz").read_bytes()
    except OSError:
        return None
    import hashlib

    return hashlib.sha256(data).hexdigest()


def tokenizer_identity(model: str, tok: Tokenizer) -> dict[str, Any]:
    """The tokenizer as the manifest names it: the argument, format, and the sha256 of its file(s).

    For a folder, the files that make up a tokenizer (``tokenizer*``, ``vocab*``,
    ``merges*``, ``special_tokens_map*``, ``added_tokens*``, ``tekken*``,
    ``chat_template*``, ``config.json``, ``additional_chat_templates/*``,
    ``*.model``, ``*.tiktoken``, ``*.gguf``) are hashed one by one; weights are left alone.
    """
    source = tok.facts.source
    ident: dict[str, Any] = {"model": model, "format": tok.facts.format}
    if source.startswith("builtin:"):
        ident["sha256"] = _builtin_sha256(source.split(":", 1)[1])
    elif os.path.isfile(source):
        ident["sha256"] = sha256_file(source)
    elif os.path.isdir(source):
        ident["files"] = {n: sha256_file(os.path.join(source, n)) for n in _tokenizer_files(source)}
    return ident


def _tokenizer_files(folder: str) -> list[str]:
    """The files of a model folder that `polytok.load` may read (and chat templates), by relative name."""
    names = [n for n in os.listdir(folder) if os.path.isfile(os.path.join(folder, n))
             and (n.startswith(_TOKENIZER_FILE_PREFIXES) or n.endswith(_TOKENIZER_FILE_SUFFIXES))]
    extra = os.path.join(folder, _TEMPLATE_FOLDER)
    if os.path.isdir(extra):
        names += [f"{_TEMPLATE_FOLDER}/{n}" for n in os.listdir(extra) if os.path.isfile(os.path.join(extra, n))]
    return sorted(names)


def header(tokenizer: dict[str, Any], settings: Settings, inputs: list[dict[str, Any]]) -> dict[str, Any]:
    """A manifest with no shard yet."""
    return {"format": FORMAT, "polytok_version": __version__, "tokenizer": tokenizer,
            "settings": settings.as_dict(), "inputs": inputs, "complete": False,
            "documents": 0, "tokens": 0, "bad_records": 0, "input_lines": 0,
            "shards": [], "errors": []}


def read_manifest(out_dir: str) -> dict[str, Any]:
    """The manifest in `out_dir`, its shape checked (`manifest_check`); a `FormatError` naming the key otherwise."""
    path = os.path.join(out_dir, MANIFEST)
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except OSError as exc:
        raise FormatError(exc.strerror or str(exc), file=path) from None
    except ValueError as exc:  # JSONDecodeError, bad UTF-8, an integer of too many digits
        raise FormatError(f"not JSON ({exc})", file=path) from None
    except RecursionError:
        raise FormatError("not JSON (nested deeper than the parser goes)", file=path) from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise FormatError(f"not a polytok corpus manifest (format is not {FORMAT!r})", file=path, key="format")
    check_manifest(data, path)
    return data


def write_manifest(out_dir: str, manifest: dict[str, Any]) -> None:
    """Write the manifest whole under a temporary name, then rename it over the old one."""
    path = os.path.join(out_dir, MANIFEST)
    write_atomic(path, (json.dumps(manifest, ensure_ascii=False, indent=1) + "\n").encode("utf-8"))
