"""Throughput and load time of polytok side by side with the reference engines, as ratios.

    python bench/run.py            # every tokenizer.json model below, all three corpora
    python bench/run.py --quick    # about a minute: fewer models, 200 kB slices

GGUF rows compare with llama.cpp through llama-cpp-python 0.3.36 when it is
installed (``pip install llama-cpp-python==0.3.36`` compiles llama.cpp),
encoding with add_special=False and special markers as text (llama.cpp's
parse_special=false).

For each model: load time (polytok, reference), then for each corpus the
encode throughput in MB/s of one long string, cold (the first encode after
load) and warm (the same text again, caches filled), and the ratio
polytok / reference (above 1.0: polytok is faster). Results go to stdout as
a table and to bench/results/<date>.json. Parity is not checked here (the
tests do that); ids are compared only as a sanity check and a mismatch is
flagged in the table.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "src"))

import polytok  # noqa: E402
from fixtures import HF_JSON_FIXTURES, bench_slice, fixture_path, gguf_vocab_path  # noqa: E402

MODELS = ["gpt2", "llama3", "qwen3", "llama2", "gemma3", "bert-base-uncased", "albert-base-v2-tf5",
          "roberta-base", "mistral-v3-hf-converted"]
QUICK_MODELS = ["gpt2", "llama3", "llama2", "bert-base-uncased"]
CORPORA = ["bench_en", "bench_code", "bench_multi"]
GGUF_MODELS = ["llama-bpe", "llama-spm", "qwen2", "gemma-4", "bert-bge"]
QUICK_GGUF = ["llama-bpe", "llama-spm"]


def _timed(fn):
    t0 = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t0


def bench_model(name: str, texts: dict[str, str]) -> dict:
    import tokenizers

    path = fixture_path(name, HF_JSON_FIXTURES[name])
    ref, ref_load = _timed(lambda: tokenizers.Tokenizer.from_file(str(path)))
    ours, our_load = _timed(lambda: polytok.load(path))
    row = {"model": name, "load_s": {"polytok": our_load, "tokenizers": ref_load}, "corpora": {}}
    for corpus, text in texts.items():
        mb = len(text.encode("utf-8")) / 1e6
        ref_ids, ref_cold = _timed(lambda: ref.encode(text, add_special_tokens=False).ids)
        _, ref_warm = _timed(lambda: ref.encode(text, add_special_tokens=False).ids)
        our_ids, our_cold = _timed(lambda: ours.encode(text, add_special=False))
        _, our_warm = _timed(lambda: ours.encode(text, add_special=False))
        row["corpora"][corpus] = {
            "mb": mb, "same_ids": ref_ids == our_ids,
            "cold_mb_s": {"polytok": mb / our_cold, "tokenizers": mb / ref_cold},
            "warm_mb_s": {"polytok": mb / our_warm, "tokenizers": mb / ref_warm},
        }
    return row


def bench_gguf(name: str, texts: dict[str, str]) -> dict:
    """polytok vs llama.cpp (llama-cpp-python, vocab only): llama_tokenize(add_special=False, parse_special=False)."""
    import llama_cpp

    path = gguf_vocab_path(name)
    ref, ref_load = _timed(lambda: llama_cpp.Llama(model_path=str(path), vocab_only=True, verbose=False))
    ours, our_load = _timed(lambda: polytok.load(path))
    row = {"model": f"{name}.gguf", "engine": f"llama-cpp-python {llama_cpp.__version__}",
           "load_s": {"polytok": our_load, "tokenizers": ref_load}, "corpora": {}}
    for corpus, text in texts.items():
        data = text.encode("utf-8")
        mb = len(data) / 1e6
        ref_ids, ref_cold = _timed(lambda: ref.tokenize(data, add_bos=False, special=False))
        _, ref_warm = _timed(lambda: ref.tokenize(data, add_bos=False, special=False))
        our_ids, our_cold = _timed(lambda: ours.encode(text, add_special=False, special="text"))
        _, our_warm = _timed(lambda: ours.encode(text, add_special=False, special="text"))
        row["corpora"][corpus] = {
            "mb": mb, "same_ids": list(ref_ids) == our_ids,
            "cold_mb_s": {"polytok": mb / our_cold, "tokenizers": mb / ref_cold},
            "warm_mb_s": {"polytok": mb / our_warm, "tokenizers": mb / ref_warm},
        }
    return row


def table(rows: list[dict]) -> str:
    lines = ["| model | load polytok / reference (s) | corpus | cold MB/s polytok / reference (ratio) "
             "| warm MB/s polytok / reference (ratio) | ids |",
             "|---|---|---|---|---|---|"]
    for row in rows:
        load = row["load_s"]
        for corpus, c in row["corpora"].items():
            cold, warm = c["cold_mb_s"], c["warm_mb_s"]
            lines.append(
                f"| {row['model']} | {load['polytok']:.2f} / {load['tokenizers']:.2f} | {corpus} "
                f"| {cold['polytok']:.2f} / {cold['tokenizers']:.2f} ({cold['polytok'] / cold['tokenizers']:.2f}×) "
                f"| {warm['polytok']:.2f} / {warm['tokenizers']:.2f} ({warm['polytok'] / warm['tokenizers']:.2f}×) "
                f"| {'same' if c['same_ids'] else 'DIFFER'} |")
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="fewer models, 200 kB slices")
    ap.add_argument("--models", nargs="*", help="tokenizer.json fixture names")
    ap.add_argument("--gguf", nargs="*", help="ggml-vocab names (llama.cpp rows; needs llama-cpp-python)")
    args = ap.parse_args()
    try:
        import tokenizers
    except ImportError:
        print("bench: the reference engine is missing: pip install '.[bench]'", file=sys.stderr)
        return 2
    models = args.models or (QUICK_MODELS if args.quick else MODELS)
    size = 200_000 if args.quick else 10**8
    texts = {c: bench_slice(c, size) for c in CORPORA}
    texts = {c: t for c, t in texts.items() if t}
    rows = []
    for name in models:
        print(f"… {name}", file=sys.stderr)
        rows.append(bench_model(name, texts))
    gguf = args.gguf if args.gguf is not None else (QUICK_GGUF if args.quick else GGUF_MODELS)
    try:
        import llama_cpp  # noqa: F401
    except ImportError:
        print("bench: llama-cpp-python is not installed; GGUF rows skipped", file=sys.stderr)
        gguf = []
    for name in gguf:
        print(f"… {name}.gguf", file=sys.stderr)
        rows.append(bench_gguf(name, texts))
    print(f"polytok {polytok.__version__} vs tokenizers {tokenizers.__version__} (tokenizer.json rows) and "
          f"llama.cpp through llama-cpp-python (.gguf rows), Python {sys.version.split()[0]}")
    print(table(rows))
    out = ROOT / "bench" / "results"
    out.mkdir(parents=True, exist_ok=True)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    (out / f"{stamp}.json").write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
