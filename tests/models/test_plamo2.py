"""PLaMo-2 model vs llama.cpp's PLaMo-2 session (llama-cpp-python 0.3.36).

llama.cpp ships no PLaMo-2 vocabulary file, so tools/gen_llama_model_goldens.py writes
`VOCAB` (``<unk>``, the 256 ``<0xHH>`` BYTE tokens, then `PIECES`) as a synthetic GGUF
(`write_gguf`: gguf-py, model ``plamo2``) and runs each of `TEXTS` through
``llama_cpp.Llama(vocab_only=True).tokenize(text, add_bos=False, special=False)``;
`LLAMA_CPP` holds those ids, read from tests/golden/gguf/models/plamo2.json. Texts holding
the USER_DEFINED ``é`` were left out (llama.cpp's special-token partition carves it before
the model). GGUF stores scores as float32, so the model gets them rounded to float32 as
the reader does.
"""

from __future__ import annotations

import struct

import pytest

from polytok.errors import FormatError
from polytok.models.plamo2 import PLaMo2

from ._llama_goldens import synthetic_ids
from ._llama_goldens import write_gguf as write_vocab_gguf

NAN = float("nan")

NORMAL, UNKNOWN, CONTROL, USER, UNUSED, BYTE = 1, 2, 3, 4, 5, 6  # GGUF token types
PIECES = [("a", -1.0, NORMAL), ("b", -1.0, NORMAL), ("ab", -1.5, NORMAL), ("abc", -2.0, NORMAL), ("c", -1.0, NORMAL),
          ("bc", -0.9, NORMAL), ("xyz", -2.00004, NORMAL), ("xy", -1.00002, NORMAL), ("z", -1.0, NORMAL),
          ("<s>", 0.0, CONTROL), ("日本", -3.0, NORMAL), ("本", -2.0, NORMAL), ("q", NAN, NORMAL),
          ("qq", -1.0, NORMAL), ("é", -1.0, USER), ("u", -1000.0, NORMAL), ("w", -0.00005, NORMAL),
          ("ww", -0.00015, NORMAL), ("m", -0.00006, NORMAL), ("mm", -0.00015, NORMAL), ("h", -0.03125, NORMAL),
          ("hh", -0.0626, NORMAL)]
VOCAB = [("<unk>", 0.0, UNKNOWN)] + [(f"<0x{b:02X}>", 0.0, BYTE) for b in range(256)] + PIECES

TEXTS = ["<s>", "ab", "abc", "abcabc", "a\ufeff", "bca", "mm", "mmm", "q", "qq", "qqq", "ww", "www", "wwww", "xyz",
         "xyzz", "\u03a9", "\u65e5", "\u65e5\u672c", "\u672c\u65e5", "\ufeffab", "\U0001f600", "uuu", "hh", "hhh"]
VARIANTS = ["default"]
# text -> llama.cpp's ids
LLAMA_CPP = synthetic_ids("plamo2").get("default", {})


def write_gguf(path, variant="default"):
    """`VOCAB` as the GGUF llama.cpp tokenized (tools/gen_llama_model_goldens.py)."""
    return write_vocab_gguf(path, "plamo2", "plamo2", [piece for piece, _, _ in VOCAB], [kind for _, _, kind in VOCAB],
                            scores=[score for _, score, _ in VOCAB])


def float32(x):
    return struct.unpack("<f", struct.pack("<f", x))[0]


def model(vocab=VOCAB):
    return PLaMo2([(piece, float32(score)) for piece, score, _ in vocab], [kind == BYTE for _, _, kind in vocab])


@pytest.mark.parametrize("text", TEXTS)
def test_matches_llama_cpp(text):
    assert model().tokenize(text) == LLAMA_CPP[text]


def test_score_equal_to_the_unknown_sentinel_stops_the_row_scan():
    # u scores -1000.0, i.e. exactly -10,000,000 once scaled: llama.cpp's table takes its row
    # for the unknown sentinel and stops looking, so the middle u falls back to its byte.
    assert model().tokenize("uuu") == LLAMA_CPP["uuu"] == [272, 118, 272]


def test_scores_round_half_away_from_zero_in_float32():
    # w: float32(-0.00005) * 1e4 = -0.49999998 -> 0; ww: -1.5000001 -> -2, so w w wins.
    assert model().tokenize("ww") == LLAMA_CPP["ww"] == [273, 273]
    # m: -0.6 -> -1 (not 0) and mm: -1.5 -> -2 tie with m m, and ties keep the longer mm.
    assert model().tokenize("mm") == LLAMA_CPP["mm"] == [276]
    # h: -0.03125 * 1e4 is exactly -312.5 -> -313 (half away from zero; -312 when halves go up or to even),
    # so h h = -626 ties hh (-626.00002 -> -626) and the longer hh is kept.
    assert model().tokenize("hh") == LLAMA_CPP["hh"] == [278]


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
    pytest.importorskip("gguf")
    import polytok

    tok = polytok.load(write_gguf(tmp_path / "plamo2.gguf"))
    for text in TEXTS:
        assert tok.encode(text, add_special=True, special="text") == LLAMA_CPP[text], text
