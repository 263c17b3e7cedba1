"""Special tokens that overlap: how tiktoken 0.14.0 picks among them, and polytok's rule.

tiktoken joins the escaped special texts into one regex alternation in the order of
its FxHashMap (src/lib.rs ``CoreBPE::new_internal``), and the regex takes the first
alternative that matches (leftmost-first). When two texts start at the same place —
one is a prefix of the other — the winner therefore depends on hash order, not on the
texts (measured: of 200 random prefix pairs, tiktoken took the longer one 78 times).
polytok takes the longest (leftmost-longest, HF's rule). Texts that overlap without
being prefixes are found leftmost by both. The known files have no prefix pairs, so
they agree (test_tiktoken_parity.py); the rows below pin the divergence.
"""

from __future__ import annotations

import pytest
import tiktoken

from polytok.formats.tiktoken import build_tiktoken

BYTES = {bytes([b]): b for b in range(256)}


def _both(specials: dict[str, int]):
    ref = tiktoken.Encoding("bytes", pat_str=r".", mergeable_ranks=BYTES, special_tokens=specials)
    tok = build_tiktoken(list(BYTES), range(256), r".", specials, source="bytes")
    return tok, ref


@pytest.mark.parametrize("specials,text", [
    ({"<|a|>": 300, "|>x": 301}, "<|a|>x"),
    ({"<|a|>": 300, "a|><|b": 301}, "<|a|><|b"),
    ({"<|a|>": 300, "<|b|>": 301}, "<|a|><|b|><|a|"),
])
def test_overlapping_non_prefix_specials_agree(specials, text):
    tok, ref = _both(specials)
    assert tok.encode(text, special="parse") == ref.encode(text, allowed_special="all")


@pytest.mark.parametrize("specials,text,tiktoken_ids", [
    # known divergence: tiktoken takes the shorter text here (its hash order), polytok the longer
    ({"<a>": 300, "<a>b": 301}, "<a>b", [300, 98]),
    ({"x": 300, "xy": 301}, "xy", [300, 121]),
])
def test_prefix_specials_known_divergence(specials, text, tiktoken_ids):
    tok, ref = _both(specials)
    assert ref.encode(text, allowed_special="all") == tiktoken_ids  # still tiktoken's answer
    assert tok.encode(text, special="parse") == [specials[text]]  # polytok: the longest


@pytest.mark.parametrize("specials,text", [
    ({"<s>": 300, "<s>x": 301}, "<s>x"),
    ({"ab": 300, "abc": 301}, "abc"),
])
def test_prefix_specials_where_tiktoken_takes_the_longest_too(specials, text):
    tok, ref = _both(specials)
    assert tok.encode(text, special="parse") == ref.encode(text, allowed_special="all") == [specials[text]]


def test_special_text_is_plain_text_by_default():
    tok, ref = _both({"<|endoftext|>": 300})
    text = "a<|endoftext|>b"
    assert tok.encode(text) == ref.encode_ordinary(text) == list(text.encode())
    with pytest.raises(ValueError):
        ref.encode(text)  # tiktoken's plain encode refuses special text; polytok's default reads it as text


def test_a_special_id_that_is_also_a_rank_decodes_as_the_rank():
    tok, ref = _both({"<s>": 65})
    assert tok.encode("<s>", special="parse") == ref.encode("<s>", allowed_special="all") == [65]
    assert tok.decode([65]) == ref.decode([65]) == "A"
