"""Goldens for folders whose pre-tokenizer hash llama.cpp's converter does not know.

Each folder is a shared fixture with one edit (`EDITS`: a token appended, a special
token renamed, two ids swapped); every edit changes the ids of llama.cpp's hash text,
so ``convert_hf_to_gguf.py`` refuses the folder ("unknown pre-tokenizer hash") and
polytok's converter must name the pre type from the pre-tokenizer's structure
(`polytok.convert.pre_structure`). For each folder this script

1. builds it (`build`), converts it with `polytok.convert.converter.to_gguf` and
   checks the hash is unknown and the pre type was decided by structure;
2. loads the GGUF in llama.cpp (llama-cpp-python, in a child process) and records its ids
   for the shared edge texts, the long-text slices and `EXTRA_TEXTS` in three modes (and
   the detokenized bytes in the last), as tools/gen_llama_goldens.py does;
3. runs HF ``tokenizers`` on the folder and reports, per mode with parse_special, the
   texts where llama.cpp's ids differ from HF's (none expected but where the check's named
   differences say so: `polytok.convert.check`);
4. writes ``tests/golden/convert/edited/<name>.jsonl.gz``: a header (engine and version,
   the edit, the input files' sha256, the pre decision, the per-key metadata digests,
   the HF differences) and one row per text and mode.

No tokenizer file is written to the repository (GitHub-origin fixtures).
Run: ``python tools/gen_pre_structure_goldens.py [NAME ...]`` (needs llama-cpp-python).
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
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "tests" / "golden" / "convert" / "edited"
SHARED = ROOT.parent / "shared" / "fixtures" / "tokenizers"
# texts that hold the edited tokens
EXTRA_TEXTS = ["🦙🦙 and 🦙", "🦙🦙🦙 x🦙🦙y", "🚀 launch 🚀🚀", "normal multiple", "a normal, multiple-choice test"]


def _append_added(content: str, *, special: bool) -> Callable[[dict[str, Any], dict[str, Any]], str]:
    def edit(tj: dict[str, Any], config: dict[str, Any]) -> str:
        ids = list(tj["model"]["vocab"].values()) + [a["id"] for a in tj.get("added_tokens", [])]
        tj.setdefault("added_tokens", []).append({
            "id": max(ids) + 1, "content": content, "single_word": False, "lstrip": False, "rstrip": False,
            "normalized": not special, "special": special})
        return f"added token {content!r} appended at id {max(ids) + 1} (special={special})"
    return edit


def _rename_special(old: str, new: str) -> Callable[[dict[str, Any], dict[str, Any]], str]:
    def edit(tj: dict[str, Any], config: dict[str, Any]) -> str:
        entry = next(a for a in tj["added_tokens"] if a["content"] == old)
        entry["content"] = new
        decoder = config.get("added_tokens_decoder") or {}
        if str(entry["id"]) in decoder:
            decoder[str(entry["id"])]["content"] = new
        return f"special token {old!r} (id {entry['id']}) renamed {new!r}"
    return edit


def _swap(a: str, b: str) -> Callable[[dict[str, Any], dict[str, Any]], str]:
    def edit(tj: dict[str, Any], config: dict[str, Any]) -> str:
        vocab = tj["model"]["vocab"]
        vocab[a], vocab[b] = vocab[b], vocab[a]
        return f"the ids of {a!r} and {b!r} swapped"
    return edit


# name -> (shared fixture, config.json architecture, the edit)
EDITS: dict[str, tuple[str, str, Callable[[dict[str, Any], dict[str, Any]], str]]] = {
    "gpt2-added": ("gpt2", "GPT2LMHeadModel", _append_added("🦙", special=False)),
    "gpt2-renumbered": ("gpt2", "GPT2LMHeadModel", _swap("normal", "multiple")),
    "llama3-renamed": ("llama3", "LlamaForCausalLM", _rename_special("<|reserved_special_token_0|>", "🚀")),
    "qwen3-added": ("qwen3", "Qwen3ForCausalLM", _append_added("🦙🦙", special=False)),
    "olmo-added": ("olmo-dolma2", "GPT2LMHeadModel", _append_added("🦙", special=False)),
}


def build(name: str, source: Callable[[str, str], Path], files: list[str], work: Path) -> tuple[Path, str]:
    """The edited folder `name` under `work`, from the base fixture's `files` (``source(fixture, file)``,
    a path that may be the file gzip-compressed, ``NAME.gz``).

    Returns the folder and the edit's description.
    """
    fixture, arch, edit = EDITS[name]
    folder = work / name
    folder.mkdir(parents=True)
    for file in files:
        path = source(fixture, file)
        data = path.read_bytes()
        (folder / file).write_bytes(gzip.decompress(data) if path.name.endswith(".gz") else data)
    tj = json.loads((folder / "tokenizer.json").read_text(encoding="utf-8"))
    config_path = folder / "tokenizer_config.json"
    config = json.loads(config_path.read_text(encoding="utf-8")) if config_path.exists() else {}
    what = edit(tj, config)
    (folder / "tokenizer.json").write_text(json.dumps(tj, ensure_ascii=False), encoding="utf-8")
    if config_path.exists():
        config_path.write_text(json.dumps(config, ensure_ascii=False), encoding="utf-8")
    ids = list(tj["model"]["vocab"].values()) + [a["id"] for a in tj.get("added_tokens", [])]
    (folder / "config.json").write_text(json.dumps({"architectures": [arch], "vocab_size": max(ids) + 1}),
                                        encoding="utf-8")
    return folder, what


def base_files(fixture: str) -> list[str]:
    """The files of a shared fixture, named without a ``.gz`` suffix."""
    return sorted(p.name.removesuffix(".gz") for p in (SHARED / fixture).iterdir() if p.is_file())


def shared_file(fixture: str, file: str) -> Path:
    path = SHARED / fixture / file
    return path if path.exists() else path.with_name(file + ".gz")


def _llama_child(gguf_path: Path, out_json: Path) -> None:
    sys.path.insert(0, str(ROOT / "tools"))
    from gen_llama_goldens import Vocab, mode_rows, texts

    vocab = Vocab(gguf_path)
    rows = mode_rows(vocab, texts() + [(f"edited-{i}", t) for i, t in enumerate(EXTRA_TEXTS)])
    out_json.write_text(json.dumps({"facts": vocab.facts(), "rows": rows}, ensure_ascii=False), encoding="utf-8")


def generate(name: str, work: Path) -> int:
    import llama_cpp
    from tokenizers import Tokenizer

    from polytok.convert.converter import metadata_digests, to_gguf
    from polytok.convert.gguf_vocab import pre_name

    fixture = EDITS[name][0]
    files = base_files(fixture)
    folder, what = build(name, shared_file, files, work)
    report = to_gguf(folder, work / f"{name}.gguf")
    decision = report.pre_decision
    assert decision is not None and report.chkhsh is not None
    if pre_name(report.chkhsh) is not None or decision.how != "structure":
        print(f"{name}: the hash is known or the pre was not decided by structure: {decision}", file=sys.stderr)
        return 1
    out_json = work / f"{name}.json"
    subprocess.run([sys.executable, __file__, "--llama", str(work / f"{name}.gguf"), str(out_json)], check=True)
    got = json.loads(out_json.read_text(encoding="utf-8"))
    hf = Tokenizer.from_file(str(folder / "tokenizer.json"))
    hf.no_truncation()
    differing = [f"{r['name']} add_special={r['add_special']}" for r in got["rows"] if r["parse_special"]
                 and hf.encode(r["text"], add_special_tokens=r["add_special"]).ids != r["ids"]]
    shas = {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir())
            if p.is_file() and p.suffix != ".gguf"}
    header = {"engine": "llama-cpp-python", "version": llama_cpp.__version__, "folder": name,
              "fixture": fixture, "fixture_files": files, "edit": what, "inputs": shas,
              "pre": report.pre, "pre_decided_by": decision.how, "chkhsh": report.chkhsh,
              "digests": metadata_digests(work / f"{name}.gguf"), "facts": got["facts"],
              "llama_cpp_differs_from_hf": differing}
    OUT.mkdir(parents=True, exist_ok=True)
    data = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in [header] + got["rows"]).encode("utf-8")
    (OUT / f"{name}.jsonl.gz").write_bytes(gzip.compress(data, mtime=0))
    print(f"{name}: {what}; pre {report.pre} ({decision.line()}); {len(got['rows'])} rows; llama.cpp differs "
          f"from HF tokenizers on {len(differing)}: {differing[:6]}", file=sys.stderr)
    return 0


def main() -> int:
    sys.path.insert(0, str(ROOT / "src"))
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("names", nargs="*", default=list(EDITS))
    ap.add_argument("--llama", nargs=2, type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.llama:
        _llama_child(*args.llama)
        return 0
    work = Path(tempfile.mkdtemp(prefix="polytok-pre-structure-"))
    try:
        return max(generate(name, work) for name in args.names)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
