"""Training time of polytok's trainers side by side with the reference trainers, as ratios.

    python bench/train_bench.py                  # every case, 1 MB of each corpus, 3 rounds
    python bench/train_bench.py --quick          # 200 kB of bench_en, 1 round
    python bench/train_bench.py --cases gpt2-bpe --chars 2000000 --hf-threads 1

One case per trainer and pipeline: HF tokenizers' BpeTrainer on a byte-level (gpt2's
pipeline) and a Metaspace pipeline, its WordPieceTrainer on BERT's pre-tokenizer, its UnigramTrainer on
a Metaspace pipeline (compared by pieces: HF sums floats in hash order), and
sentencepiece's spm_train (BPE, unigram) when polytok's SentencePiece trainer is present.
Each engine trains from the corpus's lines, counting included, in a fresh process
(``--worker``), the rounds interleaved; the best round counts. The table gives seconds
as polytok / reference and their ratio (above 1.0: polytok is faster), and whether the
two vocabularies are the same (merges too, for BPE). HF trains on every core unless
``--hf-threads`` says otherwise (RAYON_NUM_THREADS); polytok's trainers use one.
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
TEXTS = ROOT.parent / "shared" / "fixtures" / "texts"
GPT2 = ROOT.parent / "shared" / "fixtures" / "tokenizers" / "gpt2" / "tokenizer.json"
CASES = {
    "gpt2-bpe": 8000,  # train_new on gpt2's pipeline
    "metaspace-bpe": 8000,
    "bert-wordpiece": 8000,
    "metaspace-unigram": 8000,
    "spm-bpe": 4000,
    "spm-unigram": 4000,
}
CORPORA = ["bench_en", "bench_code", "bench_multi"]


def corpus_lines(corpus: str, chars: int) -> list[str]:
    with open(TEXTS / f"{corpus}.txt", encoding="utf-8", newline="") as f:
        return [line for line in f.read(chars).splitlines() if line]


def metaspace_json() -> dict[str, Any]:
    meta = {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "always", "split": True}
    return {"version": "1.0", "added_tokens": [], "normalizer": None, "pre_tokenizer": meta, "post_processor": None,
            "decoder": meta, "model": {"type": "BPE", "vocab": {}, "merges": []}}


def unigram_json() -> dict[str, Any]:
    data = metaspace_json()
    data["model"] = {"type": "Unigram", "unk_id": None, "vocab": []}
    return data


def bert_json() -> dict[str, Any]:
    return {"version": "1.0", "added_tokens": [], "normalizer": None, "pre_tokenizer": {"type": "BertPreTokenizer"},
            "post_processor": None, "decoder": None,
            "model": {"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##",
                      "max_input_chars_per_word": 100, "vocab": {}}}


def run_polytok(case: str, lines: list[str], size: int) -> tuple[float, Any]:
    import polytok
    from polytok.train.bpe_trainer import BpeTrainer
    from polytok.train.wordpiece_trainer import WordPieceTrainer

    start = time.perf_counter()
    if case == "gpt2-bpe":
        data = polytok.load(str(GPT2)).train_new(lines, size).data  # type: ignore[attr-defined]
    elif case == "metaspace-bpe":
        data = polytok.train(lines, metaspace_json(), BpeTrainer(vocab_size=size)).data  # type: ignore[attr-defined]
    elif case == "metaspace-unigram":
        from polytok.train.unigram_trainer import UnigramTrainer

        data = polytok.train(lines, unigram_json(), UnigramTrainer(vocab_size=size, unk_token="<unk>")).data  # type: ignore[attr-defined]
    elif case == "bert-wordpiece":
        data = polytok.train(lines, bert_json(), WordPieceTrainer(vocab_size=size,  # type: ignore[attr-defined]
                                                                  special_tokens=["[UNK]"])).data
    else:
        from polytok.train.sentencepiece_trainer import train_sentencepiece

        model = train_sentencepiece(lines, model_type=case.removeprefix("spm-"), vocab_size=size, num_threads=1)
        return time.perf_counter() - start, _spm_pieces(model)
    return time.perf_counter() - start, data["model"]


def run_reference(case: str, lines: list[str], size: int) -> tuple[float, Any]:
    if case.startswith("spm-"):
        import io

        import sentencepiece as spm

        out = io.BytesIO()
        start = time.perf_counter()
        spm.SentencePieceTrainer.train(sentence_iterator=iter(lines), model_writer=out, vocab_size=size,
                                       model_type=case.removeprefix("spm-"), num_threads=1, minloglevel=2)
        return time.perf_counter() - start, _spm_pieces(out.getvalue())
    import tokenizers
    from tokenizers import trainers

    start = time.perf_counter()
    if case == "gpt2-bpe":
        tok = tokenizers.Tokenizer.from_file(str(GPT2))
        data = json.loads(tok.to_str())
        data["model"]["vocab"], data["model"]["merges"], data["added_tokens"] = {}, [], []
        tok = tokenizers.Tokenizer.from_str(json.dumps(data))
        trainer = trainers.BpeTrainer(vocab_size=size, special_tokens=["<|endoftext|>"], show_progress=False,
                                      initial_alphabet=tokenizers.pre_tokenizers.ByteLevel.alphabet())
    elif case == "metaspace-bpe":
        tok = tokenizers.Tokenizer.from_str(json.dumps(metaspace_json()))
        trainer = trainers.BpeTrainer(vocab_size=size, show_progress=False)
    elif case == "metaspace-unigram":
        tok = tokenizers.Tokenizer.from_str(json.dumps(unigram_json()))
        trainer = trainers.UnigramTrainer(vocab_size=size, unk_token="<unk>", show_progress=False)
    else:
        tok = tokenizers.Tokenizer.from_str(json.dumps(bert_json()))
        trainer = trainers.WordPieceTrainer(vocab_size=size, special_tokens=["[UNK]"], show_progress=False)
    tok.train_from_iterator(lines, trainer)
    return time.perf_counter() - start, json.loads(tok.to_str())["model"]


def _spm_pieces(model: bytes) -> list[str]:
    import sentencepiece as spm

    sp = spm.SentencePieceProcessor(model_proto=model)
    return [sp.id_to_piece(i) for i in range(sp.get_piece_size())]


def worker(engine: str, case: str, corpus: str, chars: int) -> None:
    lines = corpus_lines(corpus, chars)
    seconds, result = (run_polytok if engine == "polytok" else run_reference)(case, lines, CASES[case])
    if isinstance(result, dict) and case.endswith("unigram"):  # the set of pieces: HF's float sums, and with
        result = sorted(piece for piece, _ in result["vocab"])  # them equal scores' order, follow hash order
    elif isinstance(result, dict):  # the trained part of the model: its other options come from the pipeline
        result = {"vocab": result["vocab"], "merges": result.get("merges")}
    digest = json.dumps(result, ensure_ascii=False)
    print(json.dumps({"seconds": seconds, "result": digest}))


def measure(engine: str, case: str, corpus: str, chars: int, hf_threads: int | None) -> dict[str, Any]:
    env = dict(os.environ)
    if hf_threads is not None:
        env["RAYON_NUM_THREADS"] = str(hf_threads)
    done = subprocess.run([sys.executable, __file__, "--worker", engine, case, corpus, str(chars)],
                          capture_output=True, text=True, env=env, timeout=3600)
    if done.returncode:
        return {"skipped": (done.stderr.strip().splitlines() or ["?"])[-1]}
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def _difference(results: dict[str, str]) -> str:
    """How two different results differ: only in ids (a hash-order choice of HF's) or in pieces."""
    mine, theirs = (json.loads(results[e]) for e in ("polytok", "reference"))
    if isinstance(mine, dict) and sorted(mine["vocab"]) == sorted(theirs["vocab"]):
        return "same pieces, other ids"
    return "differs"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--worker", nargs=4, metavar=("ENGINE", "CASE", "CORPUS", "CHARS"), help=argparse.SUPPRESS)
    parser.add_argument("--cases", nargs="+", default=list(CASES), choices=list(CASES))
    parser.add_argument("--corpora", nargs="+", default=CORPORA, choices=CORPORA)
    parser.add_argument("--chars", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--hf-threads", type=int, default=None)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    if args.worker:
        engine, case, corpus, chars = args.worker
        worker(engine, case, corpus, int(chars))
        return
    if args.quick:
        args.corpora, args.chars, args.rounds = ["bench_en"], 200_000, 1
    compileall.compile_dir(str(ROOT / "src" / "polytok"), quiet=1)
    print("| case | vocab | corpus | seconds polytok / reference | same |")
    print("|---|---|---|---|---|")
    for case in args.cases:
        for corpus in args.corpora:
            best: dict[str, float] = {}
            results: dict[str, str] = {}
            skipped = ""
            for _ in range(args.rounds):
                for engine in ("polytok", "reference"):
                    got = measure(engine, case, corpus, args.chars, args.hf_threads)
                    if "skipped" in got:
                        skipped = f"{engine}: {got['skipped']}"
                        continue
                    best[engine] = min(best.get(engine, float("inf")), got["seconds"])
                    results[engine] = got["result"]
            if len(best) < 2:
                print(f"| {case} | {CASES[case]} | {corpus} | skipped ({skipped}) | |")
                continue
            ratio = best["reference"] / best["polytok"]
            same = "same" if results["polytok"] == results["reference"] else _difference(results)
            print(f"| {case} | {CASES[case]} | {corpus} | {best['polytok']:.2f} / {best['reference']:.2f} "
                  f"({ratio:.2f}×) | {same} |", flush=True)


if __name__ == "__main__":
    main()
