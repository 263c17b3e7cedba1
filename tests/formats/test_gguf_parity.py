"""polytok.load(FILE.gguf) against llama.cpp on the 19 vocabularies of the llama-cpp-python sdist.

Expected ids and bytes are llama.cpp's (tests/golden/gguf/<name>.jsonl.gz, written by
tools/gen_llama_goldens.py with llama-cpp-python 0.3.36): every edge text and four
3 kB slices of the bench texts, in the modes (add_special, parse_special) =
(True, False), (False, True), (True, True); decode with skip_special False and True
against llama_detokenize with (remove_special, unparse_special) = (False, True) and
(True, False).
"""

from __future__ import annotations

import base64
import gzip
import json
from pathlib import Path

import pytest
from fixtures import gguf_vocab_path
from parity.diff_report import ids_mismatch

import polytok

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "gguf"
NAMES = sorted(p.name.removesuffix(".jsonl.gz") for p in GOLDEN.glob("*.jsonl.gz"))


@pytest.mark.parametrize("name", NAMES)
def test_ids_and_detokenize_equal_llama_cpp(name):
    with gzip.open(GOLDEN / f"{name}.jsonl.gz", "rt", encoding="utf-8") as lines:
        rows = [json.loads(line) for line in lines][1:]
    path = gguf_vocab_path(name)
    tok = polytok.load(path)
    reports = []
    for row in rows:
        mode = "parse" if row["parse_special"] else "text"
        got = tok.encode(row["text"], add_special=row["add_special"], special=mode)
        report = ids_mismatch(str(path), row["text"], f"add_special={row['add_special']} special={mode}",
                              row["ids"], got, tok.id_to_token)
        if report:
            reports.append(report)
        for key, skip in (("detok_keep", False), ("detok_skip", True)):
            if key in row:
                expected = base64.b64decode(row[key]).decode("utf-8", "replace")
                if tok.decode(row["ids"], skip_special=skip) != expected:
                    reports.append(f"{path} decode(skip_special={skip}) of {row['name']} differs")
    assert not reports, f"{len(reports)} mismatches; first ones:\n" + "\n\n".join(reports[:5])


@pytest.mark.parametrize("name", NAMES)
def test_special_ids_and_eog_set_on_the_tokenizer(name):
    with gzip.open(GOLDEN / f"{name}.jsonl.gz", "rt", encoding="utf-8") as lines:
        header = json.loads(lines.readline())
    tok = polytok.load(gguf_vocab_path(name))
    assert sorted(tok.eog_ids) == header["eog"]
    for key, value in header["special_ids"].items():
        assert tok.special_ids.get(key) == (value if value >= 0 else None), key
