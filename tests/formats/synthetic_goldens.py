"""Reading tests/golden/gguf/to_hf_synthetic (tools/gen_gguf_to_hf_synthetic.py: llama.cpp's outputs)."""

from __future__ import annotations

import base64
import gzip
import hashlib
import json
from pathlib import Path

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "gguf" / "to_hf_synthetic"


def llama_cpp_outputs(name: str, gguf_path: Path) -> tuple[dict[str, list[int]], dict[tuple[int, ...], bytes]]:
    """llama.cpp's ids by text and decoded bytes by id list, for the GGUF the test built as the
    generator did (the sha256 must be the generator's)."""
    with gzip.open(GOLDEN / f"{name}.jsonl.gz", "rt", encoding="utf-8") as f:
        rows = [json.loads(line) for line in f]
    assert hashlib.sha256(gguf_path.read_bytes()).hexdigest() == rows[0]["sha256"], "not the file of the goldens"
    ids = {r["text"]: r["ids"] for r in rows[1:] if "text" in r}
    decoded = {tuple(r["decode"]): base64.b64decode(r["bytes"]) for r in rows[1:] if "decode" in r}
    return ids, decoded
