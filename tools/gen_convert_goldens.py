"""Goldens for ``polytok convert``: llama.cpp's own converter against polytok's, read by llama.cpp.

For each model folder (built from the fixtures plus a minimal ``config.json``
naming the architecture, or one of tests/data/convert/), this script

1. runs llama.cpp's ``convert_hf_to_gguf.py --vocab-only`` (llama-cpp-python
   0.3.36 sdist; needs torch: ``python -m venv --system-site-packages /tmp/convvenv
   && /tmp/convvenv/bin/pip install torch==2.13.0 protobuf``, passed as
   ``--converter-python``) and polytok's `polytok.convert.converter.to_gguf` on the folder;
2. loads both GGUFs in llama.cpp (llama-cpp-python, system python) and records
   the ids of every shared edge text and four 3,000-character slices of the
   long texts in three modes (add_special, parse_special) = (T,F) (F,T) (T,T),
   with the detokenized bytes in the last mode (as tools/gen_llama_goldens.py);
   it FAILS when llama.cpp's results for the two files differ in anything;
3. writes ``tests/golden/convert/<name>.jsonl.gz``: a header with the versions,
   the input files' sha256, the per-key digests of the tokenizer metadata the
   converter wrote (`polytok.convert.converter.metadata_digests`) and the converter's
   redefinition warnings; then one row per text and mode.

polytok's converter compared with llama.cpp's is run with ``like_converter=True``. By
default polytok writes some folders otherwise (the scores of a Llama tokenizer.json from
its merge ranks, an exact structural pre type over the hash's), so that llama.cpp
tokenizes them as HF does; ``--default NAME ...`` writes, for each such folder,
``tests/golden/convert/default/<name>.jsonl.gz``: the same header for polytok's default
GGUF (its digests) and llama.cpp's rows on it (no converter or torch needed).

No GGUF or vocabulary is written to the repository (GitHub-origin fixtures).
Run: ``python tools/gen_convert_goldens.py [--converter-python PY] [NAME ...]``.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "tools"))
OUT = ROOT / "tests" / "golden" / "convert"
SHARED = ROOT.parent / "shared" / "fixtures" / "tokenizers"
SYNTHETIC = ROOT / "tests" / "data" / "convert"
LLAMA_CPP = Path("/tmp/ref/llama_cpp_python-0.3.36/vendor/llama.cpp")
HPARAMS = {"num_hidden_layers": 1, "hidden_size": 64, "num_attention_heads": 1, "num_key_value_heads": 1,
           "intermediate_size": 128, "max_position_embeddings": 512, "rms_norm_eps": 1e-5,
           "n_ctx": 512, "n_embd": 64, "n_head": 1, "n_layer": 1, "layer_norm_epsilon": 1e-5, "layer_norm_eps": 1e-12}
# texts about redefined tokens, added to the shared edge and long texts
EXTRA_TEXTS = ["<|im_start|>", "<|im_end|>", "弘给", "<|im_start|>user\n弘扬 给你<|im_end|>\n",
               "[UNUSED_TOKEN_141]<|plugin|> [UNUSED_TOKEN_146]<|im_start|>", "<tool\u2581call> <tool call> 你",
               "<unk><s></s> x"]
# name -> (source: a shared fixture folder or a synthetic one, config.json architecture or None to keep)
FOLDERS = {
    "llama3": ("shared", "LlamaForCausalLM"), "gpt2": ("shared", "GPT2LMHeadModel"),
    "qwen3": ("shared", "Qwen3ForCausalLM"), "llama2": ("shared", "LlamaForCausalLM"),
    "bert-base-uncased": ("shared", "BertModel"),
    # Phi3ForCausalLM's converter needs a tokenizer.model, which this fixture lacks: Llama's path
    "phi-3-mini": ("shared", "LlamaForCausalLM"),
    "mistral-v3-hf-converted": ("shared", "MistralForCausalLM"),
    "arctic": ("synthetic", None), "internlm2": ("synthetic", None), "llama-redefined": ("synthetic", None),
}


def build_folder(name: str, work: Path) -> tuple[Path, dict[str, str]]:
    """The model folder for `name` under `work`, and the sha256 of each input file."""
    source, arch = FOLDERS[name]
    folder = work / name
    folder.mkdir(parents=True)
    shas = {}
    src = SHARED / name if source == "shared" else SYNTHETIC / name
    for f in sorted(src.iterdir()):
        data = f.read_bytes()
        target = f.name
        if f.suffix == ".gz":
            data, target = gzip.decompress(data), f.name[:-3]
        (folder / target).write_bytes(data)
        shas[target] = hashlib.sha256(data).hexdigest()
    if arch is not None:
        tj = json.loads((folder / "tokenizer.json").read_text(encoding="utf-8"))
        vocab = tj["model"]["vocab"]
        ids = list(vocab.values()) if isinstance(vocab, dict) else list(range(len(vocab)))
        ids += [a["id"] for a in tj.get("added_tokens", [])]
        config = {"architectures": [arch], "vocab_size": max(ids) + 1, **HPARAMS}
        (folder / "config.json").write_text(json.dumps(config, indent=1), encoding="utf-8")
    shas["config.json"] = hashlib.sha256((folder / "config.json").read_bytes()).hexdigest()
    return folder, shas


def run_converter(python: str, folder: Path, out: Path) -> list[str]:
    """llama.cpp's converter; returns its warning lines."""
    done = subprocess.run([python, str(LLAMA_CPP / "convert_hf_to_gguf.py"), "--vocab-only", "--outfile", str(out),
                           str(folder)], capture_output=True, text=True)
    if done.returncode:
        raise SystemExit(f"convert_hf_to_gguf.py failed on {folder}:\n{done.stderr[-3000:]}")
    return [ln for ln in done.stderr.splitlines() if ln.startswith("WARNING:hf-to-gguf:")
            and "model config" not in ln and "config.json instead" not in ln]


