"""PLaMo-2 model vs llama.cpp's PLaMo-2 session (llama-cpp-python 0.3.36).

llama.cpp ships no PLaMo-2 vocabulary file, so `VOCAB` (``<unk>``, the 256
``<0xHH>`` BYTE tokens, then `PIECES`) was written as a synthetic GGUF (gguf-py
0.19.0, model ``plamo2``) and each text run through
``llama_cpp.Llama(vocab_only=True).tokenize(text, add_bos=False, special=False)``;
`LLAMA_CPP` holds those ids. Texts holding the USER_DEFINED ``é`` were left out
(llama.cpp's special-token partition carves it before the model). GGUF stores
scores as float32, so the model gets them rounded to float32 as the reader does.
"""

from __future__ import annotations

import struct

import pytest

from polytok.errors import FormatError
from polytok.models.plamo2 import PLaMo2

NAN = float("nan")

NORMAL, UNKNOWN, CONTROL, USER, UNUSED, BYTE = 1, 2, 3, 4, 5, 6  # GGUF token types
PIECES = [("a", -1.0, NORMAL), ("b", -1.0, NORMAL), ("ab", -1.5, NORMAL), ("abc", -2.0, NORMAL), ("c", -1.0, NORMAL),
          ("bc", -0.9, NORMAL), ("xyz", -2.00004, NORMAL), ("xy", -1.00002, NORMAL), ("z", -1.0, NORMAL),
          ("<s>", 0.0, CONTROL), ("日本", -3.0, NORMAL), ("本", -2.0, NORMAL), ("q", NAN, NORMAL),
          ("qq", -1.0, NORMAL), ("é", -1.0, USER), ("u", -1000.0, NORMAL), ("w", -0.00005, NORMAL), ("ww", -0.00015, NORMAL), ("m", -0.00006, NORMAL),
          ("mm", -0.00015, NORMAL)]
VOCAB = [("<unk>", 0.0, UNKNOWN)] + [(f"<0x{b:02X}>", 0.0, BYTE) for b in range(256)] + PIECES

# text -> llama.cpp's ids
LLAMA_CPP = {'<s>': [266],
 'ab': [259],
 'abc': [257, 262],
 'abcabc': [257, 262, 257, 262],
 'a\ufeff': [257, 240, 188, 192],
 'bca': [262, 257],
 'mm': [276],
 'mmm': [276, 275],
 'q': [114],
 'qq': [270],
 'qqq': [270, 114],
 'ww': [273, 273],
 'www': [273, 273, 273],
 'wwww': [273, 273, 273, 273],
 'xyz': [263],
 'xyzz': [263, 265],
 'Ω': [207, 170],
 '日': [231, 152, 166],
 '日本': [267],
 '本日': [268, 231, 152, 166],
 '\ufeffab': [259],
 '😀': [241, 160, 153, 129]}


def float32(x):
    return struct.unpack("<f", struct.pack("<f", x))[0]


def model(vocab=VOCAB):
    return PLaMo2([(piece, float32(score)) for piece, score, _ in vocab], [kind == BYTE for _, _, kind in vocab])


@pytest.mark.parametrize("text", sorted(LLAMA_CPP))
def test_matches_llama_cpp(text):
    assert model().tokenize(text) == LLAMA_CPP[text]


def test_score_equal_to_the_unknown_sentinel_stops_the_row_scan():
    # u scores -1000.0, i.e. exactly -10,000,000 once scaled: llama.cpp's table takes its row
    # for the unknown sentinel and stops looking, so the middle u falls back to its byte.
    assert model().tokenize("uuu") == [272, 118, 272]  # recorded from llama.cpp


def test_scores_round_half_away_from_zero_in_float32():
    # w: float32(-0.00005) * 1e4 = -0.49999998 -> 0; ww: -1.5000001 -> -2, so w w wins.
    assert model().tokenize("ww") == [273, 273]
    # m: -0.6 -> -1 (not 0) and mm: -1.5 -> -2 tie with m m, and ties keep the longer mm.
    assert model().tokenize("mm") == LLAMA_CPP["mm"] == [276]


def test_unknown_spans_its_character():
    assert model().tokenize_spans("a\u03a9") == [(257, 0, 1), (207, 1, 2), (170, 1, 2)]


def test_missing_byte_token_fails_to_load():
    with pytest.raises(FormatError, match="0x41"):
        model([entry for entry in VOCAB if entry[0] != "<0x41>"])
    with pytest.raises(FormatError, match="0x00"):
        model(VOCAB[1:])  # <0x00> at id 0 counts as unset


def test_lookups():
    m = model()
    assert m.vocab_size() == len(VOCAB) and m.token_to_id("abc") == 260 and m.id_to_token(260) == "abc"
    assert m.get_vocab()["<0x41>"] == 66 and m.id_to_token(len(VOCAB)) is None


def test_loaded_from_a_gguf_file(tmp_path):
    """The same vocabulary written as the GGUF llama.cpp read, through polytok.load."""
    gguf = pytest.importorskip("gguf")
    import polytok

    path = tmp_path / "plamo2.gguf"
    writer = gguf.GGUFWriter(str(path), "plamo2")
    writer.add_tokenizer_model("plamo2")
    writer.add_token_list([piece for piece, _, _ in VOCAB])
    writer.add_token_scores([score for _, score, _ in VOCAB])
    writer.add_token_types([kind for _, _, kind in VOCAB])
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.close()
    tok = polytok.load(path)
    for text, ids in LLAMA_CPP.items():
        assert tok.encode(text, add_special=True, special="text") == ids, text
