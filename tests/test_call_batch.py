"""`tok(texts, …)` against transformers 5.24.0's ``AutoTokenizer.from_pretrained(folder)(texts, …)``, live.

Every padding / truncation / max_length / pad_to_multiple_of combination that changes
the result is run on both, for single texts, batches and pairs, on fixture folders
chosen for what they exercise: byte-level BPE with a pad token (qwen3), a
``tokenizer.json`` that carries its own truncation (gpt2, given a pad token), WordPiece
with ``token_type_ids`` (bert-base-uncased as a ``BertTokenizer``), a RoBERTa pair
template, a SentencePiece-style Unigram (albert), a class that pads on the left
(llama2 given a pad token: the ``LlamaTokenizer`` class pads on the left) and config
files changed in a copy (padding and truncation sides, a ``tokenizer.json`` padding
section, ``model_input_names``, a byte-level ``LlamaTokenizer`` that transformers loads
as ``TokenizersBackend``).
Expected values come from transformers only; where it raises, polytok must raise too.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import shutil
import warnings
from pathlib import Path
from typing import Any

import pytest
from fixtures import edge_texts, fixture_path
from sweeps import sweep

import polytok

transformers = pytest.importorskip("transformers")
np = pytest.importorskip("numpy")

TEXTS = [
    "Hello world, this is a test.",
    "Short",
    "A much longer sentence with numbers 12345, accents (café, naïve) and an emoji 😀 at its end!",
    "",
    "Tabs\tand\nnew lines, and  double  spaces.",
]
PAIRS = ["Second part.", "A rather longer second sequence of words to cut.", "x", "Another one here", "y z"]
LONG = " ".join(["token"] * 80)  # longer than gpt2's tokenizer.json truncation (50)

PADDINGS: list[Any] = [False, True, "longest", "max_length", "do_not_pad"]
TRUNCATIONS: list[Any] = [None, False, True, "longest_first", "only_first", "only_second", "do_not_truncate"]
MAX_LENGTHS = [None, 4, 9, 16]
MULTIPLES = [None, 8]


def _copy(tmp_root: Path, name: str, config: dict[str, Any] | None = None,
          tokenizer_changes: dict[str, Any] | None = None) -> Path:
    """A copy of fixture `name`'s tokenizer.json and tokenizer_config.json (when it has one), changed as asked."""
    folder = tmp_root / name
    folder.mkdir(parents=True, exist_ok=True)
    source = fixture_path(name, "tokenizer.json")
    if tokenizer_changes:
        data = json.loads(source.read_text(encoding="utf-8"))
        data.update(tokenizer_changes)
        (folder / "tokenizer.json").write_text(json.dumps(data), encoding="utf-8")
    else:
        shutil.copy(source, folder / "tokenizer.json")
    base: dict[str, Any] = {}
    with contextlib.suppress(KeyError):  # a fixture without a config file
        base = json.loads(fixture_path(name, "tokenizer_config.json").read_text(encoding="utf-8"))
    base.update(config or {})
    if base:
        (folder / "tokenizer_config.json").write_text(json.dumps(base), encoding="utf-8")
    return folder


BERT_CONFIG = {"tokenizer_class": "BertTokenizer", "pad_token": "[PAD]", "unk_token": "[UNK]", "cls_token": "[CLS]",
               "sep_token": "[SEP]", "mask_token": "[MASK]", "model_max_length": 512, "do_lower_case": True}
FOLDERS: dict[str, tuple[str, dict[str, Any] | None, dict[str, Any] | None]] = {
    "qwen3": ("qwen3", None, None),
    "gpt2+pad": ("gpt2", {"pad_token": "<|endoftext|>"}, None),
    "bert": ("bert-base-uncased", BERT_CONFIG, None),
    "roberta+pad": ("roberta-base", {"pad_token": "<pad>", "model_max_length": 512}, None),
    "albert": ("albert-base-v2-tf5", None, None),
    "phi-3-mini": ("phi-3-mini", None, None),
    "qwen3-left": ("qwen3", {"padding_side": "left", "truncation_side": "left"}, None),
    # a TokenizersBackend folder: tokenizer.json's padding and truncation give the sides and the pad token
    # (a class such as BertTokenizer names its own default pad token, which polytok does not follow)
    "bert-json-padding": ("bert-base-uncased", {"model_max_length": 512},
                          {"padding": {"strategy": "BatchLongest", "direction": "Left", "pad_to_multiple_of": None,
                                       "pad_id": 100, "pad_type_id": 0, "pad_token": "[UNK]"},
                           "truncation": {"max_length": 7, "stride": 0, "strategy": "LongestFirst",
                                          "direction": "Left"}}),
    "qwen3-types": ("qwen3", {"model_input_names": ["input_ids", "token_type_ids", "attention_mask"]}, None),
    "llama2+pad": ("llama2", {"pad_token": "<unk>"}, None),  # LlamaTokenizer pads on the left by its class
    "llama3-as-llama": ("llama3", {"tokenizer_class": "LlamaTokenizerFast", "pad_token": "<|end_of_text|>"},
                        None),  # ByteLevel: loaded as TokenizersBackend, which pads on the right
}


