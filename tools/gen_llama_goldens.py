"""Write llama.cpp's own outputs for every ggml-vocab-*.gguf of the llama-cpp-python sdist.

Run (needs ``pip install llama-cpp-python==0.3.36``, which compiles llama.cpp):

    python tools/gen_llama_goldens.py [--vocab-dir DIR] [NAME ...]

Writes ``tests/golden/gguf/<name>.jsonl.gz``. The first row records the engine,
its version, the vocabulary file's sha256 and what llama.cpp reports about the
vocabulary (type, special ids, add_bos/add_eos/add_sep, the EOG set, every token
attribute other than NORMAL). Each further row is one text in one mode:
``{"name", "text", "add_special", "parse_special", "ids"}``; the rows of the
mode (add_special=True, parse_special=True) also carry the bytes
``llama_detokenize`` returns for those ids with (remove_special,
unparse_special) = (False, True) as ``"detok_keep"`` and (True, False) as
``"detok_skip"`` (base64). Texts: ../shared/fixtures/texts/edge_cases.jsonl
and slices of the three throughput corpora. Each vocabulary is run in its own
process, so a llama.cpp abort loses one file, not the run.

The tests read these frozen files; they never need llama.cpp.
"""

from __future__ import annotations

import argparse
import base64
import gzip
import hashlib
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
from polytok.parity.engines import LlamaCppSide  # noqa: E402

OUT = ROOT / "tests" / "golden" / "gguf"
TEXTS = ROOT.parent / "shared" / "fixtures" / "texts"
MODES = [(True, False), (False, True), (True, True)]
SLICES = [("bench_en", 120_000), ("bench_code", 400_000), ("bench_multi", 300_000), ("bench_multi", 900_000)]
SLICE_CHARS = 3000

SYNTHETIC = OUT / "synthetic"
SYNTHETIC_TEXTS = ["plain text", "a<|im_end|>b", "x<turn|> y", "<s>Hello</s>", "x <u>  y", "XYZW", "aXYb", "<c> <c>",
                   "<|end|> <|return|> <|channel|>x <|call|>", "</s><|tool_response>", "a </s> b",
                   "a <|user|>  b <s> c </s>  d <unk> e <|endoftext|>  f", "x  <mask>  y <pad>",
                   "  <u><u>XY YZW  ", "a ' b 's 're 't 'll 'd 'm 've 'x", "Hello ? yes , no . ok ! end",
                   "x '  ' y ' 's", "' 's ' 're", " 's 'm ' ' '", "x  [MASK]  y <unused0> <unused1>z"]

NAMES = ["aquila", "baichuan", "bert-bge", "command-r", "deepseek-coder", "deepseek-llm", "falcon", "gemma-4",
         "gpt-2", "gpt-neox", "llama-bpe", "llama-spm", "mpt", "nomic-bert-moe", "phi-3", "qwen2", "qwen35",
         "refact", "starcoder"]


def texts() -> list[tuple[str, str]]:
    rows = []
    with open(TEXTS / "edge_cases.jsonl", encoding="utf-8") as f:
        for line in f:
            if line.strip():
                r = json.loads(line)
                rows.append((r["id"], r["text"]))
    for name, start in SLICES:
        with open(TEXTS / f"{name}.txt", encoding="utf-8", newline="") as f:
            body = f.read()
        rows.append((f"{name}@{start}", body[start:start + SLICE_CHARS]))
    return rows


