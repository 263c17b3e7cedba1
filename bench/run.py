"""Throughput and load time of polytok side by side with the reference engines, as ratios.

    python bench/run.py            # every tokenizer.json model below, all three corpora
    python bench/run.py --quick    # about a minute: fewer models, 200 kB slices

GGUF rows compare with llama.cpp through llama-cpp-python 0.3.36 when it is
installed (``pip install llama-cpp-python==0.3.36`` compiles llama.cpp),
encoding with add_special=False and special markers as text (llama.cpp's
parse_special=false). SentencePiece (.model), tiktoken and tekken rows compare
with sentencepiece, tiktoken and mistral-common when installed (the ``bench``
extra), each with its plain call: ``encode(t)``, ``encode_ordinary(t)``,
``encode(t, bos=False, eos=False)``.

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
import importlib.util
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "src"))

import pytest  # noqa: E402  (fixtures skip shared-only files with pytest.skip)

import polytok  # noqa: E402
from fixtures import HF_JSON_FIXTURES, bench_slice, fixture_path, gguf_vocab_path  # noqa: E402

MODELS = ["gpt2", "llama3", "qwen3", "llama2", "gemma3", "bert-base-uncased", "albert-base-v2-tf5",
          "roberta-base", "mistral-v3-hf-converted"]
QUICK_MODELS = ["gpt2", "llama3", "llama2", "bert-base-uncased"]
CORPORA = ["bench_en", "bench_code", "bench_multi"]
GGUF_MODELS = ["llama-bpe", "llama-spm", "qwen2", "gemma-4", "bert-bge"]
QUICK_GGUF = ["llama-bpe", "llama-spm"]
SPM_FILES = {"spm-mistral-v1": "tokenizer.model", "spm-botchan-unigram-1000": "spm.model",
             "spm-kyoto-ja-unigram-8000": "spm.model", "spm-bpemb-en-100k": "spm.model"}
TIKTOKEN_FILES = {"llama3-tiktoken": "tokenizer.model", "cl100k_base-tiktoken": "cl100k_base.tiktoken",
                  "whisper-gpt2-tiktoken": "gpt2.tiktoken"}
TEKKEN_MODELS = ["tekken-240718"]
QUICK_SPM, QUICK_TIKTOKEN = ["spm-mistral-v1"], ["llama3-tiktoken"]


def _timed(fn):
    t0 = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t0


def _row(label: str, engine: str, ref_load, ref_encode, our_load, texts: dict[str, str]) -> dict:
    """One model: load both, then per corpus the cold and warm encode of one long string.

    ``ref_encode(ref, text)`` returns the reference's ids; polytok encodes with
    add_special=False and special markers as text, the reference's plain call.
    """
    ref, ref_s = _timed(ref_load)
    ours, our_s = _timed(our_load)
    row = {"model": label, "engine": engine, "load_s": {"polytok": our_s, "reference": ref_s}, "corpora": {}}
    for corpus, text in texts.items():
        mb = len(text.encode("utf-8")) / 1e6
        ref_ids, ref_cold = _timed(lambda: list(ref_encode(ref, text)))
        _, ref_warm = _timed(lambda: ref_encode(ref, text))
        our_ids, our_cold = _timed(lambda: ours.encode(text, add_special=False, special="text"))
        _, our_warm = _timed(lambda: ours.encode(text, add_special=False, special="text"))
        row["corpora"][corpus] = {
            "mb": mb, "same_ids": ref_ids == our_ids,
            "cold_mb_s": {"polytok": mb / our_cold, "reference": mb / ref_cold},
            "warm_mb_s": {"polytok": mb / our_warm, "reference": mb / ref_warm},
        }
    return row


def bench_model(name: str, texts: dict[str, str]) -> dict:
    """polytok vs HF tokenizers on a tokenizer.json: ``encode(t, add_special_tokens=False)``.

    Markers are parsed on the reference side (its default); the bench texts hold none.
    """
    import tokenizers

    path = fixture_path(name, HF_JSON_FIXTURES[name])
    return _row(name, f"tokenizers {tokenizers.__version__}", lambda: tokenizers.Tokenizer.from_file(str(path)),
                lambda ref, t: ref.encode(t, add_special_tokens=False).ids, lambda: polytok.load(path), texts)


def bench_gguf(name: str, texts: dict[str, str]) -> dict:
    """polytok vs llama.cpp (llama-cpp-python, vocab only): llama_tokenize(add_special=False, parse_special=False)."""
    import llama_cpp

    path = gguf_vocab_path(name)
    return _row(f"{name}.gguf", f"llama-cpp-python {llama_cpp.__version__}",
                lambda: llama_cpp.Llama(model_path=str(path), vocab_only=True, verbose=False),
                lambda ref, t: ref.tokenize(t.encode("utf-8"), add_bos=False, special=False),
                lambda: polytok.load(path), texts)


def bench_sentencepiece(name: str, texts: dict[str, str]) -> dict:
    """polytok vs sentencepiece on a .model: ``SentencePieceProcessor.encode(t)``."""
    import sentencepiece

    path = fixture_path(name, SPM_FILES[name])
    return _row(f"{name} (.model)", f"sentencepiece {sentencepiece.__version__}",
                lambda: sentencepiece.SentencePieceProcessor(model_file=str(path)),
                lambda ref, t: ref.encode(t), lambda: polytok.load(path), texts)


def bench_tiktoken(name: str, texts: dict[str, str]) -> dict:
    """polytok vs tiktoken on a rank file: ``Encoding.encode_ordinary(t)``.

    The reference's load is `load_tiktoken_bpe` plus building the `Encoding`
    with the pattern polytok recognises for the file (tiktoken_ext's own).
    """
    import tiktoken
    from tiktoken.load import load_tiktoken_bpe

    path = fixture_path(name, TIKTOKEN_FILES[name])
    pattern = polytok.load(path).metadata["pattern"]

    def ref_load():
        ranks = load_tiktoken_bpe(str(path))
        return tiktoken.Encoding(name, pat_str=pattern, mergeable_ranks=ranks, special_tokens={})

    return _row(f"{name} (.tiktoken)", f"tiktoken {tiktoken.__version__}", ref_load,
                lambda ref, t: ref.encode_ordinary(t), lambda: polytok.load(path), texts)


def bench_tekken(name: str, texts: dict[str, str]) -> dict:
    """polytok vs mistral-common's Tekkenizer: ``encode(t, bos=False, eos=False)``."""
    import mistral_common
    from mistral_common.tokens.tokenizers.tekken import Tekkenizer

    path = fixture_path(name, "tekken.json")
    return _row(f"{name} (tekken)", f"mistral-common {mistral_common.__version__}",
                lambda: Tekkenizer.from_file(str(path)), lambda ref, t: ref.encode(t, bos=False, eos=False),
                lambda: polytok.load(path), texts)


def table(rows: list[dict]) -> str:
    lines = ["| model | load polytok / reference (s) | corpus | cold MB/s polytok / reference (ratio) "
             "| warm MB/s polytok / reference (ratio) | ids |",
             "|---|---|---|---|---|---|"]
    for row in rows:
        load = {k.replace("tokenizers", "reference"): v for k, v in row["load_s"].items()}
        for corpus, c in row["corpora"].items():
            cold, warm = c["cold_mb_s"], c["warm_mb_s"]
            cold, warm = ({k.replace("tokenizers", "reference"): v for k, v in d.items()} for d in (cold, warm))
            lines.append(
                f"| {row['model']} | {load['polytok']:.2f} / {load['reference']:.2f} | {corpus} "
                f"| {cold['polytok']:.2f} / {cold['reference']:.2f} ({cold['polytok'] / cold['reference']:.2f}×) "
                f"| {warm['polytok']:.2f} / {warm['reference']:.2f} ({warm['polytok'] / warm['reference']:.2f}×) "
                f"| {'same' if c['same_ids'] else 'DIFFER'} |")
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="fewer models, 200 kB slices")
    ap.add_argument("--models", nargs="*", help="tokenizer.json fixture names")
    ap.add_argument("--gguf", nargs="*", help="ggml-vocab names (llama.cpp rows; needs llama-cpp-python)")
    ap.add_argument("--spm", nargs="*", help=".model fixture names (sentencepiece rows)")
    ap.add_argument("--tiktoken", nargs="*", help="rank-file fixture names (tiktoken rows)")
    ap.add_argument("--tekken", nargs="*", help="tekken fixture names (mistral-common rows)")
    args = ap.parse_args()
    try:
        import tokenizers
    except ImportError:
        print("bench: the reference engine is missing: pip install '.[bench]'", file=sys.stderr)
        return 2
    models = args.models if args.models is not None else (QUICK_MODELS if args.quick else MODELS)
    size = 200_000 if args.quick else 10**8
    texts = {c: bench_slice(c, size) for c in CORPORA}
    texts = {c: t for c, t in texts.items() if t}
    rows = []
    for name in models:
        print(f"… {name}", file=sys.stderr)
        rows.append(bench_model(name, texts))
    gguf = args.gguf if args.gguf is not None else (QUICK_GGUF if args.quick else GGUF_MODELS)
    if importlib.util.find_spec("llama_cpp") is None:
        print("bench: llama-cpp-python is not installed; GGUF rows skipped", file=sys.stderr)
        gguf = []
    for name in gguf:
        print(f"… {name}.gguf", file=sys.stderr)
        rows.append(bench_gguf(name, texts))
    for flag, full, quick, module, bench in (
            (args.spm, list(SPM_FILES), QUICK_SPM, "sentencepiece", bench_sentencepiece),
            (args.tiktoken, list(TIKTOKEN_FILES), QUICK_TIKTOKEN, "tiktoken", bench_tiktoken),
            (args.tekken, TEKKEN_MODELS, TEKKEN_MODELS, "mistral_common", bench_tekken)):
        names = flag if flag is not None else (quick if args.quick else full)
        try:
            __import__(module)
        except ImportError:
            print(f"bench: {module} is not installed; its rows are skipped", file=sys.stderr)
            continue
        for name in names:
            print(f"… {name}", file=sys.stderr)
            try:
                rows.append(bench(name, texts))
            except pytest.skip.Exception as exc:  # a shared-only fixture that is absent here
                print(f"bench: {name} skipped: {exc}", file=sys.stderr)
    print(f"polytok {polytok.__version__} vs tokenizers {tokenizers.__version__} (tokenizer.json rows), "
          f"llama.cpp through llama-cpp-python (.gguf rows), sentencepiece, tiktoken and mistral-common; Python {sys.version.split()[0]}")
    print(table(rows))
    out = ROOT / "bench" / "results"
    out.mkdir(parents=True, exist_ok=True)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    (out / f"{stamp}.json").write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
