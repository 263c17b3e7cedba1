"""A byte-level GGUF's NORMAL entries outside the byte alphabet, written to a folder under new texts.

No text reaches such an entry (BPE starts from byte symbols, and merges of byte-symbol
texts make byte-symbol texts), and llama.cpp renders it as ``[UNK_BYTE_0x<hex><text>]``
(llama-vocab.cpp ``token_to_piece``, BPE: each character's byte, or that marker).
``write_hf_folder`` writes it under the byte symbols of that rendering, so HF's own
``ByteLevel`` decoder gives llama.cpp's text with no decoder step for it (Command-R has
1403 such entries; its llama.cpp goldens are in test_gguf_to_hf.py). With
``ignore_merges`` a whole piece is looked up and could spell the new text: then each gets
a decoder step. llama.cpp 0.3.36's ids and decoded bytes on the same files are
tools/gen_gguf_to_hf_synthetic.py's.
"""

from __future__ import annotations

import json

import pytest

from polytok.text.byte_alphabet import BYTES_TO_CHARS

gguf = pytest.importorskip("gguf")
tokenizers = pytest.importorskip("tokenizers")

from polytok.convert.gguf_to_hf import write_hf_folder  # noqa: E402

from .synthetic_goldens import llama_cpp_outputs  # noqa: E402

ZWJ = "\u200d"
RENAMED_TEXTS = ["hello", "a\u200db", "\u200d"]  # the entries stay out of reach


def decoded_lists(tokens: list[str]) -> list[list[int]]:
    """The id lists decoded: each entry outside the byte alphabet alone, and with "hel"."""
    ids = [tokens.index(ZWJ), tokens.index("hel"), tokens.index("a" + ZWJ + "b")]
    return [[ids[0]], [ids[2]], ids]


def byte_level_gguf(path, pre: str) -> list[str]:
    tokens = [*BYTES_TO_CHARS, "he", "hel", ZWJ, "a" + ZWJ + "b", "<|endoftext|>"]
    w = gguf.GGUFWriter(str(path), "gpt2")
    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre(pre)
    w.add_token_list(tokens)
    w.add_token_types([1] * (len(tokens) - 1) + [3])  # NORMAL, and a CONTROL end of text
    w.add_token_merges(["h e", "he l"])
    w.add_bos_token_id(len(tokens) - 1)
    w.add_eos_token_id(len(tokens) - 1)
    w.add_add_bos_token(False)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.close()
    return tokens


@pytest.mark.parametrize("pre, renamed", [("gpt-2", True), ("llama-bpe", False)])
def test_unreachable_entries_decode_as_llama_cpp(tmp_path, pre, renamed):
    tokens = byte_level_gguf(tmp_path / "v.gguf", pre)
    write_hf_folder(str(tmp_path / "v.gguf"), str(tmp_path / "hf"))
    data = json.loads((tmp_path / "hf" / "tokenizer.json").read_text(encoding="utf-8"))
    hf = tokenizers.Tokenizer.from_str(json.dumps(data))
    llama_ids, llama_bytes = llama_cpp_outputs(f"renames-{pre}", tmp_path / "v.gguf")
    for seq in decoded_lists(tokens):
        assert hf.decode(seq).encode("utf-8") == llama_bytes[tuple(seq)]
    assert llama_bytes[(tokens.index(ZWJ),)] == b"[UNK_BYTE_0xe2808d" + ZWJ.encode() + b"]"
    assert (ZWJ in data["model"]["vocab"]) is not renamed
    renderings = [step for step in data["decoder"]["decoders"]
                  if step["type"] == "Replace" and step["pattern"]["Regex"].startswith("\\A")]
    assert len(renderings) == (0 if renamed else 2), renderings  # else a Replace per entry before ByteLevel
    for text in RENAMED_TEXTS:
        assert hf.encode(text, add_special_tokens=False).ids == llama_ids[text]
