"""GGUF key names: equal to gguf-py 0.19.0's Keys.Tokenizer / Keys.General, and written nowhere else."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from polytok.formats import gguf_keys
from polytok.formats.gguf_keys import General, Tokenizer, chat_template_key, vocab_size_key

SRC = Path(gguf_keys.__file__).resolve().parents[1]
KEY_LITERAL = re.compile(r"tokenizer\.ggml\.[a-z_.]+")


def _constants(cls: type) -> dict[str, str]:
    return {name: value for name, value in vars(cls).items() if name.isupper() and isinstance(value, str)}


def test_tokenizer_keys_equal_gguf_py() -> None:
    gguf = pytest.importorskip("gguf")
    theirs = _constants(gguf.constants.Keys.Tokenizer)
    ours = _constants(Tokenizer)
    theirs.pop("CHAT_TEMPLATE_N")  # a format string; ours is chat_template_key(name)
    # gguf-py 0.19.0 lacks three keys llama-arch.cpp has (LLM_KV_TOKENIZER_CLS_ID, ..._NORMALIZER_*,
    # ..._SUPPRESS_TOKENS); the rest must agree name for name.
    assert {k: v for k, v in ours.items() if k in theirs} == theirs
    assert sorted(set(ours) - set(theirs)) == [
        "CLS_ID", "NORMALIZER_LOWERCASE", "NORMALIZER_STRIP_ACCENTS", "SUPPRESS_TOKENS",
    ]  # fmt: skip
    assert chat_template_key("tool_use") == gguf.constants.Keys.Tokenizer.CHAT_TEMPLATE_N.format(name="tool_use")


def test_general_keys_equal_gguf_py() -> None:
    gguf = pytest.importorskip("gguf")
    theirs = _constants(gguf.constants.Keys.General)
    assert all(theirs[name] == value for name, value in _constants(General).items())


def test_spelling_and_helpers() -> None:
    assert Tokenizer.SEP_ID == "tokenizer.ggml.seperator_token_id"
    assert chat_template_key() == "tokenizer.chat_template"
    assert vocab_size_key("llama") == "llama.vocab_size"
    assert Tokenizer.SPECIAL_ID_KEYS[0] == Tokenizer.BOS_ID and Tokenizer.SPECIAL_ID_KEYS[-1] == Tokenizer.MIDDLE_ID
    assert len(set(Tokenizer.SPECIAL_ID_KEYS)) == 17


def test_no_other_module_writes_a_tokenizer_ggml_key() -> None:
    offenders = []
    for path in sorted(SRC.rglob("*.py")):
        if path.name == "gguf_keys.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and KEY_LITERAL.fullmatch(node.value):
                offenders.append(f"{path.relative_to(SRC)}:{node.lineno}: {node.value}")
    assert offenders == []
