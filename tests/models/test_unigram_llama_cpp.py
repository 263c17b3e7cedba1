"""llama.cpp's UGM (T5-style unigram) as `Unigram` options plus `Precompiled(match="longest")`.

Expected ids come from llama.cpp only (llama-cpp-python 0.3.36):

* `LLAMA_CPP` (tests/golden/gguf/models/unigram.json): tools/gen_llama_model_goldens.py
  writes the vocabulary `VOCAB` four times as a GGUF (`write_gguf`: gguf-py, model
  ``t5``, unknown_token_id 0, the precompiled charsmap of ggml-vocab-nomic-bert-moe,
  each combination of add_space_prefix / remove_extra_whitespaces) and runs each of
  `TEXTS` through ``llama_cpp.Llama(vocab_only=True).tokenize(text, add_bos=False,
  special=False)``. No text contains a USER_DEFINED token's text, so llama.cpp's
  special-token partition leaves it whole.
* the real ggml-vocab-nomic-bert-moe against the frozen goldens of
  tests/golden/gguf (all qualifying rows matched when this was written).
"""

from __future__ import annotations

import struct

import pytest

from polytok.formats.gguf_keys import Tokenizer as Keys
from polytok.models.unigram import Unigram
from polytok.normalizers.precompiled import Precompiled

from ._llama_goldens import synthetic_ids, vocabulary
from ._llama_goldens import write_gguf as write_vocab_gguf

NORMAL, UNKNOWN, CONTROL, USER, UNUSED, BYTE = 1, 2, 3, 4, 5, 6  # GGUF token types

VOCAB = [("<unk>", 0.0, UNKNOWN), ("<s>", 0.0, CONTROL), ("</s>", 0.0, CONTROL), ("<0x0A>", -100.0, BYTE),
         ("▁", -2.0, NORMAL), ("a", -3.0, NORMAL), ("b", -3.0, NORMAL), ("c", -3.0, NORMAL),
         ("ab", -5.5, NORMAL), ("▁a", -4.0, NORMAL), ("abc", -9.0, NORMAL), ("x", -3.0, NORMAL),
         ("y", -3.0, NORMAL), ("xy", 10.0, CONTROL), ("z", -3.0, NORMAL), ("▁zz", -50.0, USER),
         ("ﬁx", -1.0, USER), ("f", -3.0, NORMAL), ("i", -3.0, NORMAL), ("fi", -4.0, NORMAL), ("u", -3.0, NORMAL),
         ("uu", -1.0, UNUSED), ("q", -20.0, NORMAL), ("▁k", -15.0, NORMAL), ("▁m", -40.0, UNUSED)]

TEXTS = ["ab", "abc", "a b", "xy", "zz", "zzz", "uu", "QQ", "aQQb", "QaQ", "k", " a", "a  b  ", "  ", "\ufb01y",
         "\ufb01", "\uff21\uff42", "a\u3000b", "\uff76\uff9e", "a\tb", "q", "\xa0a", "m", "zz zz"]
# variant label -> (add_space_prefix, remove_extra_whitespaces)
FLAGS = {f"add_space_prefix={a} remove_extra_whitespaces={r}": (a, r) for a, r in
         [(True, False), (False, False), (False, True), (True, True)]}
VARIANTS = list(FLAGS)
# (add_space_prefix, remove_extra_whitespaces) -> text -> llama.cpp's ids
LLAMA_CPP = {FLAGS[label]: ids for label, ids in synthetic_ids("unigram").items()}


def write_gguf(path, variant, charsmap=None):
    """`VOCAB` as the GGUF llama.cpp tokenized (tools/gen_llama_model_goldens.py): model t5, the
    precompiled charsmap of ggml-vocab-nomic-bert-moe (`nomic_charsmap`), the variant's flags."""
    add_prefix, remove_extra = FLAGS[variant]
    return write_vocab_gguf(path, "t5", "t5", [piece for piece, _, _ in VOCAB], [kind for _, _, kind in VOCAB],
                            scores=[score for _, score, _ in VOCAB], unk_id=0,
                            flags={Keys.ADD_PREFIX: add_prefix, Keys.REMOVE_EXTRA_WS: remove_extra},
                            charsmap=nomic_charsmap() if charsmap is None else charsmap)


def nomic_charsmap(kv=None):
    """The precompiled charsmap of ggml-vocab-nomic-bert-moe (the GGUF stores it as int8 or uint8)."""
    kv = vocabulary("nomic-bert-moe") if kv is None else kv
    return bytes(b & 0xFF for b in kv[Keys.PRECOMPILED_CHARSMAP])


def float32(x):
    return struct.unpack("<f", struct.pack("<f", x))[0]


def llama_unigram(vocab, unk_id=0, **changes):
    """`Unigram` configured as llama.cpp's UGM session (what the GGUF reader builds)."""
    kinds = [kind for _, _, kind in vocab]
    options = dict(matchable=[kind in (NORMAL, USER, UNUSED) for kind in kinds],
                   zero_score=[kind == USER for kind in kinds],
                   unk_score=float32(min(score for _, score, kind in vocab if kind == NORMAL) - 10.0),
                   unknown_runs="collapse")
    options.update(changes)
    return Unigram([(piece, score) for piece, score, _ in vocab], unk_id, **options)


