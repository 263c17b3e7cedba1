"""Kill ``polytok tokenize-corpus`` mid-run (SIGKILL to its process group), resume, compare byte for byte.

Plumbing only: the uninterrupted run is the expectation (its ids are checked
against HF tokenizers in test_corpus.py). The shards the killed run had listed
are kept as they are (same inode and mtime): resuming encodes only the rest.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import fixtures

from formats.corpus_helpers import folder_digest, write_jsonl
from polytok import corpus

SRC = str(fixtures.REPO_ROOT / "src")
SHARD_MB = "0.1"


def _listed(out: Path) -> list[str]:
    try:
        m = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    return [f["name"] for s in m["shards"] for f in s["files"].values()]


def test_kill_then_resume_equals_uninterrupted_run(tmp_path: Path) -> None:
    path = tmp_path / "docs.jsonl"
    write_jsonl(path, 24_000)
    full = tmp_path / "full"
    corpus.tokenize("gpt2", [str(path)], str(full), shard_bytes=int(float(SHARD_MB) * 1e6), workers=2)
    out = tmp_path / "out"
    command = [sys.executable, "-m", "polytok", "tokenize-corpus", "gpt2", str(path), "--out", str(out),
               "--shard-mb", SHARD_MB, "--workers", "2"]
    env = {"PYTHONPATH": SRC, "PATH": ""}
    run = subprocess.Popen(command, env=env, start_new_session=True, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    try:
        while not _listed(out) and run.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)
    finally:
        os.killpg(run.pid, signal.SIGKILL)  # the CLI and its pool workers
        run.wait()
    kept = _listed(out)
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    assert kept and not manifest["complete"], "the run ended before it could be killed mid-way"
    total = sum(len(s["files"]) for s in json.loads((full / "manifest.json").read_text())["shards"])
    assert len(kept) < total
    stamps = {name: (os.stat(out / name).st_ino, os.stat(out / name).st_mtime_ns) for name in kept}
    done = subprocess.run(command + ["--resume"], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert folder_digest(out) == folder_digest(full)
    assert {name: (os.stat(out / name).st_ino, os.stat(out / name).st_mtime_ns) for name in kept} == stamps
    verified = subprocess.run([sys.executable, "-m", "polytok", "verify-corpus", str(out)], env=env,
                              capture_output=True, text=True)
    assert verified.returncode == 0 and verified.stdout.startswith("ok: "), verified.stderr
