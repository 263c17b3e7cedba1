"""The built-in GPT-2 tokenizer (src/polytok/data/gpt2.json.gz) against HF tokenizers.

Always: the file loads in tokenizers 0.23.3, has GPT-2's pipeline fields, and
round-trips text and ids.  With ../shared/fixtures present: it equals the real GPT-2
tokenizer.json field for field (except truncation, see tools/make_builtin_gpt2.py),
gives the same ids on every edge text and a 200 kB slice of bench_en.txt, and
tools/make_builtin_gpt2.py rebuilds it byte for byte from the shared vocab.json and
merges.txt (the same pieces as the PyPI package's files).
"""

from __future__ import annotations

import functools
import gzip
import hashlib
import importlib.util
import json
from pathlib import Path
from types import ModuleType
from typing import Any

import fixtures
import pytest

tokenizers = pytest.importorskip("tokenizers")

DATA_DIR = fixtures.REPO_ROOT / "src" / "polytok" / "data"
BUILTIN = DATA_DIR / "gpt2.json.gz"
BENCH_CHARS = 200_000


@functools.cache
def _raw_json() -> bytes:
    return gzip.decompress(BUILTIN.read_bytes())


def _doc() -> dict[str, Any]:
    return json.loads(_raw_json())


@functools.cache
def _builtin() -> Any:
    return tokenizers.Tokenizer.from_str(_raw_json().decode("utf-8"))


def _reference() -> Any:
    ref = tokenizers.Tokenizer.from_file(str(fixtures.fixture_path("gpt2", "tokenizer.json")))
    ref.no_truncation()
    return ref


def _generator() -> ModuleType:
    path = fixtures.REPO_ROOT / "tools" / "make_builtin_gpt2.py"
    spec = importlib.util.spec_from_file_location("make_builtin_gpt2", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_pipeline_fields_are_gpt2s() -> None:
    doc = _doc()
    byte_level = {"type": "ByteLevel", "use_regex": True}
    assert doc["pre_tokenizer"] == {**byte_level, "add_prefix_space": False, "trim_offsets": True}
    assert doc["post_processor"] == {**byte_level, "add_prefix_space": True, "trim_offsets": False}
    assert doc["decoder"] == {**byte_level, "add_prefix_space": True, "trim_offsets": True}
    assert doc["normalizer"] is None and doc["truncation"] is None and doc["padding"] is None
    assert doc["added_tokens"] == [{"id": 50256, "content": "<|endoftext|>", "single_word": False,
                                    "lstrip": False, "rstrip": False, "normalized": True, "special": True}]
    model = doc["model"]
    assert (model["type"], len(model["vocab"]), len(model["merges"])) == ("BPE", 50257, 50000)
    assert model["merges"][:3] == ["Ġ t", "Ġ a", "h e"]


def test_loads_in_tokenizers_and_ids_round_trip() -> None:
    tok = _builtin()
    assert tok.get_vocab_size() == 50257
    assert tok.token_to_id("<|endoftext|>") == 50256
    assert tok.get_added_tokens_decoder()[50256].special
    for token_id in range(tok.get_vocab_size()):
        assert tok.token_to_id(tok.id_to_token(token_id)) == token_id
    assert tok.encode("Hello world").ids == [15496, 995]


@pytest.mark.parametrize("case", fixtures.edge_cases(), ids=lambda case: case.id)
def test_text_round_trips(case: fixtures.EdgeCase) -> None:
    tok = _builtin()
    ids = tok.encode(case.text).ids
    assert tok.decode(ids, skip_special_tokens=False) == case.text


def test_source_record_matches_file() -> None:
    record = (DATA_DIR / "gpt2.SOURCE.txt").read_text(encoding="utf-8")
    assert f"gpt2.json (uncompressed) sha256 {hashlib.sha256(_raw_json()).hexdigest()}" in record
    assert "openai-whisper==20230124" in record and "MIT License" in record


def test_equals_real_gpt2_tokenizer_json_except_truncation() -> None:
    shared = json.loads(fixtures.fixture_path("gpt2", "tokenizer.json").read_text(encoding="utf-8"))
    ours = _doc()
    assert shared["truncation"] == {"direction": "Right", "max_length": 50, "strategy": "LongestFirst", "stride": 0}
    assert ours["truncation"] is None
    for key in shared.keys() - {"truncation", "model"}:
        assert ours[key] == shared[key], key
    assert list(ours) == list(shared)
    assert list(ours["model"].items()) == list(shared["model"].items())


def _assert_same_encoding(ours: Any, ref: Any, text: str, label: str) -> None:
    got, want = ours.encode(text), ref.encode(text)
    if got.ids != want.ids:
        at = next((i for i, (a, b) in enumerate(zip(got.ids, want.ids)) if a != b), min(len(got.ids), len(want.ids)))
        pytest.fail(f"{label}: first difference at {at}: {got.tokens[at:at + 5]} != {want.tokens[at:at + 5]}")
    assert got.offsets == want.offsets, label


def test_same_ids_as_real_gpt2_on_edge_texts() -> None:
    ours, ref = _builtin(), _reference()
    for case in fixtures.edge_cases():
        _assert_same_encoding(ours, ref, case.text, case.id)


def test_same_ids_as_real_gpt2_on_bench_en_slice() -> None:
    text = fixtures.bench_slice("en", BENCH_CHARS)
    ours, ref = _builtin(), _reference()
    _assert_same_encoding(ours, ref, text, f"bench_en[:{BENCH_CHARS}]")
    assert len(ours.encode(text).ids) > 40_000


def test_generator_rebuilds_the_file_from_the_same_pieces() -> None:
    generator = _generator()
    vocab = generator.read_vocab(fixtures.fixture_path("gpt2", "vocab.json").read_bytes())
    merges = generator.read_merges(fixtures.fixture_path("gpt2", "merges.txt").read_bytes(), vocab)
    assert generator.serialize(generator.build_tokenizer_json(vocab, merges)) == _raw_json()


def test_generator_rejects_bad_merges() -> None:
    generator = _generator()
    vocab = {"a": 0, "b": 1, "ab": 2}
    generator.N_MERGES = 1
    assert generator.read_merges(b"#version: 0.2\na b\n", vocab) == ["a b"]
    with pytest.raises(ValueError, match="not a pair"):
        generator.read_merges(b"#version: 0.2\nb a\n", vocab)
    with pytest.raises(ValueError, match="expected 1"):
        generator.read_merges(b"a b\na b\n", vocab)


def test_builtin_is_gzip_with_zero_mtime() -> None:
    packed = BUILTIN.read_bytes()
    assert packed[:2] == b"\x1f\x8b" and packed[4:8] == b"\0\0\0\0"
    assert Path(BUILTIN).stat().st_size < 1_000_000
