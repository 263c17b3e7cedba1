"""Write llama.cpp's ids for the small synthetic vocabularies of the model tests.

llama.cpp only tokenizes whole GGUF files, and ships no file for several of its
models (RWKV, PLaMo-2) or for the option combinations the tests pin. Each of
tests/models/test_<module>.py defines a vocabulary, its ``TEXTS``, its
``VARIANTS`` (labels of option combinations) and ``write_gguf(path, variant)``,
which writes that vocabulary as a GGUF with gguf-py. This script writes each
variant into a temporary folder, loads it with
``llama_cpp.Llama(model_path, vocab_only=True)`` and records
``tokenize(text.encode(), add_bos=False, special=False)`` for every text.

Run (needs ``pip install llama-cpp-python==0.3.36``, which compiles llama.cpp,
and ``gguf``, the format's official writer):

    python tools/gen_llama_model_goldens.py [NAME ...]

Writes ``tests/golden/gguf/models/<name>.json``: the engine and its version, the
gguf-py version, the call, and per variant its label, the sha256 of the GGUF it
tokenized and ``[text, ids]`` rows in the order of ``TEXTS``. The tests read these
frozen files; they never need llama.cpp.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib
import importlib.metadata
import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "tests" / "golden" / "gguf" / "models"
CALL = "llama_cpp.Llama(model_path, vocab_only=True).tokenize(text.encode(), add_bos=False, special=False)"
# golden name -> test module (under tests/) holding TEXTS, VARIANTS and write_gguf
MODULES = {"spm": "models.test_spm", "plamo2": "models.test_plamo2", "rwkv": "models.test_rwkv",
           "unigram": "models.test_unigram_llama_cpp", "wordpiece": "models.test_wordpiece_llama_cpp"}


def record(name: str, folder: Path) -> dict:
    import llama_cpp

    module = importlib.import_module(MODULES[name])
    variants = []
    for label in module.VARIANTS:
        path = Path(module.write_gguf(folder / f"{name}-{len(variants)}.gguf", label))
        model = llama_cpp.Llama(model_path=str(path), vocab_only=True, verbose=False)
        rows = [[text, model.tokenize(text.encode("utf-8"), add_bos=False, special=False)] for text in module.TEXTS]
        model.close()
        variants.append({"label": label, "gguf_sha256": hashlib.sha256(path.read_bytes()).hexdigest(), "rows": rows})
    return {"engine": "llama-cpp-python", "version": llama_cpp.__version__,
            "gguf_writer": f"gguf {importlib.metadata.version('gguf')}", "call": CALL,
            "written_by": f"tools/gen_llama_model_goldens.py from tests/{MODULES[name].replace('.', '/')}.py",
            "variants": variants}


def dump(golden: dict) -> str:
    """JSON with one row a line, so a changed id shows as a one-line diff."""
    head = {k: v for k, v in golden.items() if k != "variants"}
    lines = [json.dumps(head, ensure_ascii=False)[:-1] + ', "variants": [']
    for n, variant in enumerate(golden["variants"]):
        label, sha = json.dumps(variant["label"]), variant["gguf_sha256"]
        lines.append(f' {{"label": {label}, "gguf_sha256": "{sha}", "rows": [')
        rows = variant["rows"]
        lines += [f"  {json.dumps(row, ensure_ascii=False)}" + ("," if i < len(rows) - 1 else "") for i, row in
                  enumerate(rows)]
        lines.append(" ]}" + ("," if n < len(golden["variants"]) - 1 else ""))
    return "\n".join(lines) + "\n]}\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("names", nargs="*", help=f"goldens to write, of {', '.join(MODULES)} (default: all)")
    args = ap.parse_args()
    unknown = [name for name in args.names if name not in MODULES]
    if unknown:
        ap.error(f"unknown golden {unknown[0]!r} (known: {', '.join(MODULES)})")
    sys.path[:0] = [str(ROOT / "src"), str(ROOT / "tests")]
    OUT.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.names or MODULES:
            golden = record(name, Path(tmp))
            text = dump(golden)
            assert json.loads(text) == golden
            (OUT / f"{name}.json").write_text(text, encoding="utf-8")
            print(f"{name}: {sum(len(v['rows']) for v in golden['variants'])} rows", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
