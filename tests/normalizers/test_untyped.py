"""Old files may leave out a normalizer's "type"; HF recognises it by its fields."""

from __future__ import annotations

import json

import pytest

import polytok
from polytok.normalizers import from_config

tokenizers = pytest.importorskip("tokenizers")

MODEL = {"type": "WordLevel", "vocab": {"[UNK]": 0}, "unk_token": "[UNK]"}


@pytest.mark.parametrize("d,text", [
    ({"strip_left": True, "strip_right": False}, "  ab  "),
    ({"prepend": "▁"}, "ab"),
    ({"clean_text": True, "handle_chinese_chars": True, "strip_accents": None, "lowercase": True}, "ÀB 中\x00"),
    ({"normalizers": [{"prepend": "x"}, {"type": "Lowercase"}]}, "AB"),
])
def test_untyped_normalizers_are_recognised_by_their_fields(d, text):
    ref = tokenizers.Tokenizer.from_str(json.dumps({"model": MODEL, "normalizer": d}))
    assert from_config(d).normalize(text) == ref.normalizer.normalize_str(text)


def test_unrecognisable_untyped_normalizer_names_its_path():
    with pytest.raises(polytok.FormatError) as info:
        from_config({"whatever": 1}, "normalizer.normalizers[3]")
    assert info.value.key == "normalizer.normalizers[3]"
