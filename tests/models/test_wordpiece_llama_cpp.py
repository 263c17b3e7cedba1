"""llama.cpp's WordPiece (WPM): `LlamaWordPieceSplit` then `WordPiece(continuing_subword_prefix="")`.

Expected ids come from llama.cpp only (llama-cpp-python 0.3.36):

* `LLAMA_CPP` (tests/golden/gguf/models/wordpiece.json): tools/gen_llama_model_goldens.py
  writes `TOKENS` as a GGUF (`write_gguf`: gguf-py, model ``bert``, the first four
  CONTROL/UNKNOWN and the PAD/UNK/CLS/SEP ids, the rest NORMAL) once per combination of
  ``tokenizer.ggml.normalizer.lowercase`` / ``strip_accents``, and runs each of `TEXTS`
  through ``llama_cpp.Llama(vocab_only=True).tokenize(text, add_bos=False,
  special=False)``;
* the real ggml-vocab-bert-bge against the frozen goldens of tests/golden/gguf.
"""

from __future__ import annotations

import sys

import pytest

from polytok.formats.gguf_keys import Tokenizer as Keys
from polytok.models.wordpiece import WordPiece
from polytok.normalized import NormalizedString
from polytok.pre_tokenizers.llama_wordpiece_split import LlamaWordPieceSplit, first_of_nfd

from ._llama_goldens import synthetic_ids
from ._llama_goldens import write_gguf as write_vocab_gguf

NORMAL, UNKNOWN, CONTROL = 1, 2, 3  # GGUF token types

TOKENS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "▁a", "▁b", "b", "▁ab", "c", "▁é", "▁e", "▁A", "▁日", "▁本", "▁€", "€",
          "▁x", "y", "▁,", "▁$", "▁\u00b4", "▁Ω", "▁ω", "▁\u0301", "▁x€", "\n", "▁abc", "bc", "▁\u3000"]

TEXTS = ["A", "a\tb", "a b", "a$b", "a,b", "ab", "abc", "abc,abc", "a\u200bb", "a\u2581b", "a\u3000b", "a\U0002b820b",
         "a\U0002b920b", "e\u0301", "x \u20acy", "xq", "xq ab", "x\u0301y", "x\u20ac", "\xa0a", "\xb4", "\xc9a", "\xe9",
         "\u03a9", "\u65e5\u672c", "\ufb01"]
# variant label -> (lowercase, strip_accents)
FLAGS = {f"lowercase={lower} strip_accents={strip}": (lower, strip) for lower, strip in
         [(False, False), (False, True), (True, False), (True, True)]}
VARIANTS = list(FLAGS)
# (lowercase, strip_accents) -> text -> llama.cpp's ids
LLAMA_CPP = {FLAGS[label]: ids for label, ids in synthetic_ids("wordpiece").items()}


def write_gguf(path, variant):
    """`TOKENS` as the GGUF llama.cpp tokenized (tools/gen_llama_model_goldens.py)."""
    lowercase, strip_accents = FLAGS[variant]
    types = [CONTROL, UNKNOWN, CONTROL, CONTROL] + [NORMAL] * (len(TOKENS) - 4)
    ids = {Keys.PAD_ID: TOKENS.index("[PAD]"), Keys.BOS_ID: TOKENS.index("[CLS]"), Keys.SEP_ID: TOKENS.index("[SEP]")}
    return write_vocab_gguf(path, "bert", "bert", TOKENS, types, unk_id=TOKENS.index("[UNK]"), ids=ids,
                            flags={Keys.NORMALIZER_LOWERCASE: lowercase, Keys.NORMALIZER_STRIP_ACCENTS: strip_accents})


def llama_wordpiece(tokens, unk_token="[UNK]"):
    return WordPiece({token: index for index, token in enumerate(tokens)}, unk_token, "", sys.maxsize)


def encode(pre, model, text):
    return [token for word in pre.pre_tokenize(text) for token in model.tokenize(word)]


@pytest.mark.parametrize("flags", FLAGS.values())
def test_synthetic_vocabulary_matches_llama_cpp(flags):
    pre, model = LlamaWordPieceSplit(lowercase=flags[0], strip_accents=flags[1]), llama_wordpiece(TOKENS)
    wrong = [(text, LLAMA_CPP[flags][text], encode(pre, model, text)) for text in TEXTS
             if encode(pre, model, text) != LLAMA_CPP[flags][text]]
    assert not wrong


def test_rules_pinned_by_the_recorded_ids():
    pre, model = LlamaWordPieceSplit(), llama_wordpiece(TOKENS)
    recorded = LLAMA_CPP[(True, True)]
    assert encode(pre, model, "x \u20acy") == recorded["x \u20acy"] == [16, 14, 17]  # € is not split off
    assert encode(pre, model, "a\u2581b") == recorded["a\u2581b"] == [4, 5]  # ▁b matches inside a word
    assert encode(pre, model, "xq ab") == recorded["xq ab"] == [1, 7]  # one unk for the whole word


def test_first_code_point_of_nfd():
    # rows of llama.cpp's unicode_ranges_nfd
    assert first_of_nfd(0xE9) == 0x65 and first_of_nfd(0x1E09) == 0x63 and first_of_nfd(0x41) == 0x41


def test_aligned_words_keep_original_offsets():
    # llama.cpp reports no offsets: this pins polytok's own rule (the prefix takes the first character's span).
    ns = NormalizedString.from_original("Ab, c")
    pieces = LlamaWordPieceSplit().pre_tokenize_aligned(ns)
    assert [p.text for p in pieces] == ["\u2581ab", "\u2581,", "\u2581c"]
    assert [p.align for p in pieces] == [[(0, 1), (0, 1), (1, 2)], [(2, 3), (2, 3)], [(4, 5), (4, 5)]]


def test_real_vocabulary_matches_llama_cpp_goldens():
    from ._llama_goldens import Keys, plain_rows, vocabulary

    kv = vocabulary("bert-bge")
    tokens = kv[Keys.LIST]
    pre, model = LlamaWordPieceSplit(), llama_wordpiece(tokens, tokens[kv[Keys.UNK_ID]])
    rows = plain_rows("bert-bge", kv)
    assert len(rows) > 200
    wrong = [(text, ids) for text, ids in rows if encode(pre, model, text) != ids]
    assert not wrong, wrong[:3]


@pytest.mark.parametrize("label", VARIANTS)
def test_loaded_from_a_gguf_file(tmp_path, label):
    """The same vocabulary written as the GGUF llama.cpp read, through polytok.load (no CLS/SEP, as recorded)."""
    pytest.importorskip("gguf")
    import polytok

    tok = polytok.load(write_gguf(tmp_path / "bert.gguf", label))
    for text in TEXTS:
        assert tok.encode(text, add_special=False, special="text") == LLAMA_CPP[FLAGS[label]][text], text
