"""Throughput, load time and memory of polytok side by side with the reference engines, as ratios.

    python bench/run.py            # every row below, the three whole corpora
    python bench/run.py --quick    # one to two minutes: seven rows, 100 kB slices
    python bench/run.py --rows gpt2 llama-spm --corpora bench_en

One row per tokenizer file, for every model type and format (see `engines.ROWS`):
byte-level BPE, SentencePiece-style BPE, Unigram and WordPiece as tokenizer.json,
GGUF (llama.cpp through llama-cpp-python 0.3.36, when installed), SentencePiece
``.model``, tiktoken and tekken files. Each engine is called as its users call it
(`engines`); engines that are not installed are skipped, saying so.

Every number comes from a fresh process (`worker.py`) per engine, row, corpus and
shape: load, the first encode after the load (cold) and the same input again
(warm), for the corpus as one string and for its lines as one batch (the
reference's batch call, polytok's ``encode_batch``: both may use every core),
and the peak memory above the process's size before the load. The table gives
MB/s as polytok / reference with their ratio (above 1.0: polytok is faster; for
load time, the reference's time over polytok's). Results also go to
bench/results/<date>.json. Parity is the tests' job; here the ids' digests are
compared only as a sanity check, and a mismatch is flagged.

polytok's modules are compiled to bytecode first (``compileall``), as ``pip install``
compiles an installed package's and the reference engines' were: otherwise, where
``PYTHONDONTWRITEBYTECODE`` is set or the tree is fresh, each fresh process would compile
the modules a load imports, and count that as load time.
"""


from __future__ import annotations

import argparse
import compileall
import importlib.util
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

from engines import ENGINE_MODULE, QUICK, ROWS, Row, engine_version

ROOT = Path(__file__).resolve().parent.parent
CORPORA = ["bench_en", "bench_code", "bench_multi"]
SHAPES = ["string", "lines"]


def measure(engine: str, row: Row, corpus: str, shape: str, size: int) -> dict:
    worker = Path(__file__).resolve().parent / "worker.py"
    done = subprocess.run([sys.executable, str(worker), engine, row.name, corpus, shape, str(size)],
                          capture_output=True, text=True, timeout=3600)
    lines = done.stdout.strip().splitlines()
    if done.returncode or not lines:
        return {"skipped": f"worker failed: {done.stderr.strip().splitlines()[-1:] or done.returncode}"}
    return json.loads(lines[-1])


def bench_row(row: Row, corpora: list[str], size: int) -> dict:
    """Every measurement of one row, and its summary."""
    results = {}
    for corpus in corpora:
        for shape in SHAPES:
            for engine in ("polytok", "reference"):
                results[corpus, shape, engine] = measure(engine, row, corpus, shape, size)
    skipped = [r["skipped"] for r in results.values() if "skipped" in r]
    out: dict = {"row": row.name, "label": row.label, "format": row.kind, "model_type": row.model_type,
                 "reference": engine_version(row.kind), "measurements": [dict(r) for r in results.values()]}
    if skipped:
        out["skipped"] = skipped[0]
        return out
    for engine in ("polytok", "reference"):
        mine = [r for (_, _, e), r in results.items() if e == engine]
        out.setdefault("load_s", {})[engine] = statistics.median(r["load_s"] for r in mine)
        out.setdefault("peak_mb", {})[engine] = max(max(r["peak_mb"], r["child_peak_mb"]) for r in mine)
    out["corpora"] = {}
    for corpus in corpora:
        entry: dict = {}
        for shape in SHAPES:
            ours, ref = results[corpus, shape, "polytok"], results[corpus, shape, "reference"]
            entry[shape] = {"mb": ours["mb"], "same_ids": ours["ids"] == ref["ids"],
                            "cold_mb_s": {"polytok": ours["mb"] / ours["cold_s"],
                                          "reference": ref["mb"] / ref["cold_s"]},
                            "warm_mb_s": {"polytok": ours["mb"] / ours["warm_s"],
                                          "reference": ref["mb"] / ref["warm_s"]}}
        out["corpora"][corpus] = entry
    return out


def _cell(d: dict) -> str:
    return f"{d['polytok']:.2f} / {d['reference']:.2f} ({d['polytok'] / d['reference']:.2f}×)"


def table(rows: list[dict]) -> str:
    lines = ["| model | type | load s polytok / reference | peak MB polytok / reference | corpus "
             "| string cold MB/s | string warm MB/s | lines cold MB/s | lines warm MB/s | ids |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for row in rows:
        if "skipped" in row:
            lines.append(f"| {row['label']} | {row['model_type']} | skipped: {row['skipped'][:80]} |||||||")
            continue
        load, peak = row["load_s"], row["peak_mb"]
        head = (f"| {row['label']} | {row['model_type']} | {load['polytok']:.2f} / {load['reference']:.2f} "
                f"({load['reference'] / load['polytok']:.2f}×) | {peak['polytok']:.0f} / {peak['reference']:.0f}")
        for corpus, entry in row["corpora"].items():
            same = all(entry[s]["same_ids"] for s in SHAPES)
            lines.append(f"{head} | {corpus} | {_cell(entry['string']['cold_mb_s'])} "
                         f"| {_cell(entry['string']['warm_mb_s'])} | {_cell(entry['lines']['cold_mb_s'])} "
                         f"| {_cell(entry['lines']['warm_mb_s'])} | {'same' if same else 'DIFFER'} |")
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="seven rows, 100 kB slices")
    ap.add_argument("--rows", nargs="*", help="row names (default: all, or the quick ones)")
    ap.add_argument("--corpora", nargs="*", choices=CORPORA, help="default: all three")
    ap.add_argument("--size", type=int, help="characters per corpus (default: whole, 100 kB with --quick)")
    args = ap.parse_args()
    names = args.rows if args.rows is not None else (QUICK if args.quick else [r.name for r in ROWS])
    unknown = set(names) - {r.name for r in ROWS}
    if unknown:
        ap.error(f"unknown rows: {', '.join(sorted(unknown))} (rows: {', '.join(r.name for r in ROWS)})")
    size = args.size or (100_000 if args.quick else 10**8)
    compileall.compile_dir(ROOT / "src" / "polytok", quiet=1)  # bytecode, as an installed package has (notes)
    rows = []
    for row in (r for r in ROWS if r.name in names):
        if importlib.util.find_spec(ENGINE_MODULE[row.kind]) is None:
            print(f"bench: {ENGINE_MODULE[row.kind]} is not installed; {row.label} skipped", file=sys.stderr)
            continue
        print(f"… {row.label}", file=sys.stderr)
        rows.append(bench_row(row, args.corpora or CORPORA, size))
    import polytok

    print(f"polytok {polytok.__version__}, Python {sys.version.split()[0]}; references: "
          + ", ".join(sorted({r["reference"] for r in rows})))
    print(table(rows))
    out = ROOT / "bench" / "results"
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{time.strftime('%Y%m%d-%H%M%S')}.json").write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
