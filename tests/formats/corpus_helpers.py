"""Shared pieces of the corpus tests: a synthetic corpus with bad records, a shard reader, folder digests.

The corpus is built from the shared edge texts (tests/edge_texts.json, so it
needs no ../shared/fixtures) with a document number appended, so no two
documents are equal; bad records sit at known lines. The shard reader is
written from the format's description (flat little-endian ids, uint64 offsets),
not with polytok's code.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

import fixtures

# line (1-based) -> the raw line written there instead of a document, and the reason's start
BAD_LINES = {
    7: ("{not json\n", "not JSON"),
    40: ('{"body": "no text field"}\n', "no field 'text'"),
    41: ('{"text": 12}\n', "field 'text' is a number"),
    300: ('["text", "an array"]\n', "a JSON list, not an object"),
    1234: ('{"text": null}\n', "field 'text' is null"),
    2500: (b'{"text": "caf\xe9 latin-1"}\n'.decode("latin-1"), "not UTF-8"),
}
SURROGATE_LINE = 999  # a JSON escape for a lone surrogate: the tokenizers refuse it


def documents(n: int) -> list[str]:
    """`n` different documents cut from the edge texts (newlines, specials, scripts, emoji...)."""
    edges = [t for t in fixtures.edge_texts() if len(t) < 5000 and not _has_surrogate(t)]
    return [f"{edges[i % len(edges)]} [{i}] {edges[(7 * i + 3) % len(edges)][:200]}" for i in range(n)]


def _has_surrogate(text: str) -> bool:
    return any(0xD800 <= ord(c) <= 0xDFFF for c in text)


def write_jsonl(path: Path, n_docs: int) -> list[tuple[int, str | None]]:
    """Write the corpus; returns (line, document or None for a bad record) for every line, in order."""
    rows: list[tuple[int, str | None]] = []
    docs = iter(documents(n_docs))
    with open(path, "wb") as f:
        line = 0
        for doc in docs:
            line += 1
            while line in BAD_LINES or line == SURROGATE_LINE:
                raw = BAD_LINES[line][0] if line in BAD_LINES else '{"text": "x \\ud800 y"}\n'
                f.write(raw.encode("latin-1") if line == 2500 else raw.encode("utf-8"))
                rows.append((line, None))
                line += 1
            f.write((json.dumps({"id": line, "text": doc}) + "\n").encode("utf-8"))
            rows.append((line, doc))
    return rows


def read_bin_shards(out: Path) -> list[list[int]]:
    """Every document's ids, in order, read from the .bin/.idx files the manifest lists."""
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    width = 2 if manifest["settings"]["dtype"] == "uint16" else 4
    docs: list[list[int]] = []
    for shard in manifest["shards"]:
        data = (out / shard["files"]["bin"]["name"]).read_bytes()
        index = (out / shard["files"]["idx"]["name"]).read_bytes()
        ids = [int.from_bytes(data[i:i + width], "little") for i in range(0, len(data), width)]
        offsets = [int.from_bytes(index[i:i + 8], "little") for i in range(0, len(index), 8)]
        docs.extend(ids[a:b] for a, b in zip(offsets, offsets[1:]))
    return docs


def folder_digest(out: Path) -> dict[str, str]:
    """sha256 of every file in the folder, by name."""
    return {name: hashlib.sha256((out / name).read_bytes()).hexdigest() for name in sorted(os.listdir(out))}


def manifest(out: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    return data
