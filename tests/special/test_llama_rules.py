"""llama.cpp's special-token rules on small synthetic vocabularies, against llama.cpp's own output.

The vocabularies (tools/make_synthetic_gguf.py) hold the 256 byte-level characters
as ids 0-255 and no merges, so any free text tokenizes to its UTF-8 bytes and the
ids show exactly how the special-token partition cut the text. Expected values
are llama.cpp's (tests/golden/gguf/synthetic/*.jsonl, written by
tools/gen_llama_goldens.py --synthetic with llama-cpp-python).
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from polytok.formats.gguf_token_attrs import ATTR_NORMAL, llama_specials

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "tests" / "golden" / "gguf" / "synthetic"


def _maker():
    spec = importlib.util.spec_from_file_location("make_synthetic_gguf", ROOT / "tools" / "make_synthetic_gguf.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


MAKER = _maker()
NAMES = sorted(MAKER.RULES)


def _golden(name):
    path = GOLDEN / f"{name}.jsonl"
    if not path.exists():
        pytest.skip(f"{path.name} not generated (python tools/gen_llama_goldens.py --synthetic)")
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    return rows[0], rows[1:]


def _specials(name):
    general_name, pre, entries = MAKER.RULES[name]
    chars = MAKER.byte_chars()
    texts = chars + [t for t, _ in entries] + [chars[0] + chars[1]]
    types = [1] * 256 + [k for _, k in entries] + [1]
    ids = {"bos": texts.index("<s>") if "<s>" in texts else 0, "eos": texts.index("</s>") if "</s>" in texts else 1}
    return texts, llama_specials(texts, types, ids, pre=pre, architecture="llama", name=general_name)


def _ids(texts, specials, text, parse_special):
    out = []
    for start, end, id_ in specials.partition(texts).split(text, parse_special):
        out.extend([id_] if id_ is not None else list(text[start:end].encode("utf-8")))
    return out


@pytest.mark.parametrize("name", NAMES)
def test_attributes_and_eog_equal_llama_cpp(name):
    header, _ = _golden(name)
    texts, specials = _specials(name)
    got = {str(i): a for i, a in enumerate(specials.attrs) if a != ATTR_NORMAL}
    assert got == header["attrs"]
    assert sorted(specials.eog) == header["eog"]


@pytest.mark.parametrize("name", NAMES)
def test_partition_equals_llama_cpp(name):
    header, rows = _golden(name)
    texts, specials = _specials(name)
    assert not header["add_bos"] and not header["add_eos"]  # so add_special adds nothing here
    for row in rows:
        assert _ids(texts, specials, row["text"], row["parse_special"]) == row["ids"], row
