"""llama_pre_types against llama.cpp's own source (llama-cpp-python 0.3.36, src/llama-vocab.cpp).

The expected table is parsed from that C++ source, read from the llama-cpp-python sdist by
tests/fixtures.py ``llama_cpp_source_path`` (a verified download into the fixture cache; skipped,
saying so, when PyPI cannot be reached): the regex lists of the ``llm_tokenizer_bpe`` constructor
and the name comparisons + flag assignments of the BPE branch of ``llama_vocab::impl::load``.
The fallback rules are from the same ``load``.
"""

from __future__ import annotations

import logging
import re

import pytest
from fixtures import llama_cpp_source_path

from polytok.errors import FormatError
from polytok.pre_tokenizers.llama_pre_types import PRE_TYPES, pre_type

_ESCAPES = {"\\": "\\", '"': '"', "r": "\r", "n": "\n", "t": "\t"}


def _unquote(literal: str) -> str:
    return re.sub(r"\\(.)", lambda m: _ESCAPES[m.group(1)], literal)


def _source() -> str:
    return llama_cpp_source_path("llama-vocab.cpp").read_text(encoding="utf-8")


def regex_lists(src: str) -> dict[str, tuple[list[str], bool]]:
    """Enum name (no prefix) -> (regexes, byte_encode) of the ``llm_tokenizer_bpe`` constructor."""
    start = src.index("struct llm_tokenizer_bpe : llm_tokenizer")
    body = src[start:src.index("std::vector<std::string> regex_exprs;", start)]
    lists = {}
    for block in re.split(r"\n\s*break;", body):
        labels = re.findall(r"case LLAMA_VOCAB_PRE_TYPE_(\w+):", block) + (["DEFAULT"] if "default:" in block else [])
        found = re.search(r"regex_exprs = \{(.*?)\n\s*\};", block, re.S)
        if not found:
            continue
        regexes = [_unquote(m.group(1)) for line in found.group(1).split("\n")
                   if (m := re.match(r'\s*"((?:[^"\\]|\\.)*)"', line))]
        for label in labels:
            lists[label] = (regexes, "byte_encode = false" not in block)
    return lists


def load_names(src: str) -> dict[str, tuple[str, dict[str, object]]]:
    """``tokenizer.ggml.pre`` name -> (enum name, flags ``impl::load`` sets for it)."""
    start = src.index('} else if (tokenizer_pre == "default")')
    chain = src[start:src.index("unknown pre-tokenizer type", start)]
    names = {}
    for branch in re.split(r"\}\s*else if\s*\(", chain)[1:]:
        enum = re.search(r"pre_type = LLAMA_VOCAB_PRE_TYPE_(\w+);", branch).group(1)
        flags: dict[str, object] = {}
        assignments = r"\b(ignore_merges|clean_spaces|add_bos|add_sep|escape_whitespaces) = (\w+);"
        for var, value in re.findall(assignments, branch):
            flags[var] = value == "true"
        if "special_bos_id = LLAMA_TOKEN_NULL" in branch:
            flags["bos_none"] = True
        if "normalizer_opts.lowercase = false" in branch:
            flags["lowercase"] = False
        for name in re.findall(r'tokenizer_pre == "([^"]+)"', branch):
            names[name] = (enum, flags)
    return names


def test_every_name_load_compares_is_in_the_table_with_its_enum_and_flags() -> None:
    names = load_names(_source())
    assert set(names) == set(PRE_TYPES)
    for name, (enum, flags) in names.items():
        entry = PRE_TYPES[name]
        assert entry.enum == "LLAMA_VOCAB_PRE_TYPE_" + enum, name
        expected = {"ignore_merges": False, "clean_spaces": True, "add_bos": None, "add_sep": None,
                    "escape_whitespaces": False, "bos_none": False, "lowercase": None, **flags}
        actual = {key: getattr(entry, key) for key in expected}
        assert actual == expected, name


def test_regex_lists_are_the_source_strings() -> None:
    lists = regex_lists(_source())
    for entry in PRE_TYPES.values():
        regexes, byte_encode = lists[entry.enum.removeprefix("LLAMA_VOCAB_PRE_TYPE_")]
        assert list(entry.regexes) == regexes, entry.name
        assert entry.byte_encode == byte_encode, entry.name


def test_known_names_and_aliases() -> None:
    assert pre_type("llama-bpe").enum == pre_type("llama3").enum == "LLAMA_VOCAB_PRE_TYPE_LLAMA3"
    assert pre_type("llama4").enum == "LLAMA_VOCAB_PRE_TYPE_GPT4O"
    assert pre_type("megrez").clean_spaces and not pre_type("qwen2").clean_spaces
    assert pre_type("gemma4").force_add_bos and pre_type("gemma4").clean_spaces


@pytest.mark.parametrize("name", [None, ""])
def test_missing_pre_is_default_with_a_warning(name: str | None, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING):
        entry = pre_type(name)
    assert entry.enum == "LLAMA_VOCAB_PRE_TYPE_DEFAULT"
    assert "missing pre-tokenizer type" in caplog.text


@pytest.mark.parametrize("name", ["Llama3", "llama-3", "unknown", " gpt-2"])
def test_unknown_pre_is_an_error_naming_the_key(name: str) -> None:
    with pytest.raises(FormatError, match="unknown pre-tokenizer type") as info:
        pre_type(name, key="the.pre.key")
    assert "the.pre.key" in str(info.value)
