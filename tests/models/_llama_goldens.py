"""llama.cpp's frozen outputs for the model tests.

Rows of tests/golden/gguf/<name>.jsonl.gz (recorded from llama-cpp-python 0.3.36 by
tools/gen_llama_goldens.py) that reach a model as one raw fragment: a row qualifies
when it was tokenized with add_special false and its text holds no CONTROL,
USER_DEFINED or UNKNOWN token text. llama.cpp's special-token partition then leaves
the whole text as one fragment, so its ids are the model's alone (plus the
vocabulary type's whitespace handling, which each test applies).

And the ids of the small synthetic vocabularies of tests/models/test_<name>.py
(tests/golden/gguf/models/<name>.json, recorded by tools/gen_llama_model_goldens.py,
which writes each vocabulary as a GGUF with `write_gguf` and runs llama.cpp on it).
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
SYNTHETIC = GOLDEN / "models"
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
            if (row.get("add_special") is False and row.get("parse_special") is True and "text" in row
                    and not any(special in row["text"] for special in specials)):
                rows.append((row["text"], row["ids"]))
    return rows


def synthetic_ids(name: str) -> dict[str, dict[str, list[int]]]:
    """{variant label: {text: llama.cpp's ids}} of tests/golden/gguf/models/<name>.json.

    Empty when the file is absent (tools/gen_llama_model_goldens.py imports the test
    modules before it writes them); a test then fails on the first text it looks up.
    """
    path = SYNTHETIC / f"{name}.json"
    if not path.is_file():
        return {}
    golden = json.loads(path.read_text(encoding="utf-8"))
    return {variant["label"]: {text: ids for text, ids in variant["rows"]} for variant in golden["variants"]}


def write_gguf(path: Path, arch: str, model: str, tokens: list[str], types: list[int], *,
               scores: list[float] | None = None, unk_id: int | None = None, ids: dict[str, int] | None = None,
               flags: dict[str, bool] | None = None, charsmap: bytes | None = None) -> Path:
    """A vocabulary-only GGUF written with gguf-py, the format's official writer.

    `ids` maps special-id keys and `flags` tokenizer keys (gguf_keys.Tokenizer names)
    to their uint32 and boolean values.
    """
    import gguf

    writer = gguf.GGUFWriter(str(path), arch)
    writer.add_tokenizer_model(model)
    writer.add_token_list(tokens)
    if scores is not None:
        writer.add_token_scores(scores)
    writer.add_token_types(types)
    if unk_id is not None:
        writer.add_unk_token_id(unk_id)
    for key, number in (ids or {}).items():
        writer.add_uint32(key, number)
    for key, value in (flags or {}).items():
        writer.add_bool(key, value)
    if charsmap is not None:
        writer.add_precompiled_charsmap(charsmap)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.close()
    return path
