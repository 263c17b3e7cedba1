"""The added-token rules (reference/hf_tokenizers.md §7, §15.1–3, §15.10), each against live tokenizers.

Every case builds one tokenizer.json, loads it in both engines and compares;
the expected values are the reference's.
"""

from __future__ import annotations

import json

import pytest

import polytok
from polytok.formats.hf_json import parse_tokenizer_json

tokenizers = pytest.importorskip("tokenizers")

WORDS = ["[UNK]", "a", "b", "c", "d", "ab", "abc", "x", "y", "▁", "▁a", "▁b", "<s>", "hello", "world"]


def _json(added, normalizer=None, pre_tokenizer=None, decoder=None, model=None):
    return {
        "version": "1.0", "truncation": None, "padding": None,
        "added_tokens": added, "normalizer": normalizer, "pre_tokenizer": pre_tokenizer,
        "post_processor": None, "decoder": decoder,
        "model": model or {"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##",
                           "max_input_chars_per_word": 100, "vocab": {w: i for i, w in enumerate(WORDS)}},
    }


def _added(content, id=0, special=False, lstrip=False, rstrip=False, single_word=False, normalized=None):
    return {"id": id, "content": content, "single_word": single_word, "lstrip": lstrip, "rstrip": rstrip,
            "normalized": (not special) if normalized is None else normalized, "special": special}


def _both(data):
    return tokenizers.Tokenizer.from_str(json.dumps(data)), parse_tokenizer_json(data)


def _same(data, texts, modes=("parse", "text")):
    ref, ours = _both(data)
    for text in texts:
        for mode in modes:
            ref.encode_special_tokens = mode == "text"
            expected = ref.encode(text, add_special_tokens=False)
            got = ours.encode_full(text, add_special=False, special=mode)
            assert got.ids == expected.ids, (text, mode, expected.tokens, got.tokens)
            assert got.tokens == expected.tokens, (text, mode)
            assert got.offsets == [tuple(o) for o in expected.offsets], (text, mode, expected.tokens)
            assert ours.encode(text, add_special=False, special=mode) == expected.ids, (text, mode)
    ref.encode_special_tokens = False
    return ref, ours


WS = {"type": "WhitespaceSplit"}


def test_file_ids_are_reassigned_in_order():
    data = _json([_added("<new1>", id=999, special=True), _added("hello", id=5), _added("<new2>", id=3)],
                 pre_tokenizer=WS)
    ref, ours = _same(data, ["<new1> hello <new2>", "<new2><new1>"])
    for content in ("<new1>", "<new2>", "hello"):
        assert ours.token_to_id(content) == ref.token_to_id(content)
    assert len(ours) == ref.get_vocab_size(with_added_tokens=True)


def test_normalizer_and_pre_tokenizer_run_again_after_each_added_token():
    data = _json([_added("<s>", special=True, normalized=False)],
                 normalizer={"type": "Sequence", "normalizers": [
                     {"type": "Prepend", "prepend": "▁"},
                     {"type": "Replace", "pattern": {"String": " "}, "content": "▁"}]},
                 model={"type": "BPE", "vocab": {w: i for i, w in enumerate(WORDS)}, "merges": [["▁", "a"], ["▁", "b"]],
                        "unk_token": "[UNK]"})
    _same(data, ["a<s>b", "<s>a <s> b", "a b"])


def test_leftmost_longest_and_rejected_single_word_consumes_its_span():
    _same(_json([_added("ab"), _added("abc", single_word=True), _added("bcd")], pre_tokenizer=WS),
          ["abcd", "abc d", "x abc", "abab", "zbcd"])


def test_lstrip_rstrip_swallow_spaces_and_rstrip_may_overlap():
    _same(_json([_added("a", rstrip=True, normalized=False), _added(" b", normalized=False),
                 _added("<m>", lstrip=True, rstrip=True, special=True)], pre_tokenizer=WS),
          ["a b", "x  <m>  y", "<m>", "  <m>", "a  <m> b"])


def test_special_markers_as_text_still_consume_their_span():
    _same(_json([_added("<s>", special=True), _added("s>x")], pre_tokenizer=WS), ["<s>x", "a <s> b"])


def test_normalized_tokens_match_the_normalized_text():
    data = _json([_added("Hello"), _added("<MASK>", special=True, normalized=True)],
                 normalizer={"type": "Lowercase"}, pre_tokenizer=WS)
    ref, ours = _same(data, ["say HELLO x<MASK>y", "hello"])
    ids = ref.encode("x <MASK> y", add_special_tokens=False).ids
    assert ref.id_to_token(ids[1]) == "<mask>"
    # a special token whose normalized form differs is not removed by skip_special (bug-compatible)
    for skip in (False, True):
        assert ours.decode(ids, skip_special=skip) == ref.decode(ids, skip_special_tokens=skip)


def test_added_tokens_are_decoded_through_the_byte_level_decoder():
    vocab = {chr(c): i for i, c in enumerate(range(33, 127))}
    data = _json([_added("đem", normalized=False), _added("<|im_start|>", special=True)],
                 pre_tokenizer={"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True,
                                "use_regex": True},
                 decoder={"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True},
                 model={"type": "BPE", "vocab": vocab, "merges": []})
    ref, ours = _both(data)
    ids = ref.encode("<|im_start|>đem x", add_special_tokens=False).ids
    for skip in (False, True):
        assert ours.decode(ids, skip_special=skip) == ref.decode(ids, skip_special_tokens=skip)


def test_unknown_ids_are_dropped_and_bad_ids_raise():
    ref, ours = _both(_json([], pre_tokenizer=WS))
    assert ours.decode([1, 10_000, 2]) == ref.decode([1, 10_000, 2], skip_special_tokens=False)
    with pytest.raises(polytok.DecodeError):
        ours.decode([1, -1])


def test_special_argument_accepts_the_enum_and_its_strings_only():
    _, ours = _both(_json([_added("<s>", special=True)], pre_tokenizer=WS))
    assert ours.encode("<s>", special="parse") == ours.encode("<s>", special=polytok.SpecialTokens.PARSE)
    assert ours.encode("<s>", special="text") == ours.encode("<s>", special=polytok.SpecialTokens.AS_TEXT)
    with pytest.raises(polytok.PolytokError):
        ours.encode("<s>", special="yes")
