"""Corpus throughput of ``polytok.corpus.tokenize``: 1 process, 2 processes, and Ray on a local instance.

    python bench/corpus.py                      # gpt2, the three bench texts, 3 runs each, best kept
    python bench/corpus.py --model PATH --repeat 5 --shard-mb 0.25
    python bench/corpus.py --engines local --repeat 15   # 1 against 2 processes only

The corpus is a JSONL file of the bench texts' paragraphs (../shared/fixtures/
texts/bench_{en,code,multi}.txt, cut at blank lines). Each measurement runs in a
fresh process (`--one ENGINE WORKERS`): the tokenizer is loaded and, for Ray,
the local instance started (``ray.init(num_cpus=WORKERS)``) before the clock
starts; the clock covers `tokenize` whole (reading, encoding, writing shards and
manifest, starting the pool or the actors). MB/s counts the input's text bytes
(UTF-8 of the documents), tokens/s the ids written; "1st shard" is the time until
the first shard is listed (pool or actor start-up, cold caches) and "MB/s after"
the input rate from then on (the JSONL bytes, so a little above the text rate);
"cpu s" is the CPU time of the run's process and its workers (not Ray's
actors): on a busy machine it shows whether two workers do more work than one.
The machine may be shared, so each engine runs `--repeat` times, the engines
taking turns, and the best run is reported; 2 processes against 1 is also given
as the median of the ratios of runs made one after the other, which a host whose
speed drifts over minutes weighs on both sides alike. The outputs are checked to
be byte-identical across engines. Results go to bench/results/corpus-<date>.json.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TEXTS = ROOT.parent / "shared" / "fixtures" / "texts"
ENGINES = [("local", 1), ("local", 2), ("ray", 2)]


def make_corpus(path: Path) -> int:
    """Write the JSONL corpus; returns its documents' UTF-8 bytes."""
    total = 0
    with open(path, "w", encoding="utf-8") as out:
        for name in ("bench_en", "bench_code", "bench_multi"):
            text = (TEXTS / f"{name}.txt").read_text(encoding="utf-8")
            for doc in text.split("\n\n"):
                if doc:
                    out.write(json.dumps({"text": doc}, ensure_ascii=False) + "\n")
                    total += len(doc.encode("utf-8"))
    return total


