"""The alignment of two token sequences (polytok.parity.align): a split differing in one place
re-synchronises; specials on one side only are a region of their own; a cut UTF-8 character
does not count until it is complete. Toy vocabularies make each case exact."""

from __future__ import annotations

from polytok.parity.align import first_divergence

VOCAB = {0: "<s>", 1: "he", 2: "llo", 3: "hel", 4: "lo", 5: " ", 6: "world", 7: " wor", 8: "ld",
         9: "hello", 10: "</s>", 11: "!", 12: b"\xc3", 13: b"\xa9", 14: "é", 15: "e"}


def decode(ids):
    raw = b"".join(v if isinstance(v, bytes) else v.encode() for v in (VOCAB[i] for i in ids))
    return raw.decode("utf-8", "replace")


def region(a, b, **kw):
    return first_divergence(a, b, decode, decode, **kw)


def test_equal_sequences_have_no_region():
    assert region([1, 2, 5, 6], [1, 2, 5, 6]) is None


def test_split_differing_in_one_place_resynchronises():
    # "hello world!": he|llo vs hel|lo, then the same; then " world" vs " wor"+"ld"
    g = region([1, 2, 5, 6, 11], [3, 4, 5, 6, 11])
    assert (g.a_start, g.a_end, g.b_start, g.b_end) == (0, 2, 0, 2)
    assert g.text_a == g.text_b == "hello" and (g.start, g.end) == (0, 5)
    g = region([9, 5, 6, 11], [9, 7, 8, 11])
    assert (g.a_start, g.a_end, g.b_start, g.b_end) == (1, 3, 1, 3)
    assert g.text_a == " world" and (g.start, g.end) == (5, 11)


def test_one_token_against_three():
    g = region([9, 5, 6], [3, 4, 5, 6])
    assert (g.a_start, g.a_end, g.b_start, g.b_end) == (0, 1, 0, 2)


def test_special_on_one_side_is_its_own_region():
    g = region([0, 9, 5, 6], [9, 5, 6], special_a=frozenset({0}))
    assert (g.a_start, g.a_end, g.b_start, g.b_end) == (0, 1, 0, 0)
    g = region([9, 5, 6], [9, 5, 6, 10], special_b=frozenset({10}))
    assert (g.a_start, g.a_end, g.b_start, g.b_end) == (3, 3, 3, 4)
    # without knowing the framing ids, "<s>hello" never lines up with "hello"
    g = region([0, 9, 5, 6], [9, 5, 6])
    assert g.end is None


def test_a_cut_utf8_character_counts_when_complete():
    # "é" as one token vs its two bytes: ends meet after the second byte, not at the U+FFFD
    g = region([9, 14, 11], [9, 12, 13, 11])
    assert (g.a_start, g.a_end, g.b_start, g.b_end) == (1, 2, 1, 3)
    assert g.text_a == g.text_b == "é"


def test_different_text_never_resynchronises():
    g = region([9, 5, 6], [9, 5, 15, 15])
    assert g.end is None and (g.a_end, g.b_end) == (3, 4)


def test_one_id_for_another_is_a_region_of_one():
    g = region([0, 1, 2, 10], [10, 1, 2, 10])
    assert (g.a_start, g.a_end, g.b_start, g.b_end) == (0, 1, 0, 1)


def test_offsets_after_a_long_shared_prefix():
    # decoding starts a few ids before the divergence; offsets still count from the text's start
    shared = [9, 5, 6] * 3
    g = region(shared + [1, 2, 11], shared + [3, 4, 11])
    assert (g.a_start, g.a_end, g.b_start, g.b_end) == (9, 11, 9, 11)
    assert (g.start, g.end) == (33, 38) and g.text_a == "hello"
