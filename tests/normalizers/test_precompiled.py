"""Precompiled normalizer vs tokenizers.normalizers.Precompiled on real SentencePiece charsmaps."""

from __future__ import annotations

import base64
import json
import struct

import fixtures
import pytest

from polytok.errors import EncodeError, FormatError
from polytok.normalizers import Precompiled, from_config

from ._harness import aligned, check, edge_texts, random_texts, reference_tokenizer, spm_charsmap

tokenizers = pytest.importorskip("tokenizers")

SPM_MODELS = ["spm-botchan-bpe-1000", "spm-botchan-unigram-1000", "spm-kyoto-ja-unigram-8000", "spm-bpemb-en-100k"]

TARGETED = [
    "\x01abc", "a\x01bc", "\x01\x02ab\x03", "x\r\ny\r", "Ａ\u0301", "e\u0301\u0301", "ﬁ ① ㍿ ℌ",
    "\u1100\u1161\u11a8 각 ᄀ", "👨\u200d👩\u200d👧 🇫🇷🇩", "क्षि ந்தி", "a\u0301\u0302\u0303",
    "Ｈｅｌｌｏ\u3000ｗｏｒｌｄ", "“quote” — ‘x’", "Hello World!", "\u00a0\u2002x\u200by\ufeff", "",
]
POOL = "aAeÉ\u0301\u0302Ａｂ①ﬁ\x01\x1f\r\n\t \u3000ᄀ\u1161\u11a8각👨\u200d🇫🇷क्\u093f“”"


def _marian() -> bytes:
    with open(fixtures.fixture_path("marian-nmt", "tokenizer.json"), encoding="utf-8") as f:
        spec = json.load(f)["normalizer"]["normalizers"][0]
    return base64.b64decode(spec["precompiled_charsmap"])


def _charsmap(name: str) -> bytes:
    if name == "marian-nmt":
        return _marian()
    return spm_charsmap(fixtures.fixture_path(name, "spm.model"))


@pytest.mark.parametrize("name", ["marian-nmt", *SPM_MODELS])
def test_texts_and_offsets(name):
    blob = _charsmap(name)
    check(tokenizers.normalizers.Precompiled(blob), Precompiled(blob),
          TARGETED + edge_texts() + random_texts(POOL, 400, seed=3))


@pytest.mark.parametrize("name", ["marian-nmt", "spm-botchan-bpe-1000"])
def test_long_texts(name):
    blob = _charsmap(name)
    ref, ours = tokenizers.normalizers.Precompiled(blob), Precompiled(blob)
    for corpus in ("en", "multi"):
        text = fixtures.bench_slice(corpus, 50_000)
        assert ours.normalize(text) == ref.normalize_str(text)


def test_deletion_at_piece_start_shifts_offsets():
    blob = _charsmap("spm-botchan-bpe-1000")  # nmt_nfkc: C0 controls -> ""
    ours, ref = Precompiled(blob), reference_tokenizer(tokenizers.normalizers.Precompiled(blob))
    for text, offsets in [("\x01abc", [(0, 1), (1, 2), (2, 3)]), ("a\x01bc", [(0, 1), (2, 3), (3, 4)])]:
        assert aligned(ours, text) == ("abc", ref.encode(text, add_special_tokens=False).offsets) == ("abc", offsets)


def test_whole_cluster_takes_the_shortest_prefix_rule():
    blob = _charsmap("spm-botchan-bpe-1000")
    ours, ref = Precompiled(blob), tokenizers.normalizers.Precompiled(blob)
    assert ours.normalize("Ａ\u0301") == ref.normalize_str("Ａ\u0301") == "A"  # the mark is dropped with the cluster
    assert ours.normalize("x\r\n") == ref.normalize_str("x\r\n") == "x "  # CR LF is one cluster, replaced by CR's rule


def _blob(units: list[int], pool: bytes) -> bytes:
    return struct.pack(f"<I{len(units)}I", 4 * len(units), *units) + pool


def test_from_config_errors():
    def load(value):
        return from_config({"type": "Precompiled", "precompiled_charsmap": value})

    for bad in ["", "!!!", base64.b64encode(struct.pack("<I", 8) + b"1234").decode(),
                base64.b64encode(_blob([0], b"\xff\0")).decode()]:
        with pytest.raises(FormatError, match=r"normalizer\.precompiled_charsmap"):
            load(bad)
    with pytest.raises(FormatError, match="precompiled_charsmap"):
        from_config({"type": "Precompiled"})
    unpadded = base64.b64encode(_blob([0], b"ab\0")).decode().rstrip("=")
    assert isinstance(load(unpadded), Precompiled)  # HF accepts missing padding


def test_malformed_trie_raises_where_hf_panics():
    ours = Precompiled(_blob([], b""))
    assert ours.normalize("") == ""
    with pytest.raises(EncodeError):
        ours.normalize("abc")