def _cpu_seconds() -> float:
    """User + system CPU time of this process and its finished children (the pool's workers; not Ray's)."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def one(engine: str, workers: int, model: str, corpus_path: str, shard_mb: float) -> dict:
    """One measurement, in this (fresh) process."""
    sys.path.insert(0, str(ROOT / "src"))
    import polytok
    from polytok import corpus

    tok = polytok.load(model)
    if engine == "ray":
        import ray

        ray.init(num_cpus=workers, include_dashboard=False, log_to_driver=False, logging_level="ERROR",
                 runtime_env={"env_vars": {"PYTHONPATH": str(ROOT / "src")}})
    listed: list[tuple[float, int]] = []  # (time, input bytes) as shards are listed

    def progress(documents: int, tokens: int, done: int) -> None:
        listed.append((time.perf_counter(), done))

    with tempfile.TemporaryDirectory() as out:
        start, cpu_start = time.perf_counter(), _cpu_seconds()
        manifest = corpus.tokenize(tok, [corpus_path], out, shard_bytes=int(shard_mb * 1e6), engine=engine,
                                   workers=workers, model_name=model, progress=progress)
        seconds, cpu = time.perf_counter() - start, _cpu_seconds() - cpu_start
        digest = hashlib.sha256()
        for name in sorted(os.listdir(out)):
            digest.update(name.encode() + Path(out, name).read_bytes())
    (first_t, first_bytes), (_, all_bytes) = listed[0], listed[-1]
    return {"seconds": seconds, "cpu_seconds": cpu, "first_shard_s": first_t - start,
            "after_first_mb_s": (all_bytes - first_bytes) / max(start + seconds - first_t, 1e-9) / 1e6,
            "tokens": manifest["tokens"], "documents": manifest["documents"],
            "shards": len(manifest["shards"]), "digest": digest.hexdigest()}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", default="gpt2")
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--shard-mb", type=float, default=0.25)
    p.add_argument("--engines", default="local,ray", help="which engines to run (local, ray), comma-separated")
    p.add_argument("--one", nargs=2, metavar=("ENGINE", "WORKERS"), help=argparse.SUPPRESS)
    p.add_argument("--corpus", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.one:
        print(json.dumps(one(args.one[0], int(args.one[1]), args.model, args.corpus, args.shard_mb)))
        return 0
    with tempfile.TemporaryDirectory() as folder:
        corpus_path = Path(folder) / "corpus.jsonl"
        text_bytes = make_corpus(corpus_path)
        engines = [(e, w) for e, w in ENGINES if e in args.engines.split(",")]
        rows: dict[str, list[dict]] = {f"{engine} x{workers}": [] for engine, workers in engines}
        for _ in range(args.repeat):  # engines interleaved: a busy spell on a shared machine hits them all
            for engine, workers in engines:
                done = subprocess.run([sys.executable, __file__, "--one", engine, str(workers), "--model", args.model,
                                       "--corpus", str(corpus_path), "--shard-mb", str(args.shard_mb)],
                                      capture_output=True, text=True)
                if done.returncode:
                    print(f"{engine} x{workers}: failed: {done.stderr.strip().splitlines()[-1:]}", file=sys.stderr)
                    continue
                rows[f"{engine} x{workers}"].append(json.loads(done.stdout.strip().splitlines()[-1]))
    return report({name: runs for name, runs in rows.items() if runs}, text_bytes, args)


def report(rows: dict, text_bytes: int, args: argparse.Namespace) -> int:
    digests = {r["digest"] for runs in rows.values() for r in runs}
    print(f"corpus: {text_bytes / 1e6:.2f} MB of text, model {args.model}, shards of {args.shard_mb} MB, "
          f"best of {args.repeat} (all runs: {'identical output' if len(digests) == 1 else 'OUTPUTS DIFFER'})")
    print(f"{'engine':<10} {'MB/s':>7} {'tokens/s':>10} {'seconds':>8} {'cpu s':>6} {'1st shard':>9} "
          f"{'MB/s after':>10}  runs (s)")
    best = {}
    for name, runs in rows.items():
        fastest = min(runs, key=lambda r: r["seconds"])
        best[name] = text_bytes / fastest["seconds"] / 1e6
        all_runs = " ".join(format(r["seconds"], ".2f") for r in runs)
        print(f"{name:<10} {best[name]:>7.2f} {fastest['tokens'] / fastest['seconds']:>10,.0f} "
              f"{fastest['seconds']:>8.2f} {fastest['cpu_seconds']:>6.2f} {fastest['first_shard_s']:>9.2f} "
              f"{fastest['after_first_mb_s']:>10.2f}  {all_runs}")
    if "local x1" in best and "local x2" in best:
        # runs made one after the other, paired: this host's speed drifts by 20 % over minutes
        pairs = sorted(a["seconds"] / b["seconds"] / 2 for a, b in zip(rows["local x1"], rows["local x2"]))
        after = sorted(b["after_first_mb_s"] / a["after_first_mb_s"] / 2
                       for a, b in zip(rows["local x1"], rows["local x2"]))
        print(f"2 processes / (2 x 1 process): {best['local x2'] / (2 * best['local x1']):.3f} (best runs), "
              f"{pairs[len(pairs) // 2]:.3f} (median of {len(pairs)} pairs); after the first shard: "
              f"{after[len(after) // 2]:.3f} (median of pairs)")
    results = ROOT / "bench" / "results"
    results.mkdir(exist_ok=True)
    (results / f"corpus-{time.strftime('%Y-%m-%d')}.json").write_text(
        json.dumps({"text_bytes": text_bytes, "model": args.model, "shard_mb": args.shard_mb, "runs": rows},
                   indent=1) + "\n", encoding="utf-8")
    return 0 if len(digests) == 1 else 1


if __name__ == "__main__":
    sys.exit(main())
