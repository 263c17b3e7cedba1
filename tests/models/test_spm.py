"""SPM (score-merge BPE) vs llama.cpp's SPM session (llama-cpp-python 0.3.36).

llama.cpp only tokenizes whole GGUF files, so the expected ids are frozen in
tests/golden/gguf/models/spm.json by tools/gen_llama_model_goldens.py: it writes the
vocabulary `VOCAB` as a GGUF (`write_gguf`: gguf-py, model ``llama``, add_space_prefix
default true) and runs each of `TEXTS` through
``llama_cpp.Llama(vocab_only=True).tokenize(text, add_bos=False, special=False)``.
The model is fed what llama.cpp's SPM driver feeds its session: ``" " + text``
with every space replaced by ``"▁"``. (The same comparison over the edge-case
texts on the real vocabularies ggml-vocab-llama-spm / phi-3 / baichuan matched
726 of 726; those files are covered by the GGUF golden tables.)

Token types do not matter to the model: ``▁a`` is USER_DEFINED, ``<x>`` CONTROL,
``uu`` UNUSED, and plain text still merges into them (llama.cpp's partition does
not carve USER_DEFINED ``▁a`` here because the text has no ``▁``).
"""

from __future__ import annotations

import pytest

from polytok.errors import EncodeError, FormatError
from polytok.models.spm import SPM
from polytok.normalizers.prepend import Prepend
from polytok.normalizers.replace import Replace

from ._llama_goldens import synthetic_ids
from ._llama_goldens import write_gguf as write_vocab_gguf

NORMAL, UNKNOWN, CONTROL, USER, UNUSED, BYTE = 1, 2, 3, 4, 5, 6  # GGUF token types
VOCAB = [("<unk>", 0.0, UNKNOWN), ("<s>", 0.0, CONTROL), ("</s>", 0.0, CONTROL), ("<0xC3>", 0.0, BYTE),
         ("<0xA9>", 0.0, BYTE), ("<0x21>", 0.0, BYTE), ("<0x0A>", 0.0, BYTE), ("▁", -1.0, NORMAL),
         ("a", -2.0, NORMAL), ("b", -2.0, NORMAL), ("c", -2.0, NORMAL), ("d", -2.0, NORMAL),
         ("ab", -3.0, NORMAL), ("bc", -3.0, NORMAL), ("cd", -2.5, NORMAL), ("abc", -4.0, NORMAL),
         ("<", -2.0, NORMAL), ("x", -2.0, NORMAL), (">", -2.0, NORMAL), ("<x", -3.0, NORMAL),
         ("<x>", 0.0, CONTROL), ("e", -2.0, NORMAL), ("f", -2.0, NORMAL), ("g", -2.0, NORMAL),
         ("fg", -5.0, NORMAL), ("ef", 5.0, NORMAL), ("aa", -1.5, NORMAL), ("aaa", -1.0, NORMAL),
         ("▁a", -1.2, USER), ("u", -2.0, NORMAL), ("uu", -1.0, UNUSED), ("!", -2.0, NORMAL),
         ("▁▁", -0.5, NORMAL), ("i", -2.0, NORMAL), ("j", -2.0, NORMAL), ("k", -2.0, NORMAL),
         ("ij", -3.0, NORMAL), ("jk", -3.0, NORMAL), ("p", -2.0, NORMAL), ("q", -2.0, NORMAL),
         ("r", -2.0, NORMAL), ("s", -2.0, NORMAL), ("pq", -1.0, NORMAL), ("rs", -2.0, NORMAL),
         ("pqr", -4.0, NORMAL), ("spq", -4.0, NORMAL)]

TEXTS = ["abc", "abcd", "bcd", "abab", "<x>", "a<x>b", "efg", "aa", "aaa", "aaaa", "aaaaa", "\u00e9", "a\u00e9b",
         "!", "a!", "uu", "uuu", " a", "  a", "a  b", "ab cd", "   ", "<x", "x>", "\u00e9\u00e9", "ijk", "jkij",
         "ijkjk", "pqrs", "rspq", "pqr", "spq"]
