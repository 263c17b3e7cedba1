"""`decode` and `decode_batch` of numpy arrays and torch tensors against transformers 5.24.0's
``decode`` / ``batch_decode``, live, on fixture folders (byte-level BPE, SentencePiece-style
BPE and Unigram, WordPiece)."""

from __future__ import annotations

import json
import warnings
from typing import Any

import pytest
from fixtures import fixture_path

import polytok

transformers = pytest.importorskip("transformers")
np = pytest.importorskip("numpy")

TEXTS = ["Hello world, this is a test.", "Short", "café 😀 naïve!", "Tabs\tand\nnew lines"]
NAMES = ["qwen3", "phi-3-mini", "albert-base-v2-tf5", "bert-base-uncased"]
INT_DTYPES = ["int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64"]


@pytest.fixture(scope="module")
def pairs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Any, Any]]:
    out = {}
    for name in NAMES:
        folder = fixture_path(name, "tokenizer.json").parent
        if name == "bert-base-uncased":  # no config: a BertTokenizer folder made in a copy
            folder = tmp_path_factory.mktemp("bert")
            (folder / "tokenizer.json").write_bytes(fixture_path(name, "tokenizer.json").read_bytes())
            (folder / "tokenizer_config.json").write_text(json.dumps({"tokenizer_class": "BertTokenizer"}))
        else:
            fixture_path(name, "tokenizer_config.json")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out[name] = (polytok.load(folder), transformers.AutoTokenizer.from_pretrained(str(folder)))
    return out


def _reference(call: Any, *args: Any, **kwargs: Any) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return call(*args, **kwargs)


def _rows(tok: Any) -> list[list[int]]:
    return [tok.encode(t) for t in TEXTS]


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("dtype", INT_DTYPES)
def test_decode_numpy_integer_arrays_equals_transformers(pairs, name, dtype):
    tok, ref = pairs[name]
    limit = np.iinfo(dtype).max
    for ids in _rows(tok) + [list(range(min(limit, 120)))]:
        ids = [i for i in ids if i <= limit]
        array = np.array(ids, dtype=dtype)
        for skip in (False, True):
            assert tok.decode(array, skip) == _reference(ref.decode, array, skip_special_tokens=skip)


@pytest.mark.parametrize("name", NAMES)
def test_decode_batch_equals_transformers_batch_decode(pairs, name):
    tok, ref = pairs[name]
    rows = _rows(tok)
    width = max(map(len, rows))
    square = np.array([r + [0] * (width - len(r)) for r in rows], dtype=np.int32)
    for batch in [rows, [tuple(r) for r in rows], [np.array(r, dtype=np.uint32) for r in rows], square]:
        for skip in (False, True):
            assert tok.decode_batch(batch, skip) == _reference(ref.batch_decode, batch, skip_special_tokens=skip)


@pytest.mark.parametrize("name", NAMES)
def test_decode_torch_tensors_equals_transformers(pairs, name):
    torch = pytest.importorskip("torch")
    tok, ref = pairs[name]
    rows = _rows(tok)
    for dtype in (torch.int64, torch.int32, torch.int16):
        for ids in rows:
            tensor = torch.tensor([i for i in ids if i <= torch.iinfo(dtype).max], dtype=dtype)
            assert tok.decode(tensor) == _reference(ref.decode, tensor)
    short = [(r * 3)[:3] for r in rows]
    batch = torch.tensor(short)
    assert tok.decode_batch(batch, True) == _reference(ref.batch_decode, batch, skip_special_tokens=True)
    encoded = tok(TEXTS, padding=True, return_tensors="pt") if tok.token_to_id("<pad>") is not None else None
    if encoded is not None:
        expected = _reference(ref.batch_decode, encoded["input_ids"], skip_special_tokens=True)
        assert tok.decode_batch(encoded["input_ids"], True) == expected


def test_bool_arrays_read_as_transformers_reads_them(pairs):
    """transformers' ``tolist`` makes Python bools, which are the ids 1 and 0."""
    tok, ref = pairs["qwen3"]
    array = np.array([True, False, True])
    assert tok.decode(array) == _reference(ref.decode, array) == tok.decode([1, 0, 1])


def test_float_ids_are_refused_naming_the_position(pairs):
    tok, ref = pairs["qwen3"]
    with pytest.raises(TypeError):
        _reference(ref.decode, np.array([1.0, 2.0]))
    with pytest.raises(polytok.DecodeError, match="position 0: token ids must be integers"):
        tok.decode(np.array([1.0, 2.0]))
    with pytest.raises(polytok.DecodeError, match="position 2: token ids must be integers, not 2.5"):
        tok.decode([1, 2, 2.5])
    with pytest.raises(polytok.DecodeError, match="sequence 1: position 1"):
        tok.decode_batch([np.array([1, 2]), [3, 4.5]])
    assert tok.decode(np.array([], dtype=np.float64)) == _reference(ref.decode, np.array([], dtype=np.float64)) == ""


def test_torch_float_tensors_are_refused(pairs):
    torch = pytest.importorskip("torch")
    tok, _ = pairs["qwen3"]
    with pytest.raises(polytok.DecodeError, match="position 0"):
        tok.decode(torch.tensor([1.0, 2.0]))


def test_array_shapes_that_are_not_one_sequence_are_refused(pairs):
    tok, _ = pairs["qwen3"]
    with pytest.raises(polytok.DecodeError, match="1-d array, not a 2-d ndarray; decode_batch"):
        tok.decode(np.array([[1, 2]]))
    with pytest.raises(polytok.DecodeError, match="not a 0-d"):
        tok.decode(np.array(5))
    with pytest.raises(polytok.DecodeError, match="2-d array, not a 1-d ndarray; decode takes"):
        tok.decode_batch(np.array([1, 2]))
    with pytest.raises(polytok.DecodeError, match="sequence 0: expected a sequence of token ids"):
        tok.decode_batch([1, 2])
    with pytest.raises(polytok.DecodeError, match="sequence of sequences"):
        tok.decode_batch("ab")
