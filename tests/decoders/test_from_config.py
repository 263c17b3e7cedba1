"""Decoder JSON parsing: polytok accepts what HF's DecoderWrapper accepts and names the key otherwise."""

from __future__ import annotations

import json

import pytest

import polytok.decoders
from polytok.errors import DecodeError, FormatError

tokenizers = pytest.importorskip("tokenizers")

TOKENS = [["▁Hello", "<0x41>", "##x", "a</w>", "ĠHi", "  ", "|", "<pad>", "aa"], [], ["▁", "▁"]]

CONFIGS = [
    {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": False},
    {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": False, "use_regex": False},
    {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": False, "use_regex": None},
    {"type": "ByteLevel", "add_prefix_space": True},
    {"type": "ByteLevel", "add_prefix_space": 1, "trim_offsets": True},
    {"type": "Metaspace", "replacement": "▁"},
    {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "first", "split": False},
    {"type": "Metaspace", "replacement": "▁", "prepend_scheme": None},
    {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "Always"},
    {"type": "Metaspace", "replacement": "▁", "split": None, "add_prefix_space": None, "str_rep": None},
    {"type": "Metaspace", "replacement": "▁", "add_prefix_space": False},
    {"type": "Metaspace", "replacement": "▁", "add_prefix_space": False, "prepend_scheme": "never"},
    {"type": "Metaspace", "replacement": "▁", "add_prefix_space": True, "prepend_scheme": "never"},
    {"type": "Metaspace", "replacement": "▁", "str_rep": "▁"},
    {"type": "Metaspace", "replacement": "▁", "str_rep": 5},
    {"type": "Metaspace", "replacement": "▁▁"},
    {"type": "Metaspace", "replacement": ""},
    {"type": "Metaspace"},
    {"type": "WordPiece", "prefix": "##", "cleanup": False},
    {"type": "WordPiece", "prefix": "##"},
    {"type": "WordPiece", "prefix": 3, "cleanup": True},
    {"type": "BPEDecoder", "suffix": "</w>"},
    {"type": "BPEDecoder"},
    {"type": "CTC", "pad_token": "<pad>", "word_delimiter_token": "|", "cleanup": True},
    {"type": "CTC", "pad_token": "<pad>", "word_delimiter_token": "|"},
    {"type": "Replace", "pattern": {"String": "▁"}, "content": " "},
    {"type": "Replace", "pattern": {"Regex": "a+"}, "content": "b"},
    {"type": "Replace", "pattern": {"Regex": "("}, "content": ""},
    {"type": "Replace", "pattern": {"String": "a", "Regex": "b"}, "content": ""},
    {"type": "Replace", "pattern": {"Str": "a"}, "content": ""},
    {"type": "Replace", "pattern": "a", "content": ""},
    {"type": "Replace", "pattern": {"String": "a"}, "content": None},
    {"type": "Replace", "pattern": {"String": "a"}},
    {"type": "Fuse"},
    {"type": "Fuse", "junk": 3},
    {"type": "ByteFallback"},
    {"type": "Strip", "content": " ", "start": 1, "stop": 0},
    {"type": "Strip", "content": "  ", "start": 1, "stop": 0},
    {"type": "Strip", "content": " ", "start": -1, "stop": 0},
    {"type": "Strip", "content": " ", "start": 1.0, "stop": 0},
    {"type": "Strip", "content": " ", "start": 1},
    {"type": "Sequence", "decoders": []},
    {"type": "Sequence", "decoders": [{"type": "Fuse"}, {"type": "Strip", "content": "x", "start": 0, "stop": 1}]},
    {"type": "Sequence", "decoders": [{"type": "Fuse"}, {"type": "Strip", "content": "x", "start": 0}]},
    {"type": "Sequence"},
    {"type": "Sequence", "decoders": {"type": "Fuse"}},
]


def _reference(config):
    tok = tokenizers.Tokenizer(tokenizers.models.WordLevel({"a": 0}, unk_token="a"))
    data = json.loads(tok.to_str())
    data["decoder"] = config
    try:
        return tokenizers.Tokenizer.from_str(json.dumps(data)).decoder
    except Exception:
        return None


@pytest.mark.parametrize("config", CONFIGS, ids=[json.dumps(c, ensure_ascii=True)[:70] for c in CONFIGS])
def test_accepts_what_hf_accepts(config):
    ref = _reference(config)
    if ref is None:
        with pytest.raises(FormatError) as info:
            polytok.decoders.from_config(config, "decoder")
        assert info.value.key and info.value.key.startswith("decoder")
        return
    ours = polytok.decoders.from_config(config, "decoder")
    for tokens in TOKENS:
        try:
            expected = ref.decode(list(tokens))
        except BaseException:  # a Rust panic (e.g. Strip over an empty fused list)
            with pytest.raises(DecodeError):
                ours.decode_chain(list(tokens))
            continue
        assert "".join(ours.decode_chain(list(tokens))) == expected


def test_error_names_nested_key():
    config = {"type": "Sequence", "decoders": [{"type": "Fuse"}, {"type": "Strip", "content": "ab",
                                                                   "start": 0, "stop": 0}]}
    with pytest.raises(FormatError) as info:
        polytok.decoders.from_config(config, "decoder")
    assert info.value.key == "decoder.decoders[1].content"


@pytest.mark.parametrize("config", [{"suffix": "</w>"}, {"type": "Foo", "suffix": "</w>"}])
def test_type_is_required(config):
    # HF falls back to untagged parsing here (this loads as BPEDecoder); no real file relies on it
    with pytest.raises(FormatError) as info:
        polytok.decoders.from_config(config, "decoder")
    assert info.value.key == "decoder.type"
