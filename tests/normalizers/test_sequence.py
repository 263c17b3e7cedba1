"""Sequence normalizer, and whole normalizer configs of real tokenizer.json files, vs tokenizers."""

from __future__ import annotations

import json

import fixtures
import pytest

from polytok.errors import FormatError
from polytok.normalizers import NFKC, Lowercase, Sequence, from_config

from ._harness import check, edge_texts

tokenizers = pytest.importorskip("tokenizers")

# fixtures whose tokenizer.json has a normalizer (BertNormalizer, Precompiled+Strip+Replace,
# Prepend+Replace, NFC+Replace+Lowercase, NFKD+StripAccents+..., NFKC, Replace+Replace)
FILES = ["bert-base-uncased", "labse-cropped", "marian-nmt", "llama2", "phi-3-mini", "clip",
         "albert-base-v2-tf5", "claude", "chatglm3"]


@pytest.mark.parametrize("name", FILES)
def test_real_file_normalizers(name):
    path = fixtures.fixture_path(name, fixtures.HF_JSON_FIXTURES.get(name, "tokenizer.json"))
    with open(path, encoding="utf-8") as f:
        spec = json.load(f)["normalizer"]
    reference = tokenizers.Tokenizer.from_file(str(path)).normalizer
    check(reference, from_config(spec), ["", " Hello  world ", "x\u0301Σ ﬁ"] + edge_texts())


@pytest.mark.parametrize("order", [0, 1])
def test_order_matters(order):
    hf = tokenizers.normalizers
    steps = [hf.NFKC(), hf.Lowercase()][::1 if order else -1]
    ref = hf.Sequence(steps)
    check(ref, from_config(json.loads(ref.__getstate__())), ["ℌ", "ＡＢ", "ΟΔΟΣ", "ﬁ"] + edge_texts())
    ours = Sequence([NFKC(), Lowercase()][::1 if order else -1])
    assert ours.normalize("ℌ") == ("h" if order else "H")  # lowercase(ℌ) is ℌ; NFKC(ℌ) is H


def test_from_config_errors_name_the_key():
    with pytest.raises(FormatError, match=r"normalizer\.normalizers\[1\]\.type"):
        from_config({"type": "Sequence", "normalizers": [{"type": "NFC"}, {"type": "Nope"}]})
    with pytest.raises(FormatError,
                       match=r"normalizer\.normalizers\[0\]\.normalizers\[0\]: missing required key 'strip_right'"):
        from_config({"type": "Sequence", "normalizers": [
            {"type": "Sequence", "normalizers": [{"type": "Strip", "strip_left": True}]}]})
    with pytest.raises(FormatError, match="normalizers"):
        from_config({"type": "Sequence"})
    with pytest.raises(FormatError, match=r"normalizer\.normalizers"):
        from_config({"type": "Sequence", "normalizers": None})
    assert from_config({"type": "Sequence", "normalizers": []}).normalize("Ab") == "Ab"
