"""`verify`'s second half: are the tokenizer and the inputs still the ones the manifest records?

The shards only prove the output is whole; a corpus is what it says only if the
tokenizer files and the inputs are unchanged too (``--resume`` refuses a run
whose tokenizer or inputs changed; `verify` now says so as well). Each input
(path as given, relative to the current folder) must have the size and sha256
listed; the tokenizer is loaded again by the name the manifest gives and its
identity (`manifest.tokenizer_identity`: the sha256 of its file or of each file
of its folder, ``chat_template.jinja`` included) must be the one recorded. A
tokenizer or input that is not there (moved, or another machine) is an error
that says ``--shards-only`` checks the shards alone.
"""

from __future__ import annotations

import os
from typing import Any

from ..errors import FormatError, PolytokError
from .manifest import tokenizer_identity
from .shards import sha256_file

__all__ = ["check_sources", "SHARDS_ONLY_HINT"]

SHARDS_ONLY_HINT = "run verify-corpus --shards-only to check the shards alone"


def check_sources(manifest: dict[str, Any], path: str) -> None:
    """A `FormatError` naming the manifest key of the first input or tokenizer file that changed or is missing."""
    for number, item in enumerate(manifest["inputs"]):
        _check_input(item, path, f"inputs[{number}]")
    _check_tokenizer(manifest["tokenizer"], path)


def _check_input(item: dict[str, Any], path: str, key: str) -> None:
    where = item["path"]
    if not os.path.isfile(where):
        raise FormatError(f"input {where} is not there (moved?): {SHARDS_ONLY_HINT}", file=path, key=key)
    try:
        size, digest = os.path.getsize(where), sha256_file(where)
    except OSError as exc:
        raise FormatError(f"input {where} cannot be read ({exc.strerror or exc})", file=path, key=key) from None
    if size != item["bytes"] or digest != item["sha256"]:
        raise FormatError(f"input {where} changed since the run ({size} bytes, sha256 {digest[:12]}..., the "
                          f"manifest lists {item['bytes']} bytes, {item['sha256'][:12]}...)", file=path, key=key)


def _check_tokenizer(recorded: dict[str, Any], path: str) -> None:
    from .. import load

    model = recorded.get("model")
    if not isinstance(model, str):
        raise FormatError(f"{model!r} is not a tokenizer name", file=path, key="tokenizer.model")
    try:
        tok = load(model)
    except (PolytokError, OSError) as exc:
        if not os.path.exists(model):
            raise FormatError(f"the tokenizer {model} is not there (moved?): {SHARDS_ONLY_HINT}", file=path,
                              key="tokenizer") from None
        raise FormatError(f"the tokenizer {model} changed: it no longer loads ({exc})", file=path,
                          key="tokenizer") from None
    now = tokenizer_identity(model, tok)
    if now != recorded:
        raise FormatError(f"the tokenizer {model} changed since the run: {_changes(recorded, now)}", file=path,
                          key="tokenizer")


def _changes(old: dict[str, Any], new: dict[str, Any]) -> str:
    """Which of the tokenizer's files (or its format, or its one file) differ."""
    old_files, new_files = old.get("files"), new.get("files")
    if isinstance(old_files, dict) and isinstance(new_files, dict):
        names = sorted(set(old_files) | set(new_files))
        parts = [f"{n} {'added' if n not in old_files else 'removed' if n not in new_files else 'differs'}"
                 for n in names if old_files.get(n) != new_files.get(n)]
        if parts:
            return ", ".join(parts)
    keys = sorted(k for k in set(old) | set(new) if old.get(k) != new.get(k))
    return ", ".join(f"{k} differs" for k in keys)
