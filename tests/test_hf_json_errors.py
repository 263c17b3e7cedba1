"""A bad tokenizer.json raises polytok.FormatError naming the file and the key path, line or offset."""

from __future__ import annotations

import json

import pytest

import polytok

BPE = {"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2}, "merges": ["a b"]}


def _write(tmp_path, data, name="tokenizer.json"):
    path = tmp_path / name
    path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    return path


@pytest.mark.parametrize("data,key", [
    ({"model": BPE, "pre_tokenizer": {"type": "Sequence", "pretokenizers": [{"type": "Whitespace"}, {"type": "Nope"}]}},
     "pre_tokenizer.pretokenizers[1].type"),
    ({"model": BPE, "normalizer": {"type": "Sequence", "normalizers": [{"type": "NFKC"}, {"type": "Replace"}]}},
     "normalizer.normalizers[1]"),
    ({"model": {"type": "BPE", "vocab": {"a": 0}, "merges": ["a b"]}}, "model.merges[0]"),
    ({"model": BPE, "added_tokens": [{"id": 3, "content": "x"}]}, "added_tokens[0]"),
    ({"model": BPE, "version": "2.0"}, "version"),
    ({"pre_tokenizer": None}, "model"),
    ({"model": BPE, "decoder": {"type": "Strip", "content": "ab", "start": 1, "stop": 0}}, "decoder.content"),
    ({"model": BPE, "truncation": {"max_length": "ten"}}, "truncation.max_length"),
])
def test_errors_name_the_key_path(tmp_path, data, key):
    path = _write(tmp_path, data)
    with pytest.raises(polytok.FormatError) as info:
        polytok.load(path)
    assert info.value.key is not None and info.value.key.startswith(key), info.value
    assert info.value.file == str(path)
    assert str(path) in str(info.value)


def test_invalid_json_names_line_and_offset(tmp_path):
    path = _write(tmp_path, '{"model": {"type": "BPE",\n  "vocab": {"a": 0,}}}')
    with pytest.raises(polytok.FormatError) as info:
        polytok.load(path)
    assert info.value.line == 2 and info.value.offset is not None


def test_not_utf8_and_missing_paths(tmp_path):
    path = tmp_path / "tokenizer.json"
    path.write_bytes(b'{"model": "\xff"}')
    with pytest.raises(polytok.FormatError, match="UTF-8"):
        polytok.load(path)
    with pytest.raises(polytok.FormatError, match="no such file"):
        polytok.load(tmp_path / "missing.json")
    (tmp_path / "empty").mkdir()
    with pytest.raises(polytok.FormatError, match="no tokenizer file"):
        polytok.load(tmp_path / "empty")


def test_missing_unk_raises_a_clear_error_at_encode_time(tmp_path):
    tokenizers = pytest.importorskip("tokenizers")
    data = {"model": {"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##",
                      "max_input_chars_per_word": 100, "vocab": {"a": 0}},
            "pre_tokenizer": {"type": "WhitespaceSplit"}}
    path = _write(tmp_path, data)
    ref = tokenizers.Tokenizer.from_file(str(path))
    with pytest.raises(Exception):  # noqa: B017 - tokenizers raises a plain Exception
        ref.encode("a b")
    tok = polytok.load(path)
    assert tok.encode("a a") == ref.encode("a a").ids
    with pytest.raises(polytok.EncodeError, match=r"\[UNK\]"):
        tok.encode("a b")
