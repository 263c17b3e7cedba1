"""Worst-case encode time and memory per MB of pathological text, for every fixture tokenizer.

For each tokenizer (every tokenizer.json fixture, llama.cpp's ggml-vocab GGUFs, the
SentencePiece, tiktoken, tekken, vocab.txt and RWKV files) and each pathological text
(tests/robustness/pathological.py: runs of one character, spaces, digits, combining
marks, newlines, no spaces at all, mixes), encode a small and a large text and print
seconds per MB at the large size and the growth ratio (large time / small time; linear
is the size ratio). A ratio far above the size ratio means a super-linear path.

With ``--memory`` each encode runs alone in a fresh subprocess
(tests/robustness/encode_memory.py: the tokenizer loaded and warmed, freed memory
returned, the peak-RSS mark reset, then one ``encode``); the row gives CPU seconds and
peak-RSS growth (``resource.getrusage(...).ru_maxrss``), both per MB of UTF-8 text,
at the largest size.

    PYTHONPATH=src:tests python tools/sweep_pathological.py [--sizes 100000,1000000]
        [--kinds one-char,spaces] [--only NAME] [--timeout 120] [--memory]
"""

from __future__ import annotations

import argparse
import signal
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from robustness import encode_memory
from robustness.pathological import KINDS, tokenizer_files

import polytok


def _alarm(_signum: int, _frame: Any) -> None:
    raise TimeoutError


def time_encode(tok: polytok.Tokenizer, text: str, timeout: float) -> float | None:
    """Seconds for one encode call; None when it exceeds `timeout`; 0 when the tokenizer refuses the text."""
    signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, timeout)
    start = time.perf_counter()
    try:
        tok.encode(text)
    except TimeoutError:
        return None
    except polytok.PolytokError:
        return 0.0  # e.g. a WordPiece vocabulary without [UNK]: the reference raises too
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
    return time.perf_counter() - start


def sweep_one(tok: polytok.Tokenizer, kinds: list[str], sizes: list[int],
              timeout: float) -> list[tuple[str, float, float]]:
    """(kind, s/MB at the largest size, growth ratio) per kind."""
    rows = []
    for kind in kinds:
        times, mb = [], 1.0
        for size in sizes:
            text = KINDS[kind](size)
            mb = len(text.encode("utf-8")) / 1e6
            seconds = time_encode(tok, text, timeout)
            times.append(float("inf") if seconds is None else seconds)
        ratio = times[-1] / max(times[0], 1e-4) if len(times) > 1 else float("nan")
        rows.append((kind, times[-1] / mb, ratio))
    return rows


def sweep_memory(family: str, name: str, kinds: list[str], size: int, timeout: float) -> list[tuple[str, float, float]]:
    """(kind, CPU s/MB, peak MB per MB of text) per kind, each in a fresh subprocess (CPU time: the
    machine may be shared)."""
    rows = []
    for kind in kinds:
        found = encode_memory.run(f"{family}/{name}", kind, size, timeout)
        if "mb" in found:
            rows.append((kind, found["cpu_seconds"] / found["mb"], found["peak_mb"] / found["mb"]))
        elif not found.get("refused"):
            print(f"  {kind}: {found}", flush=True)
            rows.append((kind, float("inf"), float("inf")))
    return rows


def _report_memory(family: str, name: str, rows: list[tuple[str, float, float]],
                   worst: dict[str, list[tuple[float, str]]]) -> None:
    if not rows:
        print(f"{family}/{name}: every text refused", flush=True)
        return
    slow = max(rows, key=lambda row: row[1])
    big = max(rows, key=lambda row: row[2])
    print(f"{family}/{name}: worst {slow[1]:.2f} s/MB ({slow[0]}), {big[2]:.1f} MB/MB ({big[0]})", flush=True)
    entry = worst.setdefault(family, [(0.0, ""), (0.0, "")])
    if slow[1] > entry[0][0]:
        entry[0] = (slow[1], f"{name} {slow[0]}")
    if big[2] > entry[1][0]:
        entry[1] = (big[2], f"{name} {big[0]}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="100000,1000000", help="characters per text, small to large")
    parser.add_argument("--kinds", default=",".join(KINDS))
    parser.add_argument("--only", default="", help="substrings of family/name, comma-separated")
    parser.add_argument("--timeout", type=float, default=120.0)
    parser.add_argument("--memory", action="store_true", help="peak RSS and time per encode, each in a subprocess")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    kinds = args.kinds.split(",")
    growth = sizes[-1] / sizes[0]
    print(f"sizes {sizes} (linear growth ratio {growth:.0f}); kinds {len(kinds)}", flush=True)
    worst_family: dict[str, tuple[float, str]] = {}
    worst_memory: dict[str, list[tuple[float, str]]] = {}
    for family, name, get in tokenizer_files():
        if args.only and not any(part in f"{family}/{name}" for part in args.only.split(",")):
            continue
        if args.memory:
            _report_memory(family, name, sweep_memory(family, name, kinds, sizes[-1], args.timeout), worst_memory)
            continue
        try:
            tok = polytok.load(get())
        except BaseException as exc:  # a fixture that cannot be fetched here is skipped
            print(f"{family}/{name}: skipped ({type(exc).__name__})", flush=True)
            continue
        rows = sweep_one(tok, kinds, sizes, args.timeout)
        kind, per_mb, ratio = max(rows, key=lambda row: row[1])
        steep = [f"{k} x{r:.0f}" for k, _, r in rows if r > 2.5 * growth and _ > 1.0]
        print(f"{family}/{name}: worst {per_mb:.2f} s/MB ({kind}, growth x{ratio:.1f})"
              + (f"  SUPER-LINEAR? {', '.join(steep)}" if steep else ""), flush=True)
        if per_mb > worst_family.get(family, (0.0, ""))[0]:
            worst_family[family] = (per_mb, f"{name} {kind}")
    if args.memory:
        print("worst per family (s/MB, MB/MB):")
        for family, ((per_mb, where), (mem, mem_where)) in sorted(worst_memory.items()):
            print(f"  {family}: {per_mb:.2f} s/MB ({where}); {mem:.1f} MB/MB ({mem_where})")
        return 0
    print("worst per family:")
    for family, (per_mb, where) in sorted(worst_family.items()):
        print(f"  {family}: {per_mb:.2f} s/MB ({where})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