@pytest.fixture(scope="module")
def pairs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Any, Any]]:
    root = tmp_path_factory.mktemp("call_batch")
    out = {}
    for key, (name, config, changes) in FOLDERS.items():
        folder = _copy(root / key, name, config, changes)
        out[key] = (polytok.load(folder), transformers.AutoTokenizer.from_pretrained(str(folder)))
    return out


def _reference(ref: Any, *args: Any, **kwargs: Any) -> tuple[dict[str, Any] | None, BaseException | None]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return dict(ref(*args, **kwargs)), None
        except Exception as exc:  # the reference's refusal: polytok must refuse too
            return None, exc


def _same(tok: Any, ref: Any, *args: Any, **kwargs: Any) -> str:
    expected, error = _reference(ref, *args, **kwargs)
    polytok_kwargs = dict(kwargs)
    if "return_offsets_mapping" in polytok_kwargs:
        polytok_kwargs["return_offsets"] = polytok_kwargs.pop("return_offsets_mapping")
    if error is not None:
        with pytest.raises((ValueError, TypeError)):
            tok(*args, **polytok_kwargs)
        return "raised"
    got = tok(*args, **polytok_kwargs)
    assert list(got.keys()) == list(expected), (args, kwargs)
    for key, value in expected.items():
        assert _plain(got[key]) == _plain(value), (key, args, kwargs)
    return "equal"


def _plain(value: Any) -> Any:
    if hasattr(value, "tolist"):
        value = value.tolist()
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


@pytest.mark.parametrize("key", sweep(FOLDERS, [k for k in FOLDERS if k not in ("qwen3", "qwen3-types")]))
def test_every_padding_and_truncation_combination_equals_transformers(pairs, key):
    tok, ref = pairs[key]
    outcomes = set()
    for padding, truncation, max_length, multiple in itertools.product(PADDINGS, TRUNCATIONS, MAX_LENGTHS, MULTIPLES):
        options = {"padding": padding, "truncation": truncation, "max_length": max_length,
                   "pad_to_multiple_of": multiple}
        outcomes.add(_same(tok, ref, TEXTS, **options))
        outcomes.add(_same(tok, ref, TEXTS, PAIRS, **options))
    outcomes.add(_same(tok, ref, TEXTS[2], padding="max_length", max_length=24))
    assert "equal" in outcomes


@pytest.mark.parametrize("key", list(FOLDERS))
def test_single_text_pair_and_defaults_equal_transformers(pairs, key):
    tok, ref = pairs[key]
    for text in [*TEXTS, LONG]:
        _same(tok, ref, text)
        _same(tok, ref, text, "and its pair")
        _same(tok, ref, text, "")  # an empty pair: no pair, as transformers reads it
        _same(tok, ref, text, truncation=True)
        _same(tok, ref, text, padding="max_length")
        _same(tok, ref, text, add_special_tokens=False, return_length=True)
    _same(tok, ref, [LONG, "short"], padding=True, return_length=True)
    _same(tok, ref, [LONG, LONG + " more"], truncation=True, max_length=20, stride=3)
    _same(tok, ref, ["a", "b"], ["", "c"])  # in a batch, an empty pair is a pair


@pytest.mark.parametrize("key", list(FOLDERS))
def test_returned_arrays_as_asked_equal_transformers(pairs, key):
    tok, ref = pairs[key]
    for options in [{"return_offsets_mapping": True}, {"return_token_type_ids": True},
                    {"return_token_type_ids": False}, {"return_attention_mask": False},
                    {"return_special_tokens_mask": True}, {"return_length": True, "return_offsets_mapping": True}]:
        _same(tok, ref, TEXTS, **options)
        _same(tok, ref, TEXTS, PAIRS, padding=True, **options)
        _same(tok, ref, TEXTS[0], max_length=5, **options)
        _same(tok, ref, TEXTS, padding="max_length", max_length=12, truncation=True, **options)


