"""llama.cpp's WordPiece (WPM): `LlamaWordPieceSplit` then `WordPiece(continuing_subword_prefix="")`.

Expected ids come from llama.cpp only (llama-cpp-python 0.3.36):

* `LLAMA_CPP`: `TOKENS` written as a GGUF (gguf-py 0.19.0, model ``bert``, the
  first four CONTROL/UNKNOWN, the rest NORMAL) once per combination of
  ``tokenizer.ggml.normalizer.lowercase`` / ``strip_accents``, and each text run
  through ``llama_cpp.Llama(vocab_only=True).tokenize(text, add_bos=False,
  special=False)``;
* the real ggml-vocab-bert-bge against the frozen goldens of tests/golden/gguf.
"""

from __future__ import annotations

import sys

import pytest

from polytok.models.wordpiece import WordPiece
from polytok.normalized import NormalizedString
from polytok.pre_tokenizers.llama_wordpiece_split import LlamaWordPieceSplit, first_of_nfd

TOKENS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "▁a", "▁b", "b", "▁ab", "c", "▁é", "▁e", "▁A", "▁日", "▁本", "▁€", "€",
          "▁x", "y", "▁,", "▁$", "▁\u00b4", "▁Ω", "▁ω", "▁\u0301", "▁x€", "\n", "▁abc", "bc", "▁\u3000"]

# (lowercase, strip_accents) -> text -> llama.cpp's ids
LLAMA_CPP = {(False, False): {'A': [11],
                  'a\tb': [4, 5],
                  'a b': [4, 5],
                  'a$b': [4, 19, 5],
                  'a,b': [4, 18, 5],
                  'ab': [7],
                  'abc': [26],
                  'abc,abc': [26, 18, 26],
                  'a\u200bb': [7],
                  'a▁b': [4, 5],
                  'a\u3000b': [4, 5],
                  'a𫠠b': [1],
                  'a𫤠b': [4, 1, 5],
                  'é': [1],
                  'x €y': [16, 14, 17],
                  'xq': [1],
                  'xq ab': [1, 7],
                  'x́y': [1],
                  'x€': [24],
                  '\xa0a': [4],
                  '´': [20],
                  'Éa': [1],
                  'é': [9],
                  'Ω': [21],
                  '日本': [12, 13],
                  'ﬁ': [1]},
 (False, True): {'A': [11],
                 'a\tb': [4, 5],
                 'a b': [4, 5],
                 'a$b': [4, 19, 5],
                 'a,b': [4, 18, 5],
                 'ab': [7],
                 'abc': [26],
                 'abc,abc': [26, 18, 26],
                 'a\u200bb': [7],
                 'a▁b': [4, 5],
                 'a\u3000b': [4, 5],
                 'a𫠠b': [1],
                 'a𫤠b': [4, 1, 5],
                 'é': [10],
                 'x €y': [16, 14, 17],
                 'xq': [1],
                 'xq ab': [1, 7],
                 'x́y': [16, 17],
                 'x€': [24],
                 '\xa0a': [4],
                 '´': [20],
                 'Éa': [1],
                 'é': [10],
                 'Ω': [21],
                 '日本': [12, 13],
                 'ﬁ': [1]},
 (True, False): {'A': [4],
                 'a\tb': [4, 5],
                 'a b': [4, 5],
                 'a$b': [4, 19, 5],
                 'a,b': [4, 18, 5],
                 'ab': [7],
                 'abc': [26],
                 'abc,abc': [26, 18, 26],
                 'a\u200bb': [7],
                 'a▁b': [4, 5],
                 'a\u3000b': [4, 5],
                 'a𫠠b': [1],
                 'a𫤠b': [4, 1, 5],
                 'é': [1],
                 'x €y': [16, 14, 17],
                 'xq': [1],
                 'xq ab': [1, 7],
                 'x́y': [1],
                 'x€': [24],
                 '\xa0a': [4],
                 '´': [20],
                 'Éa': [1],
                 'é': [9],
                 'Ω': [22],
                 '日本': [12, 13],
                 'ﬁ': [1]},
 (True, True): {'A': [4],
                'a\tb': [4, 5],
                'a b': [4, 5],
                'a$b': [4, 19, 5],
                'a,b': [4, 18, 5],
                'ab': [7],
                'abc': [26],
                'abc,abc': [26, 18, 26],
                'a\u200bb': [7],
                'a▁b': [4, 5],
                'a\u3000b': [4, 5],
                'a𫠠b': [1],
                'a𫤠b': [4, 1, 5],
                'é': [10],
                'x €y': [16, 14, 17],
                'xq': [1],
                'xq ab': [1, 7],
                'x́y': [16, 17],
                'x€': [24],
                '\xa0a': [4],
                '´': [20],
                'Éa': [1],
                'é': [10],
                'Ω': [22],
                '日本': [12, 13],
                'ﬁ': [1]}}


def llama_wordpiece(tokens, unk_token="[UNK]"):
    return WordPiece({token: index for index, token in enumerate(tokens)}, unk_token, "", sys.maxsize)


def encode(pre, model, text):
    return [token for word in pre.pre_tokenize(text) for token in model.tokenize(word)]


@pytest.mark.parametrize("flags", list(LLAMA_CPP))
def test_synthetic_vocabulary_matches_llama_cpp(flags):
    pre, model = LlamaWordPieceSplit(lowercase=flags[0], strip_accents=flags[1]), llama_wordpiece(TOKENS)
    wrong = [(text, ids, encode(pre, model, text)) for text, ids in LLAMA_CPP[flags].items()
             if encode(pre, model, text) != ids]
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
