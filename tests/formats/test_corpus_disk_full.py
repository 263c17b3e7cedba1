"""A full disk ends tokenize-corpus with one line (ENOSPC, the file, what to do); after space is freed,
``--resume`` finishes with the bytes of an uninterrupted run.

Plumbing only: the uninterrupted run is the expectation (its ids are checked against HF tokenizers
in test_corpus.py). The disk is a 256 KiB tmpfs mounted by the test (needs root; skipped, saying so,
otherwise), then grown with ``remount``; a second test makes ``os.fsync`` fail with ENOSPC instead,
so it runs anywhere.
"""

from __future__ import annotations

import errno
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import fixtures
import pytest

from formats.corpus_helpers import folder_digest, write_jsonl
from polytok import corpus
from polytok.errors import FormatError

SRC = str(fixtures.REPO_ROOT / "src")
ENV = {"PYTHONPATH": SRC, "PATH": "/usr/sbin:/usr/bin:/sbin:/bin"}


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    disk = tmp_path / "disk"
    disk.mkdir()
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs needs root")
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", str(disk)], capture_output=True,
                             text=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.strip()}")
    try:
        yield disk
    finally:
        subprocess.run(["umount", str(disk)], check=True)


def test_full_tmpfs_then_resume(small_disk: Path, tmp_path: Path) -> None:
    path = tmp_path / "docs.jsonl"
    write_jsonl(path, 3000)  # ~1.5 MB of text: ~0.8 MB of uint16 ids, more than the disk holds
    full = tmp_path / "full"
    corpus.tokenize("gpt2", [str(path)], str(full), shard_bytes=100_000, workers=2)
    out = small_disk / "o"
    command = [sys.executable, "-m", "polytok", "tokenize-corpus", "gpt2", str(path), "--out", str(out),
               "--shard-mb", "0.1", "--workers", "2"]
    done = subprocess.run(command, capture_output=True, text=True, env=ENV, timeout=300)
    assert done.returncode == 1
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"polytok: error: {out}/"), done.stderr
    assert lines[0].endswith(": the disk is full (ENOSPC) while writing it: free space, then run the same command "
                             "with --resume (the shards already listed are kept)")
    assert not [n for n in os.listdir(out) if n.endswith(".tmp")]  # the half-written file is removed
    subprocess.run(["mount", "-o", "remount,size=8m", str(small_disk)], check=True)
    done = subprocess.run(command + ["--resume"], capture_output=True, text=True, env=ENV, timeout=300)
    assert done.returncode == 0, done.stderr
    assert folder_digest(out) == folder_digest(full)


def test_enospc_on_a_write_then_resume(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The 5th file written (shard 1's .bin) meets ENOSPC; the error names it; resume finishes the run."""
    path = tmp_path / "docs.jsonl"
    write_jsonl(path, 300)
    options: dict[str, Any] = {"shard_bytes": 30_000, "workers": 1}
    corpus.tokenize("gpt2", [str(path)], str(tmp_path / "full"), **options)
    calls = []
    fsync = os.fsync

    def full_disk(fd: int) -> None:
        calls.append(fd)
        if len(calls) == 5:  # manifest, shard 0 .bin and .idx, manifest listing it, shard 1 .bin
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        fsync(fd)

    out = tmp_path / "o"
    monkeypatch.setattr(os, "fsync", full_disk)
    with pytest.raises(FormatError) as caught:
        corpus.tokenize("gpt2", [str(path)], str(out), **options)
    assert str(caught.value).startswith(f"{out}/shard-000001.bin: the disk is full (ENOSPC)")
    monkeypatch.setattr(os, "fsync", fsync)
    assert sorted(os.listdir(out)) == ["manifest.json", "shard-000000.bin", "shard-000000.idx"]
    corpus.tokenize("gpt2", [str(path)], str(out), resume=True, **options)
    assert folder_digest(out) == folder_digest(tmp_path / "full")
