"""Where polytok's time goes on one benchmark row: a profile of one encode, cold or warm.

    python bench/hotspots.py ROW [CORPUS] [--warm] [--lines] [--top 15]

ROW is a row name of `engines.ROWS` (``python bench/hotspots.py --list`` lists
them); CORPUS one of bench_en, bench_code, bench_multi (default bench_en). The
tokenizer is loaded exactly as the benchmark loads it, then the corpus is encoded
once (cold) — and again, profiled, with ``--warm``; ``--lines`` encodes its lines
as one batch in this process. Prints the functions that took the most time of
their own (cProfile ``tottime``) with their share of the whole, the numbers the
notes on rows below 1.0 in bench/README.md quote. cProfile adds its own cost per Python
call, so shares of many small calls read high.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from engines import ROWS, polytok_side


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("row", nargs="?")
    p.add_argument("corpus", nargs="?", default="bench_en")
    p.add_argument("--warm", action="store_true", help="profile a second encode of the same input")
    p.add_argument("--lines", action="store_true", help="the corpus's non-empty lines as one batch (one process)")
    p.add_argument("--top", type=int, default=15)
    p.add_argument("--list", action="store_true", help="list the rows")
    args = p.parse_args()
    rows = {row.name: row for row in ROWS}
    if args.list or args.row is None:
        print("\n".join(f"{row.name:40} {row.label}" for row in ROWS))
        return
    if args.row not in rows:
        raise SystemExit(f"unknown row {args.row!r}; --list lists them")
    from fixtures import bench_slice  # tests/ is on the path through engines

    text = bench_slice(args.corpus, 10**9)
    load, encode, _ = polytok_side(rows[args.row])
    start = time.perf_counter()
    tok = load()
    loaded = time.perf_counter() - start

    def run() -> None:
        if args.lines:
            for line in text.splitlines():
                if line:
                    encode(tok, line)
        else:
            encode(tok, text)

    if args.warm:
        run()
    profiler = cProfile.Profile()
    start = time.perf_counter()
    profiler.runcall(run)
    wall = time.perf_counter() - start
    out = io.StringIO()
    stats = pstats.Stats(profiler, stream=out)
    total = stats.total_tt  # type: ignore[attr-defined]
    print(f"{rows[args.row].label} on {args.corpus} ({len(text.encode()) / 1e6:.2f} MB), "
          f"{'warm' if args.warm else 'cold'}{', lines' if args.lines else ''}: load {loaded:.2f} s, "
          f"encode {wall:.2f} s under the profiler")
    entries = sorted(stats.stats.items(), key=lambda item: -item[1][2])  # type: ignore[attr-defined]
    print(f"{'own s':>7} {'share':>6} {'calls':>9}  function")
    for (filename, line, name), (_, calls, own, _, _) in entries[:args.top]:
        where = name if filename == "~" else f"{name} ({Path(filename).name}:{line})"
        print(f"{own:7.3f} {100 * own / total:5.1f}% {calls:9d}  {where}")


if __name__ == "__main__":
    main()
