"""Peak memory and time of one encode, each measured alone in a fresh interpreter.

Used by tests/robustness/test_encode_memory.py and tools/sweep_pathological.py
(``--memory``). The child loads the tokenizer (``"gpt2"`` is the built-in one, else a
``family/name`` of `pathological.tokenizer_files`), encodes a short text of the same
kind (what is built on first use belongs to the loaded tokenizer), builds the text,
gives freed memory back to the system (``gc.collect``, glibc ``malloc_trim``) and
resets the peak-RSS mark (``/proc/self/clear_refs``), then encodes once. It reports
the growth of ``resource.getrusage(...).ru_maxrss`` over that encode (the ids it
returns included), its wall and CPU seconds, and the ids' count and SHA-256.

    PYTHONPATH=src:tests python tests/robustness/encode_memory.py '["gpt2", "one-char", 1000000]'
"""

from __future__ import annotations

import contextlib
import ctypes
import gc
import hashlib
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

_TESTS = Path(__file__).resolve().parent.parent
_SRC = _TESTS.parent / "src"


def ids_digest(ids: list[int]) -> str:
    return hashlib.sha256(json.dumps(ids).encode()).hexdigest()


def _peak_kb() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def _settle() -> int:
    """Free what is garbage, give freed heap back to the system, reset the peak mark; the peak (kB) from here."""
    gc.collect()
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")  # Linux: the peak RSS becomes the current RSS
    except OSError:
        pass  # then only growth past the load's own peak shows (an underestimate at worst)
    return _peak_kb()


def _load(spec: str) -> Any:
    import polytok
    from robustness.pathological import tokenizer_files

    if "/" not in spec:
        return polytok.load(spec)
    return polytok.load(next(get for family, name, get in tokenizer_files() if f"{family}/{name}" == spec)())


def measure(spec: str, kind: str, size: int) -> dict[str, Any]:
    """One encode of ``KINDS[kind](size)`` by `spec`'s tokenizer, in this (fresh) process."""
    import polytok
    from robustness.pathological import KINDS

    tok = _load(spec)
    try:
        tok.encode(KINDS[kind](1000))
    except polytok.PolytokError:
        return {"refused": True}  # e.g. WordPiece without [UNK]: the reference refuses it too
    text = KINDS[kind](size)
    before = _settle()
    start, cpu = time.perf_counter(), time.process_time()
    ids = tok.encode(text)
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    return {"mb": len(text.encode("utf-8")) / 1e6, "chars": len(text), "seconds": seconds, "cpu_seconds": cpu,
            "peak_mb": (_peak_kb() - before) / 1024, "ids": len(ids), "sha256": ids_digest(ids)}


def run(spec: str, kind: str, size: int, timeout: float) -> dict[str, Any]:
    """`measure` in a fresh interpreter; ``{"timeout": True}`` or ``{"error": ...}`` when it fails."""
    command = [sys.executable, __file__, json.dumps([spec, kind, size])]
    env = {**os.environ, "PYTHONPATH": f"{_SRC}{os.pathsep}{_TESTS}"}
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        return {"timeout": True}
    if done.returncode:
        return {"error": (done.stderr.strip().splitlines() or ["?"])[-1]}
    return json.loads(done.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


if __name__ == "__main__":
    print(json.dumps(measure(*json.loads(sys.argv[1]))))
