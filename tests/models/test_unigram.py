"""Unigram model vs tokenizers.models.Unigram (HF tokenizers 0.23.3): Viterbi ties, unk fusing, byte fallback."""

from __future__ import annotations

import json
import random

import pytest

from polytok.errors import EncodeError, FormatError
from polytok.models import Unigram, from_config
from polytok.models.unigram import serde_f64

from ._harness import (
    check_words,
    corpus_texts,
    edge_words,
    random_words,
    real_model,
    real_words,
    reference,
    reference_from_json,
)

tokenizers = pytest.importorskip("tokenizers")
HfUnigram = tokenizers.models.Unigram

DOC_VOCAB = [("<unk>", 0.0), ("a", 0.0), ("b", 0.0), ("c", 0.0), ("d", 0.0), ("cd", 1.0), ("ab", 2.0),
             ("abc", 5.0), ("abcd", 10.0)]


def both(vocab, unk_id=0, byte_fallback=False):
    return reference(HfUnigram(vocab, unk_id, byte_fallback)), Unigram(vocab, unk_id, byte_fallback)


def test_hf_doc_example():
    ref, ours = both(DOC_VOCAB)
    assert [ours.id_to_token(i) for i in ours.tokenize("abcdacdxx")] == ["abcd", "a", "cd", "<unk>"]
    check_words(ref, ours, ["abcdacdxx", "xxabcdxx", "dcba", "x", "aaxbbx"])


def test_ties_keep_the_first_offer():
    """'ab' scores exactly a + b: the strict '>' keeps whichever offer reached the end first."""
    vocab = [("<unk>", -20.0), ("a", -1.0), ("b", -1.0), ("ab", -2.0), ("c", -0.5), ("bc", -1.5), ("abc", -2.5)]
    ref, ours = both(vocab)
    assert ref.encode("ab").tokens == ["ab"]
    check_words(ref, ours, ["ab", "abc", "abab", "cab", "bcab", "abcabc"])


def test_unknown_runs_fuse_including_a_literal_unk_piece():
    vocab = [("<unk>", -1.0), ("a", -2.0), ("b", -2.0), ("<", -3.0), ("u", -3.0)]
    ref, ours = both(vocab)
    check_words(ref, ours, ["axyb", "xy", "a<unk>xb", "<unk><unk>", "<unk>", "日本a", "a🤗"])
    assert ours.tokenize_spans("axyb") == [(1, 0, 1), (0, 1, 3), (3 - 1, 3, 4)]


def test_byte_fallback_spans_the_whole_unknown_run():
    bytes_ = [(f"<0x{b:02X}>", -5.0) for b in range(256)]
    vocab = [("<unk>", 0.0), ("a", -1.0), ("b", -1.0)] + bytes_
    ref, ours = both(vocab, byte_fallback=True)
    check_words(ref, ours, ["aéb", "a日本b", "🤗", "a\n", "a<unk>éb"] + edge_words())
    assert ours.tokenize_spans("aéb")[1:3] == [(3 + 0xC3, 1, 2), (3 + 0xA9, 1, 2)]
    partial = [("<unk>", 0.0), ("a", -1.0), ("<0xC3>", -5.0)]
    check_words(*both(partial, byte_fallback=True), ["aé", "aÃ", "é"])


def test_token_strings_when_unk_id_is_a_byte_token():
    """Encoding.tokens: byte-fallback tokens show '<0xHH>' even when one of them is the unk id."""
    vocab = [("a", -1.0), ("<0x78>", -2.0), ("<0xC3>", -2.0), ("<0xA9>", -2.0), ("b", -1.0)]
    for fallback in (True, False):
        check_words(*both(vocab, unk_id=1, byte_fallback=fallback), ["axé", "x", "éa", "bxxb", "a<0x78>"])


def test_missing_unk_id_raises_only_when_an_unknown_node_is_taken():
    vocab = [("a", -1.0), ("ab", -1.0)]
    ref, ours = both(vocab, unk_id=None)
    assert ours.tokenize("ab") == [1]  # the unk offer for 'b' loses to 'ab': no error
    check_words(ref, ours, ["ab", "abab", "a"])
    with pytest.raises(Exception, match="unk_id"):
        ref.encode("ax")
    with pytest.raises(EncodeError, match="unk_id"):
        ours.tokenize("ax")


