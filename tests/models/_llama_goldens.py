"""Rows of llama.cpp's frozen outputs (tests/golden/gguf/<name>.jsonl.gz, recorded from
llama-cpp-python 0.3.36 by tools/gen_llama_goldens.py) that reach a model as one raw fragment.

A row qualifies when it was tokenized with add_special false and its text holds no
CONTROL, USER_DEFINED or UNKNOWN token text: llama.cpp's special-token partition
then leaves the whole text as one fragment, so its ids are the model's alone
(plus the vocabulary type's whitespace handling, which each test applies).
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

from fixtures import gguf_vocab_path
from polytok.formats.gguf_keys import Tokenizer as Keys
from polytok.formats.gguf_reader import read_gguf_metadata

GOLDEN = Path(__file__).resolve().parent.parent / "golden" / "gguf"
SPECIAL_TYPES = {2, 3, 4}  # unknown, control, user_defined


def vocabulary(name: str) -> dict[str, Any]:
    """The tokenizer KVs of ggml-vocab-<name>.gguf."""
    return read_gguf_metadata(gguf_vocab_path(name)).kv


def plain_rows(name: str, kv: dict[str, Any]) -> list[tuple[str, list[int]]]:
    """``(text, ids)`` of the qualifying rows (see the module docstring)."""
    specials = [text for text, kind in zip(kv[Keys.LIST], kv[Keys.TOKEN_TYPE]) if kind in SPECIAL_TYPES and text]
    rows = []
    with gzip.open(GOLDEN / f"{name}.jsonl.gz", "rt", encoding="utf-8") as lines:
        for line in lines:
            row = json.loads(line)
            if row.get("add_special") is False and row.get("parse_special") is True and "text" in row:
                if not any(special in row["text"] for special in specials):
                    rows.append((row["text"], row["ids"]))
    return rows
