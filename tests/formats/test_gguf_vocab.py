"""GGUF vocabularies as llama.cpp loads them, and llama.cpp's detokenizer, against llama.cpp's own output.

Expected values are tests/golden/gguf/<name>.jsonl.gz, written by
tools/gen_llama_goldens.py with llama-cpp-python 0.3.36 (its header records the
version and the vocabulary file's sha256). The vocabulary files are fetched from
the llama-cpp-python 0.3.36 sdist on PyPI by version and sha256.
"""

from __future__ import annotations

import base64
import functools
import gzip
import hashlib
import json
from pathlib import Path

import pytest
from fixtures import gguf_vocab_path

from polytok.formats.gguf import read_gguf_vocab

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "gguf"
NAMES = sorted(p.name.removesuffix(".jsonl.gz") for p in GOLDEN.glob("*.jsonl.gz"))
CATEGORIES = ("bos", "eos", "eot", "sep", "pad", "mask", "fim_pre", "fim_suf", "fim_mid", "fim_pad", "fim_rep",
              "fim_sep")


@functools.lru_cache(maxsize=1)
def _load(name):
    with gzip.open(GOLDEN / f"{name}.jsonl.gz", "rt", encoding="utf-8") as lines:
        rows = [json.loads(line) for line in lines]
    path = gguf_vocab_path(name)
    assert hashlib.sha256(path.read_bytes()).hexdigest() == rows[0]["sha256"], "golden made from another file"
    return rows[0], rows[1:], read_gguf_vocab(path)


@pytest.mark.parametrize("name", NAMES)
def test_flags_special_ids_attributes_and_eog(name):
    header, _, vocab = _load(name)
    assert len(vocab.texts) == header["n_tokens"]
    for flag in ("add_bos", "add_eos", "add_sep"):
        assert vocab.flags[flag] == header[flag], flag
    for category in CATEGORIES:
        expected = header["special_ids"][category]
        assert vocab.specials.ids.get(category) == (expected if expected >= 0 else None), category
    got = {str(i): a for i, a in enumerate(vocab.specials.attrs) if a != 4}
    assert got == header["attrs"]
    assert sorted(vocab.specials.eog) == header["eog"]


@pytest.mark.parametrize("name", NAMES)
def test_detokenize_equals_llama_cpp(name):
    _, rows, vocab = _load(name)
    detok = vocab.detokenizer()
    checked = 0
    for row in rows:
        for key, (remove_special, unparse_special) in (("detok_keep", (False, True)), ("detok_skip", (True, False))):
            if key in row:
                expected = base64.b64decode(row[key])
                assert detok.detokenize(row["ids"], remove_special, unparse_special) == expected, (row["name"], key)
                checked += 1
    assert checked > 400
