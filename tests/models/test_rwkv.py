"""RWKV model vs llama.cpp's RWKV session (llama-cpp-python 0.3.36).

llama.cpp ships no RWKV vocabulary file, so tools/gen_llama_model_goldens.py writes
`TOKENS` as a synthetic GGUF (`write_gguf`: gguf-py, model ``rwkv``, ``<s>`` CONTROL, the
rest NORMAL), once without and once with ``unknown_token_id`` 3, and runs each of `TEXTS`
through ``llama_cpp.Llama(vocab_only=True).tokenize(text, add_bos=False, special=False)``;
`LLAMA_CPP` holds those ids, read from tests/golden/gguf/models/rwkv.json. No text holds a
USER_DEFINED token (there is none), so the special-token partition leaves every text whole.
"""

from __future__ import annotations

import pytest

from polytok.errors import EncodeError
from polytok.models.rwkv import RWKV, unescape

from ._llama_goldens import synthetic_ids
from ._llama_goldens import write_gguf as write_vocab_gguf

# token texts as stored in the GGUF (escaped)
TOKENS = ["<s>", "\\n", "a", "b", "ab", "abc", "\\x41", "\\xAB", "\\t\\r", "\\\\", "\\q", "é", "\\xc3", "<|x|>", "c",
          " ", "  ", "A"]

TEXTS = ["\t\r", "\n\n", '"', "<s>", "<|x|>a", "A", "\\", "a  b", "ab", "abab", "abc", "abd", "d", "ddab", "q", "zz",
         "\u00c3x", "\u00e0", "\u00e9"]
UNK_IDS = {"unk_id=None": None, "unk_id=3": 3}  # variant label -> tokenizer.ggml.unknown_token_id
VARIANTS = list(UNK_IDS)
# unknown_token_id -> text -> llama.cpp's ids
LLAMA_CPP = {UNK_IDS[label]: ids for label, ids in synthetic_ids("rwkv").items()}


def write_gguf(path, variant):
    """`TOKENS` as the GGUF llama.cpp tokenized (tools/gen_llama_model_goldens.py)."""
    return write_vocab_gguf(path, "rwkv6", "rwkv", TOKENS, [3] + [1] * (len(TOKENS) - 1), unk_id=UNK_IDS[variant])


@pytest.mark.parametrize("unk_id", UNK_IDS.values())
def test_matches_llama_cpp(unk_id):
    model = RWKV(TOKENS, unk_id)
    wrong = [(text, LLAMA_CPP[unk_id][text], model.tokenize(text)) for text in TEXTS
             if model.tokenize(text) != LLAMA_CPP[unk_id][text]]
    assert not wrong


def test_unescape():
    assert unescape("\\t\\n\\r") == b"\t\n\r"
    assert unescape("\\x41\\xc3") == b"A\xc3"
    assert unescape("\\xAB") == b'"'  # upper-case hex digits count from '0': (17 << 4) + 18 mod 256
    assert unescape("\\q\\\\") == b"q\\"
    # read from the source, not recorded: any byte in 'a'..0x7f counts from 'a' ('g' is 16)
    assert unescape("\\xg0") == b"\x00"


def test_a_later_token_with_the_same_bytes_wins():
    assert RWKV(TOKENS).tokenize("A") == LLAMA_CPP[None]["A"] == [len(TOKENS) - 1]


def test_spans_cover_whole_characters():
    model = RWKV(TOKENS)
    # \xc3 is the first byte of Ã; its second byte has no token (-1)
    assert model.tokenize_spans("\u00c3x") == [(12, 0, 1), (-1, 0, 1), (-1, 1, 2)]


def test_dead_end_raises():
    # llama.cpp emits id 0 and restarts at position 0 forever; polytok refuses.
    with pytest.raises(EncodeError):
        RWKV(["abc", "x"]).tokenize("ab")


def test_lookups():
    model = RWKV(TOKENS)
    assert model.vocab_size() == len(TOKENS) and model.token_to_id("\\n") == 1
    assert model.id_to_token(1) == "\\n" and model.token_bytes(1) == b"\n" and model.id_to_token(99) is None


@pytest.mark.parametrize("label", VARIANTS)
def test_loaded_from_a_gguf_file(tmp_path, label):
    """The same vocabulary written as the GGUF llama.cpp read, through polytok.load."""
    pytest.importorskip("gguf")
    import polytok

    tok = polytok.load(write_gguf(tmp_path / "rwkv.gguf", label))
    for text in TEXTS:
        assert tok.encode(text, add_special=True, special="text") == LLAMA_CPP[UNK_IDS[label]][text], text