class Vocab(LlamaCppSide):
    """A vocab-only llama.cpp model (polytok.parity's adapter), and what llama.cpp reports about it."""

    def __init__(self, path: Path) -> None:
        super().__init__(str(path), path.name)

    def facts(self) -> dict:
        L, v = self.L, self.vocab
        n = L.llama_vocab_n_tokens(v)
        attrs = {}
        eog = []
        for i in range(n):
            a = int(L.llama_vocab_get_attr(v, i))
            if a != 4:  # LLAMA_TOKEN_ATTR_NORMAL (1 << 2)
                attrs[str(i)] = a
            if L.llama_vocab_is_eog(v, i):
                eog.append(i)
        ids = {k: int(getattr(L, f"llama_vocab_{k}")(v)) for k in
               ("bos", "eos", "eot", "sep", "nl", "pad", "mask", "fim_pre", "fim_suf", "fim_mid", "fim_pad",
                "fim_rep", "fim_sep")}
        return {"vocab_type": int(L.llama_vocab_type(v)), "n_tokens": n, "special_ids": ids,
                "add_bos": bool(L.llama_vocab_get_add_bos(v)), "add_eos": bool(L.llama_vocab_get_add_eos(v)),
                "add_sep": bool(L.llama_vocab_get_add_sep(v)), "eog": eog, "attrs": attrs}


def mode_rows(vocab: Vocab, cases: list[tuple[str, str]]) -> list[dict]:
    """One row per text and mode: llama.cpp's ids, and in the last mode its detokenized bytes."""
    rows = []
    for text_name, text in cases:
        for add_special, parse_special in MODES:
            row = {"name": text_name, "text": text, "add_special": add_special, "parse_special": parse_special,
                   "ids": vocab.tokenize(text, add_special, parse_special)}
            if add_special and parse_special:
                row["detok_keep"] = base64.b64encode(vocab.decode_bytes(row["ids"], False, True)).decode()
                row["detok_skip"] = base64.b64encode(vocab.decode_bytes(row["ids"], True, False)).decode()
            rows.append(row)
    return rows


def generate_one(name: str, path: Path, synthetic: bool = False) -> None:
    import llama_cpp

    vocab = Vocab(path)
    header = {"engine": "llama-cpp-python", "version": llama_cpp.__version__, "file": path.name,
              "sha256": hashlib.sha256(path.read_bytes()).hexdigest(), **vocab.facts()}
    cases = [(f"synthetic-{i}", t) for i, t in enumerate(SYNTHETIC_TEXTS)] if synthetic else texts()
    rows = [header, *mode_rows(vocab, cases)]
    data = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows).encode("utf-8")
    if synthetic:
        (SYNTHETIC / f"{name}.jsonl").write_bytes(data)
        return
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / f"{name}.jsonl.gz").write_bytes(gzip.compress(data, mtime=0))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("names", nargs="*", default=NAMES)
    ap.add_argument("--vocab-dir", type=Path, help="folder holding ggml-vocab-*.gguf "
                    "(default: fetched from the llama-cpp-python sdist by tests/fixtures.py)")
    ap.add_argument("--synthetic", action="store_true", help="the small rule files of tools/make_synthetic_gguf.py")
    ap.add_argument("--one", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        if args.synthetic:
            generate_one(args.names[0], SYNTHETIC / f"{args.names[0]}.gguf", synthetic=True)
        else:
            generate_one(args.names[0], args.vocab_dir / f"ggml-vocab-{args.names[0]}.gguf")
        return 0
    if args.synthetic:
        names = [p.stem for p in sorted(SYNTHETIC.glob("*.gguf"))] if args.names == NAMES else args.names
        return _run_each(names, ["--synthetic"])
    vocab_dir = args.vocab_dir
    if vocab_dir is None:
        sys.path.insert(0, str(ROOT / "tests"))
        from fixtures import gguf_vocab_path

        vocab_dir = gguf_vocab_path(args.names[0]).parent
    return _run_each(args.names, ["--vocab-dir", str(vocab_dir)])


def _run_each(names: list[str], extra: list[str]) -> int:
    failed = []
    for name in names:
        done = subprocess.run([sys.executable, __file__, "--one", *extra, name])
        print(f"{name}: {'ok' if done.returncode == 0 else 'FAILED'}", file=sys.stderr)
        if done.returncode:
            failed.append(name)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