def llama_normalizer(blob, vocab, add_space_prefix, remove_extra_whitespaces):
    return Precompiled(blob, match="longest", passthrough=[piece for piece, _, kind in vocab if kind == USER],
                       add_space_prefix=add_space_prefix, remove_extra_whitespaces=remove_extra_whitespaces)


@pytest.fixture(scope="module")
def nomic():
    return vocabulary("nomic-bert-moe"), Keys


@pytest.fixture(scope="module")
def charsmap(nomic):
    return nomic_charsmap(nomic[0])


def encode(blob, flags, text, **changes):
    normalizer = llama_normalizer(blob, VOCAB, *flags)
    return llama_unigram(VOCAB, **changes).tokenize(normalizer.normalize(text)) if text else []


@pytest.mark.parametrize("flags", FLAGS.values())
def test_synthetic_vocabulary_matches_llama_cpp(charsmap, flags):
    wrong = [(text, LLAMA_CPP[flags][text], encode(charsmap, flags, text)) for text in TEXTS
             if encode(charsmap, flags, text) != LLAMA_CPP[flags][text]]
    assert not wrong


def test_options_that_the_recorded_ids_pin(charsmap):
    flags = (True, False)
    # ▁m is UNUSED at -40: an unknown (min NORMAL score - 10 = -30) beats it; HF's min over all scores would not.
    assert encode(charsmap, flags, "m") == LLAMA_CPP[flags]["m"] == [4, 0]
    # CONTROL xy (score 10) is never matched.
    assert encode(charsmap, flags, "xy") == LLAMA_CPP[flags]["xy"] == [4, 11, 12]
    # USER_DEFINED ▁zz scores 0, not -50.
    assert encode(charsmap, flags, "zz") == LLAMA_CPP[flags]["zz"] == [15]
    # a run of unknowns is one unk id.
    assert encode(charsmap, flags, "aQQb") == LLAMA_CPP[flags]["aQQb"] == [9, 0, 6]


def test_user_defined_prefix_bypasses_the_charsmap(charsmap):
    normalizer = llama_normalizer(charsmap, VOCAB, True, False)
    assert normalizer.normalize("\ufb01y") == "\u2581\ufb01y"  # the walk along user token ﬁx stops after ﬁ
    assert normalizer.normalize("\ufb01") == "\u2581\ufb01"
    plain = llama_normalizer(charsmap, [], True, False)
    assert plain.normalize("\ufb01y") == "\u2581fiy"


@pytest.mark.parametrize("flags, expected", [((True, False), "\u2581\u2581a\u2581\u2581b\u2581"),
                                             ((False, False), "\u2581a\u2581\u2581b\u2581"),
                                             ((False, True), "\u2581a\u2581b"), ((True, True), "\u2581a\u2581b")])
def test_space_rules(charsmap, flags, expected):
    assert llama_normalizer(charsmap, VOCAB, *flags).normalize(" a  b ") == expected


@pytest.mark.parametrize("flags", FLAGS.values())
def test_aligned_path_gives_the_same_text(charsmap, flags):
    from polytok.normalized import NormalizedString

    normalizer = llama_normalizer(charsmap, VOCAB, *flags)
    for text in [*TEXTS, " a  b ", "\uff21\u3000\u00e9 "]:
        ns = NormalizedString.from_original(text)
        normalizer.normalize_aligned(ns)
        assert ns.text == normalizer.normalize(text) and len(ns.align) == len(ns.text)


def test_empty_charsmap_keeps_text():
    assert Precompiled(b"", match="longest", add_space_prefix=True).normalize("\uff21 b") == "\u2581\uff21\u2581b"


def test_unknown_without_unk_id_is_null():
    assert llama_unigram(VOCAB, unk_id=None).tokenize("QQa") == [-1, 5]


def test_real_vocabulary_matches_llama_cpp_goldens(nomic, charsmap):
    from ._llama_goldens import plain_rows

    kv, keys = nomic
    vocab = list(zip(kv[keys.LIST], kv[keys.SCORES], kv[keys.TOKEN_TYPE]))
    model = llama_unigram(vocab, kv[keys.UNK_ID])
    normalizer = llama_normalizer(charsmap, vocab, kv[keys.ADD_PREFIX], kv[keys.REMOVE_EXTRA_WS])
    rows = plain_rows("nomic-bert-moe", kv)
    assert len(rows) > 200
    wrong = [(text, ids) for text, ids in rows if (model.tokenize(normalizer.normalize(text)) if text else []) != ids]
    assert not wrong, wrong[:3]


# gguf-py packs the ~240 kB charsmap a byte at a time (~1.5 s a file): one variant runs by default.
@pytest.mark.parametrize("label", [VARIANTS[0], *(pytest.param(v, marks=pytest.mark.slow) for v in VARIANTS[1:])])
def test_loaded_from_a_gguf_file(tmp_path, charsmap, label):
    """The same vocabulary written as the GGUF llama.cpp read, through polytok.load (no BOS/EOS, as recorded)."""
    pytest.importorskip("gguf")
    import polytok

    tok = polytok.load(write_gguf(tmp_path / "t5.gguf", label, charsmap))
    for text in TEXTS:
        assert tok.encode(text, add_special=False, special="text") == LLAMA_CPP[FLAGS[label]][text], text
