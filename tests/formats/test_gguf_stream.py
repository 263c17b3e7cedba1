"""decode_stream() on GGUF vocabularies: the chunks, then flush(), give exactly llama_detokenize's text.

Expected text is llama.cpp's (the detokenized bytes in tests/golden/gguf/<name>.jsonl.gz,
from llama-cpp-python 0.3.36), for every id list of all 19 vocabularies: no chunk ever
holds a space that clean_spaces later removes, a broken character, or loses a space.
"""

from __future__ import annotations

import base64
import gzip
import json
from pathlib import Path

import pytest
from fixtures import gguf_vocab_path

import polytok

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "gguf"
NAMES = sorted(p.name.removesuffix(".jsonl.gz") for p in GOLDEN.glob("*.jsonl.gz"))


@pytest.mark.parametrize("name", NAMES)
def test_stream_equals_llama_detokenize(name):
    with gzip.open(GOLDEN / f"{name}.jsonl.gz", "rt", encoding="utf-8") as lines:
        rows = [json.loads(line) for line in lines][1:]
    tok = polytok.load(gguf_vocab_path(name))
    for row in rows:
        for key, skip in (("detok_keep", False), ("detok_skip", True)):
            if key not in row:
                continue
            expected = base64.b64decode(row[key]).decode("utf-8", "replace")
            stream = tok.decode_stream(skip_special=skip)
            chunks = [stream.step(i) for i in row["ids"]]
            assert "".join(chunks) + stream.flush() == expected, (row["name"], key)
            assert all("\ufffd" not in c for c in chunks) or "\ufffd" in expected
