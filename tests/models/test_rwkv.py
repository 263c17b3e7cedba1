"""RWKV model vs llama.cpp's RWKV session (llama-cpp-python 0.3.36).

llama.cpp ships no RWKV vocabulary file, so `TOKENS` was written as a synthetic
GGUF (gguf-py 0.19.0, model ``rwkv``, ``<s>`` CONTROL, the rest NORMAL), once
without and once with ``unknown_token_id`` 3, and each text run through
``llama_cpp.Llama(vocab_only=True).tokenize(text, add_bos=False, special=False)``;
`LLAMA_CPP` holds those ids. No text holds a USER_DEFINED token (there is none),
so the special-token partition leaves every text whole.
"""

from __future__ import annotations

import pytest

from polytok.errors import EncodeError
from polytok.models.rwkv import RWKV, unescape

# token texts as stored in the GGUF (escaped)
TOKENS = ["<s>", "\\n", "a", "b", "ab", "abc", "\\x41", "\\xAB", "\\t\\r", "\\\\", "\\q", "é", "\\xc3", "<|x|>", "c", " ", "  ", "A"]

# unknown_token_id -> text -> llama.cpp's ids
LLAMA_CPP = {None: {'\t\r': [8],
        '\n\n': [1, 1],
        '"': [7],
        '<s>': [0],
        '<|x|>a': [13, 2],
        'A': [17],
        '\\': [9],
        'a  b': [2, 16, 3],
        'ab': [4],
        'abab': [4, 4],
        'abc': [5],
        'abd': [4, -1],
        'd': [-1],
        'ddab': [-1, -1, 4],
        'q': [10],
        'zz': [-1, -1],
        'Ãx': [12, -1, -1],
        'à': [12, -1],
        'é': [11]},
 3: {'\t\r': [8],
     '\n\n': [1, 1],
     '"': [7],
     '<s>': [0],
     '<|x|>a': [13, 2],
     'A': [17],
     '\\': [9],
     'a  b': [2, 16, 3],
     'ab': [4],
     'abab': [4, 4],
     'abc': [5],
     'abd': [4, 3],
     'd': [3],
     'ddab': [3, 3, 4],
     'q': [10],
     'zz': [3, 3],
     'Ãx': [12, 3, 3],
     'à': [12, 3],
     'é': [11]}}


@pytest.mark.parametrize("unk_id", list(LLAMA_CPP))
def test_matches_llama_cpp(unk_id):
    model = RWKV(TOKENS, unk_id)
    wrong = [(text, ids, model.tokenize(text)) for text, ids in LLAMA_CPP[unk_id].items() if model.tokenize(text) != ids]
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


@pytest.mark.parametrize("unk_id", list(LLAMA_CPP))
def test_loaded_from_a_gguf_file(tmp_path, unk_id):
    """The same vocabulary written as the GGUF llama.cpp read, through polytok.load."""
    gguf = pytest.importorskip("gguf")
    import polytok

    path = tmp_path / "rwkv.gguf"
    writer = gguf.GGUFWriter(str(path), "rwkv6")
    writer.add_tokenizer_model("rwkv")
    writer.add_token_list(TOKENS)
    writer.add_token_types([3] + [1] * (len(TOKENS) - 1))
    if unk_id is not None:
        writer.add_unk_token_id(unk_id)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.close()
    tok = polytok.load(path)
    for text, ids in LLAMA_CPP[unk_id].items():
        assert tok.encode(text, add_special=True, special="text") == ids, text