VARIANTS = ["default"]
# llama.cpp's ids for each text (see the module docstring for how they were recorded).
LLAMA_CPP = synthetic_ids("spm").get("default", {})


def write_gguf(path, variant="default"):
    """`VOCAB` as the GGUF llama.cpp tokenized (tools/gen_llama_model_goldens.py)."""
    return write_vocab_gguf(path, "llama", "llama", [piece for piece, _, _ in VOCAB],
                            [kind for _, _, kind in VOCAB], scores=[score for _, score, _ in VOCAB])


def model():
    return SPM([(piece, score) for piece, score, _ in VOCAB])


def spm_input(text):
    return "\u2581" + text.replace(" ", "\u2581")


def test_driver_whitespace_is_replace_then_prepend():
    # llama.cpp's SPM driver: " " + fragment, then every " " -> "▁" (add_space_prefix true).
    normalizers = (Replace(" ", "\u2581"), Prepend("\u2581"))
    for text in [*TEXTS, " ", "  x  ", "\t a"]:
        normalized = text
        for normalizer in normalizers:
            normalized = normalizer.normalize(normalized)
        assert normalized == spm_input(text)


@pytest.mark.parametrize("text", TEXTS)
def test_matches_llama_cpp(text):
    ours = model().tokenize(spm_input(text))
    expected = LLAMA_CPP[text]
    assert ours == expected, [(VOCAB[i][0], VOCAB[j][0]) for i, j in zip(ours, expected)]


def test_score_order_then_leftmost_pair():
    ids = model().tokenize(spm_input("ijk"))  # ij and jk tie at -3: the left pair merges
    assert [VOCAB[i][0] for i in ids] == ["\u2581", "ij", "k"]
    ids = model().tokenize(spm_input("bcd"))  # cd (-2.5) beats bc (-3)
    assert [VOCAB[i][0] for i in ids] == ["\u2581", "b", "cd"]


def test_byte_fallback_spells_each_byte_over_the_whole_character():
    m = model()
    assert m.tokenize_spans("a\u00e9b") == [(8, 0, 1), (3, 1, 2), (4, 1, 2), (9, 2, 3)]


def test_missing_byte_token_raises():
    # llama.cpp throws std::out_of_range (the process aborts) when neither <0xHH> nor the byte exists.
    with pytest.raises(EncodeError, match="0x7A"):
        model().tokenize("z")


def test_empty_piece_and_vocabulary():
    assert model().tokenize("") == []
    with pytest.raises(FormatError):
        SPM([])


def test_lookups():
    m = model()
    assert m.vocab_size() == len(VOCAB)
    assert m.token_to_id("<x>") == 20 and m.id_to_token(20) == "<x>" and m.id_to_token(len(VOCAB)) is None
    assert m.get_vocab()["\u2581\u2581"] == 32
    assert m.token_value(3, "\u00e9", 0, 1) == "<0xC3>"


@pytest.mark.parametrize("name", ["llama-spm", "phi-3", "baichuan"])
def test_real_vocabularies_match_llama_cpp_goldens(name):
    from ._llama_goldens import Keys, plain_rows, vocabulary

    kv = vocabulary(name)
    m = SPM(list(zip(kv[Keys.LIST], kv[Keys.SCORES])))
    rows = plain_rows(name, kv)
    assert len(rows) > 200
    wrong = [(text, ids) for text, ids in rows if m.tokenize(spm_input(text) if text else "") != ids]
    assert not wrong, wrong[:3]


def test_loaded_from_a_gguf_file(tmp_path):
    """The same vocabulary written as the GGUF llama.cpp read, through polytok.load (no BOS, as recorded)."""
    pytest.importorskip("gguf")
    import polytok

    tok = polytok.load(write_gguf(tmp_path / "spm.gguf"))
    for text in TEXTS:
        assert tok.encode(text, add_special=False, special="text") == LLAMA_CPP[text], text
