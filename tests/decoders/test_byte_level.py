"""ByteLevel decoder vs tokenizers.decoders.ByteLevel."""

from __future__ import annotations

import random

import pytest

from polytok.text.byte_alphabet import BYTES_TO_CHARS

from ._data import assert_same, encoded_token_lists, ours_like, random_lists, vocab_pieces

tokenizers = pytest.importorskip("tokenizers")
D = tokenizers.decoders

HAND = [
    ["ĠHello", " raw", "âĤ", "Ĭ"],  # §16: a foreign token keeps its UTF-8 bytes
    [], [""], ["", "Ġ"], ["Ġ", "Ġ", "Ċ", "ĉ"],
    ["âĤ"], ["Ĭ", "âĤ"], ["ðŁ", "¤", "Ĺ"], ["ðŁ", "¤"], ["ðŁ¤Ĺ", "x"],
    ["đem"], ["čau"], ["<|endoftext|>", "Ġhi"], ["hello world"], ["日本", "æĹ¥"],
    ["Ã", "©"], ["Ã"], ["í", "ł", "Ģ"],  # an encoded surrogate: 3 replacement chars
    ["ÿ", "þ"], ["ðŁ", "Ġ"], ["ð", "Ł", "Ĳ"], ["ĠðŁ", "é"], ["Ā", "ā", "Ń"],
    ["abc", "ĠĠ", "ä¸Ģ", "Ġâ", "Ģ", "Ķ"], ["Ġ\u00e9t\u00e9"], ["\u0100\u3000"],
]


def _random_byte_tokens(seed: int, n: int) -> list[list[str]]:
    """Random bytes spelled in the alphabet and cut into random tokens: much invalid UTF-8."""
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        data = bytes(rng.choice([rng.randrange(256), rng.randrange(0x80, 0x100), rng.randrange(0x20, 0x7F)])
                     for _ in range(rng.randint(0, 12)))
        chars = [BYTES_TO_CHARS[b] for b in data]
        cuts = sorted(rng.sample(range(len(chars) + 1), min(3, len(chars) + 1)))
        out.append(["".join(chars[a:b]) for a, b in zip([0, *cuts], [*cuts, len(chars)])])
    return out


@pytest.mark.parametrize("flags", [(True, True, True), (False, False, False)])
def test_hand_lists(flags):
    ref = D.ByteLevel(add_prefix_space=flags[0], trim_offsets=flags[1], use_regex=flags[2])
    assert_same(ref, ours_like(ref), HAND)


def test_random_bytes_lossy_like_rust():
    ref = D.ByteLevel()
    assert_same(ref, ours_like(ref), _random_byte_tokens(0, 1500))


def test_every_single_byte():
    ref = D.ByteLevel()
    lists = [[c] for c in BYTES_TO_CHARS] + [[a, b] for a in BYTES_TO_CHARS[::7] for b in BYTES_TO_CHARS[::5]]
    assert_same(ref, ours_like(ref), lists)


def test_gpt2_vocab_pieces():
    ref = D.ByteLevel()
    pieces = vocab_pieces("gpt2")
    assert_same(ref, ours_like(ref), random_lists(pieces, 400, 1) + [[p] for p in pieces[::97]])


def test_llama3_encoded_edge_texts():
    ref = D.ByteLevel()
    lists = encoded_token_lists("llama3")
    # cut each list in two, so multi-byte chars are split across the decode boundary
    halves = [part for tokens in lists for part in (tokens[: len(tokens) // 2], tokens[len(tokens) // 2:])]
    assert_same(ref, ours_like(ref), lists + halves)
