"""Hugging Face cache folders for the hub tests, laid out as huggingface_hub 2.4.0 writes them.

file_download.py: each file's bytes once in ``blobs/{etag}``, the snapshot file a relative
symlink to it (``_create_symlink``), a branch or tag a file ``refs/{revision}`` holding the
commit hash with no newline (``_cache_commit_hash_for_specific_revision``). The etag of an LFS
file is its sha256, which is what is used here for every file (huggingface_hub reads the name
as it is). test_hub_cache.py checks with huggingface_hub's own readers that it reads these.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable, Mapping
from pathlib import Path

import pytest

HF_VARIABLES = ("HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE", "HF_HOME", "XDG_CACHE_HOME", "HF_HUB_OFFLINE",
                "TRANSFORMERS_OFFLINE")


def commit_of(label: str) -> str:
    """A 40-digit commit hash for `label`."""
    return hashlib.sha1(label.encode()).hexdigest()


def repo_folder(cache: Path, repo_id: str) -> Path:
    return cache / ("models--" + repo_id.replace("/", "--"))


def write_snapshot(cache: Path, repo_id: str, commit: str, files: Mapping[str, Path | bytes],
                   refs: Iterable[str] = ()) -> Path:
    """``snapshots/{commit}`` of `repo_id` holding `files` (path in the repository → content or a file
    to copy), with each of `refs` naming it; returns the snapshot folder."""
    repo = repo_folder(cache, repo_id)
    for relative, source in files.items():
        data = source.read_bytes() if isinstance(source, Path) else source
        blob = repo / "blobs" / hashlib.sha256(data).hexdigest()
        blob.parent.mkdir(parents=True, exist_ok=True)
        if not blob.exists():
            blob.write_bytes(data)
        pointer = repo / "snapshots" / commit / relative
        pointer.parent.mkdir(parents=True, exist_ok=True)
        pointer.symlink_to(os.path.relpath(blob, pointer.parent))
    (repo / "snapshots" / commit).mkdir(parents=True, exist_ok=True)
    for ref in refs:
        path = repo / "refs" / ref
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(commit)
    return repo / "snapshots" / commit


def clear_hf_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """No Hugging Face variable of this machine's environment reaches the test."""
    for name in HF_VARIABLES:
        monkeypatch.delenv(name, raising=False)


def forbid_network(monkeypatch: pytest.MonkeyPatch) -> None:
    """huggingface_hub's two download functions fail the test when called."""
    import huggingface_hub

    def refuse(*args: object, **kwargs: object) -> str:
        raise AssertionError(f"a download was attempted: {args} {kwargs}")

    monkeypatch.setattr(huggingface_hub, "snapshot_download", refuse)
    monkeypatch.setattr(huggingface_hub, "hf_hub_download", refuse)
