"""Freeze gguf-py's reading of llama.cpp's vocab files into tests/formats/gguf_expected.json.

The default test run compares polytok's GGUF reader with this file, because
gguf-py's GGUFReader takes tens of seconds per vocabulary (the slow test compares
with it live).  Run: python tests/formats/gen_gguf_expected.py  (needs gguf==0.19.0
and the network, or the fixture cache, for the llama-cpp-python sdist).
"""

from __future__ import annotations

import hashlib
import json
import sys
from importlib.metadata import version
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

import fixtures  # noqa: E402

OUT = HERE / "gguf_expected.json"
HEAD, TAIL = 3, 2


def plain(value: Any) -> Any:
    """gguf-py's numpy scalars and lists as JSON-ready Python values."""
    if isinstance(value, list):
        return [plain(v) for v in value]
    if hasattr(value, "item"):
        return value.item()
    return value


def digest(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def type_name(field: Any) -> str:
    names = [t.name for t in field.types]
    return "".join(f"{n}[" for n in names[:-1]) + names[-1] + "]" * (len(names) - 1)


def summary(value: Any) -> Any:
    if not isinstance(value, list):
        return value
    return {"len": len(value), "head": value[:HEAD], "tail": value[-TAIL:], "sha256": digest(value)}


def read_one(name: str) -> dict[str, Any]:
    from gguf import GGUFReader

    path = fixtures.gguf_vocab_path(name)
    reader = GGUFReader(path)
    fields = list(reader.fields.values())
    header, kvs = fields[:3], fields[3:]
    last = fields[-1]
    row: dict[str, Any] = {
        "file": path.name,
        "sha256": fixtures.sha256_file(path),
        "version": plain(header[0].contents()),
        "tensor_count": plain(header[1].contents()),
        "kv_count": plain(header[2].contents()),
        "kv_end": last.offset + sum(int(p.nbytes) for p in last.parts),
        "alignment": int(reader.alignment),
        "types": {f.name: type_name(f) for f in kvs},
        "values": {f.name: summary(plain(f.contents())) for f in kvs},
    }
    return row


def main() -> None:
    rows = []
    for name in fixtures.GGUF_VOCAB_NAMES:
        print(name, flush=True)
        rows.append(read_one(name))
    source = fixtures.GGUF_VOCAB
    table = {
        "about": "gguf-py's GGUFReader on llama.cpp's models/ggml-vocab-*.gguf; arrays as len, head, tail and "
        "the sha256 of their compact JSON (ensure_ascii=False, separators=(',', ':')).",
        "engine": {"gguf": version("gguf"), "source": f"{source['package']}=={source['version']}"},
        "head": HEAD,
        "tail": TAIL,
        "files": rows,
    }
    OUT.write_text(json.dumps(table, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