@pytest.mark.parametrize("key", ["qwen3", "bert", "phi-3-mini", "albert"])
@pytest.mark.parametrize("kind", ["np", "pt"])
def test_tensors_equal_transformers(pairs, key, kind):
    if kind == "pt":
        pytest.importorskip("torch")
    tok, ref = pairs[key]
    for args, options in [((TEXTS,), {"padding": True}), ((TEXTS, PAIRS), {"padding": True, "truncation": True,
                                                                            "max_length": 10}),
                          ((TEXTS[0],), {}), ((TEXTS[0], PAIRS[0]), {"return_offsets_mapping": True}),
                          ((TEXTS,), {"padding": "max_length", "max_length": 32, "return_length": True,
                                      "return_offsets_mapping": True}),
                          (([],), {"padding": True})]:
        expected, error = _reference(ref, *args, return_tensors=kind, **options)
        if error is not None:
            with pytest.raises((ValueError, TypeError)):
                tok(*args, return_tensors=kind, **_polytok_names(options))
            continue
        got = tok(*args, return_tensors=kind, **_polytok_names(options))
        assert list(got.keys()) == list(expected)
        if kind == "pt":
            assert got.to("cpu") is got  # torch's Tensor.to on each
        for name, value in expected.items():
            assert type(got[name]) is type(value), name
            assert tuple(got[name].shape) == tuple(value.shape), name
            assert got[name].dtype == value.dtype, name
            assert _plain(got[name]) == _plain(value), name


def _polytok_names(options: dict[str, Any]) -> dict[str, Any]:
    out = dict(options)
    if "return_offsets_mapping" in out:
        out["return_offsets"] = out.pop("return_offsets_mapping")
    return out


