"""llama.cpp's detokenizer on the synthetic vocabularies (clean_spaces passes, hidden control tokens,
USER_DEFINED always shown), against llama.cpp's own bytes (tests/golden/gguf/synthetic/*.jsonl)."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest

from polytok.formats.gguf import read_gguf_vocab

SYNTHETIC = Path(__file__).resolve().parents[1] / "golden" / "gguf" / "synthetic"
NAMES = sorted(p.stem for p in SYNTHETIC.glob("*.gguf"))


@pytest.mark.parametrize("name", NAMES)
def test_detokenize_synthetic(name):
    rows = [json.loads(line) for line in (SYNTHETIC / f"{name}.jsonl").read_text(encoding="utf-8").splitlines()]
    detok = read_gguf_vocab(SYNTHETIC / f"{name}.gguf").detokenizer()
    checked = 0
    for row in rows[1:]:
        for key, (remove_special, unparse_special) in (("detok_keep", (False, True)), ("detok_skip", (True, False))):
            if key in row:
                got = detok.detokenize(row["ids"], remove_special, unparse_special)
                assert got == base64.b64decode(row[key]), (row["text"], key)
                checked += 1
    assert checked >= 30
