"""Hostile tokenizer files that once escaped as RecursionError, MemoryError, ValueError or a silent
drop: deep JSON, decompression bombs, absurd padding, numbers no reader can hold, a rank file
missing a byte. Each is a one-line `PolytokError` naming the file and the place.

Where the reference refuses too, the test runs it live on the same file (HF tokenizers,
tiktoken, mistral-common); where polytok refuses what the reference takes (the padding cap,
the decompression limit, tiktoken's load-time byte check), the test says so.
"""

from __future__ import annotations

import base64
import json
import zlib

import pytest

import polytok
from polytok.errors import EncodeError, FormatError

tokenizers = pytest.importorskip("tokenizers")
tiktoken = pytest.importorskip("tiktoken")

BASE = {"version": "1.0", "model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "h": 2, "i": 3}, "merges": []}}


def _write(tmp_path, data, name="tokenizer.json"):
    path = tmp_path / name
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    return path


def _hf_refuses(text: str) -> str:
    with pytest.raises(Exception) as info:
        tokenizers.Tokenizer.from_str(text)
    return str(info.value)


# --- 1. deep JSON -------------------------------------------------------------------------------

def _deep_list(n: int) -> str:
    return json.dumps(BASE)[:-1] + ', "extra": ' + "[" * n + "]" * n + "}"


@pytest.mark.parametrize("name", ["tokenizer.json", "tekken.json"])
def test_deep_json_is_a_format_error_at_the_first_nesting_too_deep(tmp_path, name):
    text = _deep_list(5000)
    path = _write(tmp_path, text, name)
    with pytest.raises(FormatError, match="nested more than 128 deep") as info:
        polytok.load(path)
    assert info.value.file == str(path)
    # the 129th container: the root object, then 128 lists
    assert info.value.offset == text.index("[[[") + 127


def test_deep_tokenizer_config_is_a_format_error(tmp_path):
    _write(tmp_path, BASE)
    config = _write(tmp_path, '{"x": ' + "[" * 5000 + "]" * 5000 + "}", "tokenizer_config.json")
    with pytest.raises(FormatError, match="nested more than 128") as info:
        polytok.load(tmp_path)
    assert info.value.file == str(config)


def _nested_sequence(n: int) -> dict:
    node: dict = {"type": "Lowercase"}
    for _ in range(n):
        node = {"type": "Sequence", "normalizers": [node]}
    return node


def test_nested_sequence_that_parses_is_refused_by_key_path(tmp_path):
    # 70 Sequences are 142 levels deep: HF's serde_json refuses them at parse time
    assert "recursion limit exceeded" in _hf_refuses(json.dumps(dict(BASE, normalizer=_nested_sequence(70))))
    with pytest.raises(FormatError, match="nested more than 127 deep") as info:
        polytok.load(_write(tmp_path, dict(BASE, normalizer=_nested_sequence(70))))
    assert info.value.key.startswith("normalizer.normalizers[0].normalizers[0]")
    # a tree handed over already parsed, 5,000 Sequences deep: no recursion either
    from polytok.formats.hf_json import parse_tokenizer_json
    with pytest.raises(FormatError, match="nested more than"):
        parse_tokenizer_json(dict(BASE, normalizer=_nested_sequence(5000)))


def test_nesting_at_the_limit_still_loads(tmp_path):
    tok = polytok.load(_write(tmp_path, dict(BASE, normalizer=_nested_sequence(40))))
    ref = tokenizers.Tokenizer.from_str(json.dumps(dict(BASE, normalizer=_nested_sequence(40))))
    assert tok.encode("HI") == ref.encode("HI").ids


# --- 2. decompression bombs ---------------------------------------------------------------------

def _bomb(size: int) -> bytes:
    """gzip of `size` zero bytes, made a megabyte at a time (nothing large is written or held)."""
    packer = zlib.compressobj(9, zlib.DEFLATED, 31)
    block = bytes(1 << 20)
    out = [packer.compress(block) for _ in range(size >> 20)]
    return b"".join(out) + packer.flush()


@pytest.mark.parametrize("name", ["tokenizer.json.gz", "tekken.json.gz"])
def test_gzip_bomb_is_refused_before_it_is_decompressed(tmp_path, name):
    path = tmp_path / name
    path.write_bytes(_bomb(1 << 30))
    assert path.stat().st_size < 1_100_000
    with pytest.raises(FormatError, match=r"decompresses to more than 268435456 bytes") as info:
        polytok.load(path)
    assert info.value.file == str(path)


def test_gzip_bomb_in_a_folder_and_the_limit_override(tmp_path, monkeypatch):
    (tmp_path / "tokenizer.json.gz").write_bytes(_bomb(8 << 20))
    monkeypatch.setenv("POLYTOK_MAX_DECOMPRESSED", str(1 << 20))
    with pytest.raises(FormatError, match="more than 1048576 bytes.*POLYTOK_MAX_DECOMPRESSED"):
        polytok.load(tmp_path)
    small = tmp_path / "small"
    small.mkdir()
    packer = zlib.compressobj(9, zlib.DEFLATED, 31)
    (small / "tokenizer.json.gz").write_bytes(packer.compress(json.dumps(BASE).encode()) + packer.flush())
    assert polytok.load(small).encode("hi") == [2, 3]


# --- 3. padding ---------------------------------------------------------------------------------

def _padding(**over):
    return {"strategy": "BatchLongest", "direction": "Right", "pad_to_multiple_of": None, "pad_id": 0,
            "pad_type_id": 0, "pad_token": "a", **over}


@pytest.mark.parametrize("padding,key", [
    (_padding(strategy={"Fixed": 10**9}), "padding.strategy.Fixed"),
    (_padding(pad_to_multiple_of=10**9), "padding.pad_to_multiple_of"),
])
def test_absurd_padding_is_refused_at_read(tmp_path, padding, key):
    # HF takes any usize here (a deliberate departure, docs/formats.md): it loads this file
    tokenizers.Tokenizer.from_str(json.dumps(dict(BASE, padding=padding)))
    with pytest.raises(FormatError, match="more than polytok pads to") as info:
        polytok.load(_write(tmp_path, dict(BASE, padding=padding)))
    assert info.value.key == key


def test_padding_at_the_cap_and_per_call(tmp_path):
    tok = polytok.load(_write(tmp_path, dict(BASE, padding=_padding(pad_to_multiple_of=8))))
    ref = tokenizers.Tokenizer.from_str(json.dumps(dict(BASE, padding=_padding(pad_to_multiple_of=8))))
    assert tok.encode("hi") == ref.encode("hi").ids
    with pytest.raises(EncodeError, match="length 1000000000 tokens"):
        tok.encode_full("hi", padding=polytok.Padding(length=10**9))
    with pytest.raises(EncodeError, match="negative"):
        polytok.Padding(pad_to_multiple_of=-1)
    assert polytok.Padding(length=1 << 24).length == 1 << 24


# --- 4. numbers ---------------------------------------------------------------------------------

def test_integer_too_long_for_python(tmp_path):
    text = json.dumps(BASE).replace('"a": 0', '"a": ' + "9" * 5000)
    assert "number out of range" in _hf_refuses(text)
    with pytest.raises(FormatError, match="integer of more than") as info:
        polytok.load(_write(tmp_path, text))
    assert info.value.offset == text.index("9" * 5000)


def _unigram(score):
    return dict(BASE, model={"type": "Unigram", "unk_id": 0, "vocab": [["a", 0.0], ["b", score]]})


@pytest.mark.parametrize("literal,key", [("NaN", None), ("Infinity", None), ("1e400", "model.vocab[1][1]"),
                                         ("1" + "0" * 400, "model.vocab[1][1]")])
def test_unigram_score_not_finite(tmp_path, literal, key):
    text = json.dumps(_unigram(-1.5)).replace("-1.5", literal)
    _hf_refuses(text)  # serde_json: "expected value" / "number out of range"
    with pytest.raises(FormatError) as info:
        polytok.load(_write(tmp_path, text))
    assert info.value.key == key
    if key is None:
        assert info.value.offset == text.index(literal)


def test_unigram_scores_finite_with_a_sum_past_an_f64(tmp_path):
    """Each score is an f64, only their sum is not: HF reads the file, and so does polytok."""
    config = dict(BASE, model={"type": "Unigram", "unk_id": 0, "vocab": [["<unk>", 0.0], ["a", 1e308], ["b", 1e308]]})
    path = _write(tmp_path, json.dumps(config))
    reference = tokenizers.Tokenizer.from_file(str(path)).encode("ab").ids
    assert polytok.load(path).encode("ab") == reference == [1, 2]


@pytest.mark.parametrize("literal", ["1e400", "1" + "0" * 400, "2.0"])
def test_bpe_dropout_out_of_range(tmp_path, literal):
    text = json.dumps(dict(BASE, model=dict(BASE["model"], dropout=0.5))).replace("0.5", literal)
    _hf_refuses(text)
    with pytest.raises(FormatError) as info:
        polytok.load(_write(tmp_path, text))
    assert info.value.key == "model.dropout"


def _tekken(version: str) -> dict:
    vocab = [{"rank": i, "token_bytes": base64.b64encode(bytes([i])).decode(), "token_str": None}
             for i in range(256)]
    return {"config": {"pattern": r"\w+|\s+", "num_vocab_tokens": 259, "default_vocab_size": 259,
                       "default_num_special_tokens": 3, "version": version},
            "vocab": vocab, "special_tokens": [{"rank": i, "token_str": t, "is_control": True}
                                               for i, t in enumerate(["<unk>", "<s>", "</s>"])]}


@pytest.mark.parametrize("version", ["v" + "7" * 5000, "v\u00b2", "v", 7])
def test_tekken_version_not_a_number(tmp_path, version):
    with pytest.raises(FormatError, match="expected a version") as info:
        polytok.load(_write(tmp_path, _tekken(version), "tekken.json"))
    assert info.value.key == "config.version"
    assert polytok.load(_write(tmp_path, _tekken("v7"), "tekken.json")).encode("ab", add_special=False) == [100, 101]


def test_tiktoken_rank_too_long(tmp_path):
    lines = [f"{base64.b64encode(bytes([b])).decode()} {b}" for b in range(256)] + ["YWI= " + "9" * 5000]
    path = _write(tmp_path, "\n".join(lines), "r.tiktoken")
    with pytest.raises(FormatError) as info:
        polytok.load(path, pattern=r"\w+")
    assert info.value.line == 257


# --- 5. a rank file without a single byte -------------------------------------------------------

def test_tiktoken_missing_byte_is_refused_never_dropped(tmp_path):
    ranks = {bytes([b]): i for i, b in enumerate(x for x in range(256) if x != ord("d"))}
    ranks[b"ad"] = 300
    pattern = r"\w+|\s+"
    enc = tiktoken.Encoding("t", pat_str=pattern, mergeable_ranks=ranks, special_tokens={})
    assert enc.encode_ordinary("ad") == [300]  # tiktoken loads it, and encodes what needs no "d" alone
    with pytest.raises(BaseException, match="no entry found for key"):  # ... and panics on a lone "d"
        enc.encode_ordinary("d")
    path = _write(tmp_path, "\n".join(f"{base64.b64encode(k).decode()} {v}" for k, v in ranks.items()),
                  "r.tiktoken")
    with pytest.raises(FormatError, match=r"single byte b'd'") as info:  # polytok refuses at load
        polytok.load(path, pattern=pattern)
    assert info.value.file == str(path)
