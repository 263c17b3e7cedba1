"""One measurement in a fresh process: one engine, one row, one corpus, one shape of input.

    python bench/worker.py ENGINE ROW CORPUS SHAPE SIZE

ENGINE is ``polytok`` or ``reference``; SHAPE is ``string`` (the corpus as one
text) or ``lines`` (its non-empty lines as one batch). Prints one JSON object:
load time, the first encode after load (cold) and the same input again (warm),
the sizes, a digest of the ids (so the driver can check both engines agree) and
memory: the peak resident size of this process, and of its largest child (the
polytok pool's workers), above what it was before the load.

A fresh process per measurement keeps rows apart: nothing is cached or held in
memory from an earlier row, and cold means cold.
"""

from __future__ import annotations

import hashlib
import json
import resource
import sys
import time

from engines import ROWS, polytok_side, reference_side  # bench/ is on sys.path when run as a script


def _peak_mb(who: int) -> float:
    return resource.getrusage(who).ru_maxrss / 1024  # Linux: kilobytes


def _current_mb() -> float:
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return _peak_mb(resource.RUSAGE_SELF)


def _digest(ids: object) -> str:
    return hashlib.sha256(json.dumps(ids, separators=(",", ":")).encode()).hexdigest()[:16]


def measure(engine: str, row_name: str, corpus: str, shape: str, size: int) -> dict[str, object]:
    from fixtures import bench_slice

    row = next(r for r in ROWS if r.name == row_name)
    load, encode, encode_lines = (polytok_side if engine == "polytok" else reference_side)(row)
    text = bench_slice(corpus, size)
    lines = [line for line in text.split("\n") if line]
    run = (lambda obj: encode(obj, text)) if shape == "string" else (lambda obj: encode_lines(obj, lines))
    base = _current_mb()
    t0 = time.perf_counter()
    obj = load()
    t1 = time.perf_counter()
    ids = run(obj)
    t2 = time.perf_counter()
    run(obj)
    t3 = time.perf_counter()
    ids = [list(x) for x in ids] if shape == "lines" else list(ids)
    return {"engine": engine, "row": row_name, "corpus": corpus, "shape": shape,
            "mb": len(text.encode("utf-8")) / 1e6, "lines": len(lines), "load_s": t1 - t0,
            "cold_s": t2 - t1, "warm_s": t3 - t2, "ids": _digest(ids),
            "n_ids": sum(map(len, ids)) if shape == "lines" else len(ids),
            "peak_mb": _peak_mb(resource.RUSAGE_SELF) - base,
            "child_peak_mb": _peak_mb(resource.RUSAGE_CHILDREN)}


def main() -> int:
    engine, row_name, corpus, shape, size = sys.argv[1:6]
    try:
        result = measure(engine, row_name, corpus, shape, int(size))
    except Exception as exc:  # e.g. pytest's Skipped: a shared-only fixture absent here
        result = {"engine": engine, "row": row_name, "corpus": corpus, "shape": shape,
                  "skipped": f"{type(exc).__name__}: {exc}"}
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