def llama_outputs(gguf_path: Path, out_json: Path) -> None:
    """In a subprocess: llama.cpp's ids and detokenized bytes for every text and mode."""
    subprocess.run([sys.executable, __file__, "--llama", str(gguf_path), str(out_json)], check=True)


def _llama_child(gguf_path: Path, out_json: Path) -> None:
    from gen_llama_goldens import Vocab, mode_rows, texts

    vocab = Vocab(gguf_path)
    rows = mode_rows(vocab, texts() + [(f"redefinition-{i}", t) for i, t in enumerate(EXTRA_TEXTS)])
    out_json.write_text(json.dumps({"facts": vocab.facts(), "rows": rows}, ensure_ascii=False), encoding="utf-8")


def generate(name: str, python: str, work: Path) -> int:
    import llama_cpp

    from polytok.convert.converter import metadata_digests, to_gguf

    folder, shas = build_folder(name, work)
    theirs, ours = work / f"{name}.llama.gguf", work / f"{name}.polytok.gguf"
    warnings = run_converter(python, folder, theirs)
    report = to_gguf(folder, ours, like_converter=True)
    llama_outputs(theirs, work / f"{name}.llama.json")
    llama_outputs(ours, work / f"{name}.polytok.json")
    a = json.loads((work / f"{name}.llama.json").read_text(encoding="utf-8"))
    b = json.loads((work / f"{name}.polytok.json").read_text(encoding="utf-8"))
    bad = [r["name"] for r, s in zip(a["rows"], b["rows"]) if r != s]
    if a["facts"] != b["facts"]:
        bad.append("facts")
    digests = metadata_digests(theirs)
    mine = metadata_digests(ours)
    differing = sorted(k for k in set(digests) | set(mine) if digests.get(k) != mine.get(k))
    header = {"engine": "llama-cpp-python", "version": llama_cpp.__version__,
              "converter": "llama-cpp-python 0.3.36 sdist vendor/llama.cpp/convert_hf_to_gguf.py --vocab-only",
              "folder": name, "inputs": shas, "config_json": (folder / "config.json").read_text(encoding="utf-8"),
              "converter_warnings": warnings, "digests": digests,
              "facts": a["facts"], "polytok_redefinitions": [r.__dict__ for r in report.redefinitions]}
    OUT.mkdir(parents=True, exist_ok=True)
    lines = [header] + a["rows"]
    data = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in lines).encode("utf-8")
    (OUT / f"{name}.jsonl.gz").write_bytes(gzip.compress(data, mtime=0))
    n = len(a["rows"])
    print(f"{name}: {n} text x mode rows; llama.cpp(polytok GGUF) != llama.cpp(converter GGUF) on "
          f"{len(bad)}: {bad[:5]}; metadata keys differing: {differing}", file=sys.stderr)
    return 1 if bad or differing else 0


def generate_default(name: str, work: Path) -> int:
    """llama.cpp's rows on polytok's default GGUF of `name` (module notes)."""
    import llama_cpp

    from polytok.convert.converter import metadata_digests, to_gguf

    folder, shas = build_folder(name, work)
    ours = work / f"{name}.default.gguf"
    report = to_gguf(folder, ours)
    llama_outputs(ours, work / f"{name}.default.json")
    got = json.loads((work / f"{name}.default.json").read_text(encoding="utf-8"))
    header = {"engine": "llama-cpp-python", "version": llama_cpp.__version__,
              "converter": "polytok.convert.converter.to_gguf (default: like_converter=False)",
              "folder": name, "inputs": shas, "config_json": (folder / "config.json").read_text(encoding="utf-8"),
              "digests": metadata_digests(ours), "facts": got["facts"],
              "polytok_redefinitions": [r.__dict__ for r in report.redefinitions]}
    out = OUT / "default"
    out.mkdir(parents=True, exist_ok=True)
    data = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in [header] + got["rows"]).encode("utf-8")
    (out / f"{name}.jsonl.gz").write_bytes(gzip.compress(data, mtime=0))
    print(f"{name}: {len(got['rows'])} rows of llama.cpp on polytok's default GGUF", file=sys.stderr)
    return 0


def main() -> int:
    global LLAMA_CPP
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("names", nargs="*", default=list(FOLDERS))
    ap.add_argument("--converter-python", default="/tmp/convvenv/bin/python",
                    help="a python with torch (and protobuf) installed, for convert_hf_to_gguf.py")
    ap.add_argument("--llama-cpp", type=Path, default=LLAMA_CPP,
                    help="the llama.cpp tree of the llama-cpp-python 0.3.36 sdist (vendor/llama.cpp)")
    ap.add_argument("--default", action="store_true",
                    help="llama.cpp's rows on polytok's default GGUF of each NAME (tests/golden/convert/default/)")
    ap.add_argument("--llama", nargs=2, type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.llama:
        _llama_child(*args.llama)
        return 0
    LLAMA_CPP = args.llama_cpp
    work = Path(tempfile.mkdtemp(prefix="polytok-convert-"))
    try:
        if args.default:
            return max(generate_default(name, work) for name in args.names)
        return max(generate(name, args.converter_python, work) for name in args.names)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
