"""ByteFallback decoder vs tokenizers.decoders.ByteFallback."""

from __future__ import annotations

import random

import pytest

from ._data import assert_same, encoded_token_lists, ours_like, random_lists, vocab_pieces

tokenizers = pytest.importorskip("tokenizers")
D = tokenizers.decoders

HAND = [
    ["<0xE2>", "<0x82>", "a", "<0xE2>", "<0x82>", "<0xAC>", "<0x41>"],  # §16: one U+FFFD per byte
    [], [""], ["<0x41>"], ["<0xe2>", "<0x82>", "<0xac>"], ["<0xE2>", "<0x82>"], ["<0xF0>", "<0x9F>", "<0xA4>"],
    ["<0x+F>", "<0x+a>"], ["<0x-F>"], ["<0X41>"], ["<0x4g>"], ["<0x1_>"], ["<0x 1>"], ["<0x+>"],
    ["<0xé>"], ["<0x41>x"], ["<0x411>"], ["<0x4>"], ["<0xAb>", "<0xc3>", "<0xA9>"], ["<0xC3>", "x", "<0xA9>"],
    ["<0xED>", "<0xA0>", "<0x80>"], ["<0xFF>"], ["<0x00>", "<0x7F>"], ["a", "<0x0A>"],
]


def _random_byte_runs(seed: int, n: int) -> list[list[str]]:
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        tokens = []
        for _ in range(rng.randint(0, 8)):
            r = rng.random()
            if r < 0.6:
                tokens.append(f"<0x{rng.randrange(256):02{rng.choice('xX')}}>")
            elif r < 0.7:
                tokens.append(f"<0x+{rng.choice('0123456789abcdefABCDEFg-')}>")
            else:
                tokens.append(rng.choice(["a", "▁b", "", "é", "<unk>"]))
        out.append(tokens)
    return out


def test_hand_lists():
    ref = D.ByteFallback()
    assert_same(ref, ours_like(ref), HAND)


def test_random_runs():
    ref = D.ByteFallback()
    assert_same(ref, ours_like(ref), _random_byte_runs(5, 1500))


def test_utf8_sequences_cut_into_bytes():
    ref = D.ByteFallback()
    lists = [[f"<0x{b:02X}>" for b in ch.encode()] for ch in "aé€😀\u0800\uffff\U00010000"]
    assert_same(ref, ours_like(ref), lists + [[*x, *y] for x in lists for y in lists])


def test_llama2_vocab_and_edge_texts():
    ref = D.ByteFallback()
    pieces = vocab_pieces("llama2")
    assert_same(ref, ours_like(ref), random_lists(pieces[:300] + pieces[::50], 300, 6) +
                encoded_token_lists("llama2"))