def test_positive_scores_can_prefer_unknown_nodes():
    """min_score - 10 can beat a real piece; a fused unknown run that spells a piece becomes that piece."""
    vocab = [("<unk>", 30.0), ("a", 30.0), ("b", 30.0), ("ab", 30.0), ("x", 45.0), ("yz", 30.0)]
    ref, ours = both(vocab)
    assert ref.encode("yz").ids == [5]  # two unknown nodes (20 + 20) beat 'yz' (30), then fuse into 'yz'
    check_words(ref, ours, ["ab", "abx", "xab", "aab", "yz", "ayzb", "yzyz"])


def test_unknown_penalty_is_ten():
    """unk(x) + b = (-5 - 10) + 9.5 loses to 'xb' = -5 by 0.5."""
    ref, ours = both([("<unk>", 0.0), ("xb", -5.0), ("b", 9.5)])
    assert ref.encode("xb").ids == [1]
    check_words(ref, ours, ["xb", "xbxb", "b"])


@pytest.mark.parametrize("seed", range(4))
def test_random_vocabularies(seed):
    rng = random.Random(seed)
    pieces = sorted({"".join(rng.choice("abc") for _ in range(rng.randint(1, 4))) for _ in range(25)})
    scores = [-float(rng.choice([1, 2, 2, 3, 4.5, 6])) for _ in pieces]
    vocab = [("<unk>", -9.0)] + list(zip(pieces, scores))
    check_words(*both(vocab), random_words(rng, "abcd", 120, 25))


def test_duplicate_pieces_map_to_the_last_id():
    vocab = [("<unk>", 0.0), ("a", -1.0), ("b", -2.0), ("a", -3.0)]
    ref, ours = both(vocab)
    assert ours.token_to_id("a") == 3 == ref.token_to_id("a")
    assert ours.id_to_token(1) == "a" == ref.id_to_token(1)
    assert ours.vocab_size() == 4 == ref.get_vocab_size(False)
    assert ours.get_vocab() == {"<unk>": 0, "a": 3, "b": 2}
    check_words(ref, ours, ["ab", "aab"])


def test_serde_float_reading():
    """HF's scores are serde_json's (not correctly rounded) reading of the file's text; a tie depends on it."""
    text = '{"type":"Unigram","unk_id":0,"byte_fallback":false,"vocab":[["<unk>",-100.0],' \
           '["a",-3.9563765620777724],["b",-1.0],["ab",-4.956376562077773]]}'
    ref = reference_from_json(json.loads(text))
    assert ref.encode("ab").tokens == ["ab"]
    assert from_config(json.loads(text)).tokenize("ab") == [3]
    assert Unigram([("a", -3.9563765620777724), ("b", -1.0), ("ab", -4.956376562077773)], 0).tokenize("ab") == [0, 1]
    rng = random.Random(3)
    values = [-rng.uniform(0.001, 30) for _ in range(400)] + [-3.8403830528259277, 1e-300, -5e-324, 12.0, 0.0]
    config = {"type": "Unigram", "unk_id": 0, "vocab": [[f"t{i}", v] for i, v in enumerate(values)]}
    hf_values = [score for _, score in json.loads(reference_from_json(config).to_str())["model"]["vocab"]]
    assert [serde_f64(v) for v in values] == hf_values


@pytest.mark.parametrize("fields,key", [
    ({"unk_id": 5}, r"model\.unk_id"),
    ({"unk_id": -1}, r"model\.unk_id"),
    ({"unk_id": 0, "vocab": []}, r"model\.vocab"),
    ({"vocab": [["a", -1.0, 3]]}, r"model\.vocab\[0\]"),
    ({"vocab": [["a", "x"]]}, r"model\.vocab\[0\]\[1\]"),
    ({"vocab": [[1, -1.0]]}, r"model\.vocab\[0\]\[0\]"),
    ({"byte_fallback": None}, r"model\.byte_fallback"),
])
def test_bad_fields(fields, key):
    config = {"type": "Unigram", "unk_id": 0, "vocab": [["<unk>", 0.0], ["a", -1.0]], **fields}
    with pytest.raises(Exception):  # noqa: B017 - tokenizers raises a plain Exception
        reference_from_json(config)
    with pytest.raises(FormatError, match=key):
        from_config(config)


def test_from_config_defaults_and_untyped():
    config = {"unk_id": None, "vocab": [["a", -1.0], ["b", -2]]}
    assert isinstance(from_config(config), Unigram)
    check_words(reference_from_json(config), from_config(config), ["ab", "ba"])


@pytest.mark.parametrize("name", ["albert-base-v2-tf5", "marian-nmt"])
def test_real_vocabularies(name):
    full, config = real_model(name)
    ours = from_config(config)
    words = real_words(full, corpus_texts(8000))
    check_words(reference(full.model), ours, words)