def test_ragged_numpy_rows_are_object_arrays_as_in_transformers(pairs):
    tok, ref = pairs["qwen3"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = ref(TEXTS[:3], return_tensors="np")
    got = tok(TEXTS[:3], return_tensors="np")
    for name, value in expected.items():
        assert got[name].dtype == value.dtype == object
        assert [row.tolist() for row in got[name]] == [row.tolist() for row in value]


def test_ragged_torch_rows_are_refused_as_in_transformers(pairs):
    pytest.importorskip("torch")
    tok, ref = pairs["qwen3"]
    with pytest.raises(ValueError):
        ref(TEXTS[:3], return_tensors="pt")
    with pytest.raises(ValueError, match="padding=True"):
        tok(TEXTS[:3], return_tensors="pt")


def test_left_padding_is_on_the_left(pairs):
    """phi-3-mini's class pads on the left: the pad ids lead (what transformers gives, pinned here too)."""
    tok, ref = pairs["phi-3-mini"]
    got = tok(["Hello world, how are you?", "Hi"], padding=True)
    assert got["input_ids"][1][0] == 32000 and got["attention_mask"][1][0] == 0
    assert got == dict(ref(["Hello world, how are you?", "Hi"], padding=True))
    right = tok(["Hello world, how are you?", "Hi"], padding=True, padding_side="right")
    assert right["input_ids"][1][-1] == 32000
    assert right == dict(ref(["Hello world, how are you?", "Hi"], padding=True, padding_side="right"))


def test_token_type_ids_follow_the_class(pairs):
    tok, _ = pairs["bert"]
    assert list(tok("a", "b").keys()) == ["input_ids", "token_type_ids", "attention_mask"]
    assert tok("a", "b")["token_type_ids"] == [0, 0, 0, 1, 1]
    tok, _ = pairs["qwen3"]
    assert list(tok("a", "b").keys()) == ["input_ids", "attention_mask"]


def test_batch_encoding_reads_by_attribute(pairs):
    tok, _ = pairs["qwen3"]
    enc = tok(["Hello", "Hello world"], padding=True)
    assert enc.input_ids is enc["input_ids"] and enc.attention_mask == [[1, 0], [1, 1]]
    with pytest.raises(AttributeError):
        _ = enc.token_type_ids
    assert enc.to("cpu") is enc  # lists have no device: left as they are


def test_no_pad_token_is_refused_as_in_transformers(tmp_path):
    folder = _copy(tmp_path, "llama2")
    tok, ref = polytok.load(folder), transformers.AutoTokenizer.from_pretrained(str(folder))
    with pytest.raises(ValueError):
        ref(["a", "bb"], padding=True)
    with pytest.raises(polytok.EncodeError, match="pad token"):
        tok(["a", "bb"], padding=True)
    assert tok(["a", "bb"]) == dict(ref(["a", "bb"]))


def test_bad_options_are_named():
    tok = polytok.load(fixture_path("qwen3", "tokenizer.json").parent)
    with pytest.raises(ValueError, match="padding must be one of"):
        tok("a", padding="sideways")
    with pytest.raises(ValueError, match="truncation must be one of"):
        tok("a", truncation="middle")
    with pytest.raises(ValueError, match="return_tensors"):
        tok("a", return_tensors="tf")
    with pytest.raises(TypeError, match="is_split_into_words"):
        tok("a", is_split_into_words=True)
    with pytest.raises(TypeError, match=r"text\[1\]"):
        tok(["a", 3])
    with pytest.raises(ValueError, match="2 texts but 1 pairs"):
        tok(["a", "b"], ["c"])


def test_missing_numpy_or_torch_is_named(monkeypatch):
    import sys

    tok = polytok.load(fixture_path("qwen3", "tokenizer.json").parent)
    monkeypatch.setitem(sys.modules, "torch", None)
    with pytest.raises(ImportError, match="needs torch"):
        tok(["a"], return_tensors="pt")
    monkeypatch.setitem(sys.modules, "numpy", None)
    with pytest.raises(ImportError, match="needs numpy"):
        tok(["a"], return_tensors="np")


def test_no_numpy_or_torch_imported_without_tensors(tmp_path):
    import subprocess
    import sys

    folder = fixture_path("qwen3", "tokenizer.json").parent
    code = ("import sys, polytok\n"
            f"t = polytok.load({str(folder)!r})\n"
            "t(['a', 'bb'], padding=True, return_offsets=True); t.decode([1, 2]); t.decode((1, 2))\n"
            "t.decode_batch([[1], (2, 3)])\n"
            "print('numpy' in sys.modules, 'torch' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]


@pytest.mark.parametrize("key", list(FOLDERS))
def test_type_ids_without_offsets_equal_encode_full(pairs, key):
    """Type ids and special-tokens masks come from the ids when offsets are not asked for:
    they must equal what the offsets path (`encode_full`) gives, on the hard texts too."""
    tok, _ = pairs[key]
    texts = [t for t in edge_texts() if len(t) < 300][::2]
    second = texts[1:] + texts[:1]
    for args, options in [((texts,), {}), ((texts, second), {}), ((texts, second), {"add_special": False}),
                          ((texts, second), {"truncation": True, "max_length": 12, "padding": True}),
                          ((texts[:20], second[:20]), {"truncation": "only_first", "max_length": 30}),
                          ((texts[:20],), {"truncation": True, "max_length": 1})]:
        common = {"return_token_type_ids": True, "return_special_tokens_mask": True, **options}
        try:
            full = tok(*args, return_offsets=True, **common)
        except polytok.EncodeError:
            with pytest.raises(polytok.EncodeError):
                tok(*args, **common)
            continue
        del full["offset_mapping"]
        assert tok(*args, **common) == full, (key, options, len(args))


def test_a_layout_without_each_marker_once_is_refused():
    """A post-processor that repeats or drops a sequence has no layout: `encode_full` is taken instead."""
    from polytok.encoding import merge_with
    from polytok.tokenizer.sequence_layout import layout

    class Doubling:
        def process(self, a: Any, b: Any, add_special: bool) -> Any:
            return merge_with(a, a)

    assert layout(Doubling(), False, True) is None  # type: ignore[arg-type]
    assert layout(None, True, True) == [(-1, 0, 0), (-2, 1, 0)]


def test_a_vocab_txt_is_called_as_bert_tokenizer():
    """A ``vocab.txt`` is read as ``BertTokenizerFast(vocab_file)``: its call returns token type ids too."""
    path = fixture_path("bert-base-cased-vocab", "vocab.txt")
    tok = polytok.load(path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = transformers.BertTokenizerFast(str(path))
    for args, options in [((TEXTS,), {"padding": True}), ((TEXTS, PAIRS), {"truncation": True, "max_length": 9}),
                          ((TEXTS[0],), {"padding": "max_length", "max_length": 30})]:
        assert _same(tok, ref, *args, **options) == "equal"
