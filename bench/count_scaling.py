"""``polytok count`` over the three bench texts with one worker and with several, as a ratio.

    python bench/count_scaling.py                       # gpt2 (built in), 1 vs 2 workers, best of 5
    python bench/count_scaling.py --model PATH --workers 4 --repeat 3

Two measurements per run, each in a fresh process so every run starts cold:

- end to end: ``python -m polytok count MODEL FILES --workers W``, wall time of
  the whole command (interpreter start, load, reading, counting, printing);
- the count alone: a process that loads the tokenizer and reads the files
  first, then times what ``count`` does with them (``parallel.count_long``
  for W > 1, ``Tokenizer.encode`` per file for 1).

A third, for scale: W copies of the one-worker count alone run at once, each in its own
process (nothing shared, nothing to join). If each copy takes t instead of the lone
run's t1, this host gives W × t1 / t of one core's throughput to W independent jobs:
the most any sharing of one job can reach here (caches and memory are shared by the
cores, and a shared host's other tenants take their part).

Runs alternate between 1 and W workers; the table gives the best of ``--repeat``
for each side and their ratio, and the median of the ratios of runs made one
after the other, so a machine whose speed drifts (a shared host) or another
process slowing it for a while weighs on both sides alike. The
counts of both sides must agree. Prints a table and writes
bench/results/count-scaling-<date>.json.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TEXTS = [ROOT.parent / "shared" / "fixtures" / "texts" / f"bench_{name}.txt" for name in ("en", "code", "multi")]
ENV = dict(os.environ, PYTHONPATH=str(ROOT / "src") + os.pathsep + os.environ.get("PYTHONPATH", ""))


def child(model: str, workers: int, files: list[str]) -> None:
    """The count alone, timed inside one process (see the module notes); prints JSON."""
    import polytok
    from polytok import parallel

    start = time.perf_counter()
    tok = polytok.load(model)
    loaded = time.perf_counter()
    texts = [Path(f).read_text(encoding="utf-8") for f in files]
    begin = time.perf_counter()
    if workers > 1:
        counts = parallel.count_long(tok, texts, add_special=True, special=None, workers=workers)
        if counts is None:
            raise SystemExit(f"{model}: parallel.count_long does not share this pipeline")
    else:
        counts = [len(tok.encode(t)) for t in texts]
    end = time.perf_counter()
    print(json.dumps({"load": loaded - start, "count": end - begin, "counts": counts}))


def end_to_end(model: str, workers: int, files: list[str]) -> tuple[float, list[str]]:
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "polytok", "count", model, *files, "--workers", str(workers)],
                          capture_output=True, text=True, env=ENV, check=True)
    return time.perf_counter() - start, done.stdout.split()[::2]


def count_alone(model: str, workers: int, files: list[str]) -> dict:
    done = subprocess.run([sys.executable, __file__, "--child", str(workers), "--model", model, *files],
                          capture_output=True, text=True, env=ENV, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def copies_at_once(model: str, workers: int, files: list[str]) -> float:
    """The slowest count-alone time of `workers` one-worker children started together."""
    procs = [subprocess.Popen([sys.executable, __file__, "--child", "1", "--model", model, *files],
                              stdout=subprocess.PIPE, text=True, env=ENV) for _ in range(workers)]
    times = []
    for proc in procs:
        out, _ = proc.communicate()
        if proc.returncode:
            raise SystemExit(f"a one-worker copy failed (exit status {proc.returncode})")
        times.append(json.loads(out.strip().splitlines()[-1])["count"])
    return max(times)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--model", default="gpt2")
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--child", type=int, default=0, help=argparse.SUPPRESS)
    p.add_argument("files", nargs="*", default=[str(t) for t in TEXTS])
    args = p.parse_args()
    if args.child:
        child(args.model, args.child, args.files)
        return
    missing = [f for f in args.files if not Path(f).is_file()]
    if missing:
        raise SystemExit(f"missing: {', '.join(missing)} (the bench texts are in ../shared/fixtures/texts)")
    sides = {1: {"end_to_end": [], "count": [], "load": []}, args.workers: {"end_to_end": [], "count": [], "load": []}}
    counts = {}
    copies: list[float] = []
    for _ in range(args.repeat):
        for workers in (1, args.workers):
            wall, printed = end_to_end(args.model, workers, args.files)
            alone = count_alone(args.model, workers, args.files)
            sides[workers]["end_to_end"].append(wall)
            sides[workers]["count"].append(alone["count"])
            sides[workers]["load"].append(alone["load"])
            counts[workers] = (printed, alone["counts"])
        copies.append(copies_at_once(args.model, args.workers, args.files))
    if len({json.dumps(c) for c in counts.values()}) != 1:
        raise SystemExit(f"the counts differ between 1 and {args.workers} workers: {counts}")
    best = {w: {k: min(v) for k, v in s.items()} for w, s in sides.items()}
    mb = sum(Path(f).stat().st_size for f in args.files) / 1e6
    print(f"polytok count {args.model} over {len(args.files)} files ({mb:.2f} MB), best of {args.repeat}, "
          f"{os.cpu_count()} cores")
    print(f"{'':12} {'1 worker':>10} {f'{args.workers} workers':>10} {'ratio':>7} {'median of pairs':>16}")
    for key, label in (("end_to_end", "end to end"), ("count", "count alone")):
        one, many = best[1][key], best[args.workers][key]
        pairs = sorted(a / b for a, b in zip(sides[1][key], sides[args.workers][key]))
        print(f"{label:12} {one:9.3f}s {many:9.3f}s {one / many:6.2f}x {pairs[len(pairs) // 2]:15.2f}x")
    ceiling = sorted(args.workers * one / both for one, both in zip(sides[1]["count"], copies))
    print(f"{'load':12} {best[1]['load']:9.3f}s (in both)")
    print(f"{args.workers} one-worker copies at once: slowest {min(copies):.3f}s (best), "
          f"{args.workers} x 1 worker / copy = {args.workers * best[1]['count'] / min(copies):.2f}x (best), "
          f"{ceiling[len(ceiling) // 2]:.2f}x (median of pairs): the most sharing can reach here")
    out = ROOT / "bench" / "results" / f"count-scaling-{time.strftime('%Y-%m-%d')}.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps({"model": args.model, "workers": args.workers, "files": args.files, "mb": mb,
                               "runs": sides, "best": best, "copies_at_once": copies}, indent=1))


if __name__ == "__main__":
    main()
