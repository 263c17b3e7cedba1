"""Shared checks for the pre-tokenizer tests: polytok against the live `tokenizers`.

Both sides are built from the same tokenizer.json fragment. Expected pieces
and character offsets always come from the reference: ``pre_tokenize_str`` for
a whole text, or a ``tokenizers.PreTokenizedString`` cut into several splits
first (as added tokens cut a text), so every split starts at its own original
offset. polytok's aligned path must give the same pieces and offsets, and its
fast path the same pieces.
"""

from __future__ import annotations

import json
import random
from functools import lru_cache
from pathlib import Path
from typing import Any

import pytest

tokenizers = pytest.importorskip("tokenizers")

import polytok.pre_tokenizers  # noqa: E402
from polytok.normalized import NormalizedString  # noqa: E402

SHARED_TEXTS = Path(__file__).resolve().parents[2].parent / "shared" / "fixtures" / "texts" / "edge_cases.jsonl"
BUILTIN_TEXTS = Path(__file__).resolve().parents[1] / "edge_texts.json"

Piece = tuple[str, tuple[int, int]]

# one subtle rule each (and the verified vectors of the reference spec, section 16)
TARGETED = [
    "Hello  world!\n", "I'm 123 ok?? ", " Hello  world", "Hello world", "ab1cd23", "ab, cd!",
    "Hey man!  x_y", "どこで生れ。Yes 123", "  abc  def", "a五b²c١٢x123", "a$b€c\u3000d\u200be",
    "the-final--countdown", "▁Hello▁▁world▁", "▁▁a", "a▁", "  ", " ", "\n\n \n", "x\x1cy\x1f z",
    "don't WE'LL it'S 'ſ", "e\u0301 x", "🤗x 🥰 y", "a\u200db\u200cc", "½² ¹", "\u2e42\u2e43\u1b7d\u2e4f",
    "ー カタカナ ひらがな", "Apples are りんご 林檎", "  \tline\r\n  next", "𝔘𝔫𝔦𝔠𝔬𝔡𝔢 𐌰𐌱", "\u0378\U000e0001x",
]

# a mix of characters that land in every class the pre-tokenizers look at
_ALPHABET = [
    " ", " ", " ", "  ", "\t", "\n", "\r\n", "\u3000", "\xa0", "\x1c", "\x85", "a", "Z", "é", "e\u0301", "ß",
    "Ω", "й", "א", "1", "42", "²", "١", "五", "!", "?", "$", "€", "'", "'s", "'LL", "-", "_", ".", "。", "、",
    "日本", "ど", "ー", "カ", "🤗", "🥰", "\u200d", "\u200b", "▁", "Ġ", "\u0300", "word", "Hello", "x_y", "<s>",
]


@lru_cache(maxsize=1)
def edge_texts() -> tuple[str, ...]:
    texts: list[str] = []
    if SHARED_TEXTS.is_file():
        texts += [json.loads(line)["text"] for line in SHARED_TEXTS.read_text(encoding="utf-8").splitlines()
                  if line.strip()]
    if BUILTIN_TEXTS.is_file():
        texts += [row["text"] for row in json.loads(BUILTIN_TEXTS.read_text(encoding="utf-8"))]
    return tuple(texts)


def random_texts(n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    return ["".join(rng.choice(_ALPHABET) for _ in range(rng.randint(1, 14))) for _ in range(n)]


def all_texts(n_random: int = 200, seed: int = 0) -> list[str]:
    return TARGETED + list(edge_texts()) + random_texts(n_random, seed)


def reference(config: dict[str, Any]) -> Any:
    """The live HF pre-tokenizer loaded from `config` through a whole tokenizer.json."""
    doc = {"version": "1.0", "truncation": None, "padding": None, "added_tokens": [], "normalizer": None,
           "pre_tokenizer": config, "post_processor": None, "decoder": None,
           "model": {"type": "WordLevel", "vocab": {"a": 0}, "unk_token": "a"}}
    return tokenizers.Tokenizer.from_str(json.dumps(doc)).pre_tokenizer


def ours(config: dict[str, Any]) -> Any:
    return polytok.pre_tokenizers.from_config(json.loads(json.dumps(config)), "pre_tokenizer")


def segments(text: str, cuts: tuple[int, ...] = ()) -> list[tuple[int, int]]:
    bounds = [0, *sorted(c for c in cuts if 0 < c < len(text)), len(text)]
    return [(a, b) for a, b in zip(bounds, bounds[1:]) if b > a]


def expected(ref: Any, text: str, cuts: tuple[int, ...] = ()) -> list[Piece]:
    """The reference's pieces; an empty one (left only when no member split at all, e.g. an
    empty Sequence on "") is dropped, as polytok's protocol drops it: it yields no token."""
    if not cuts:
        found = [(p, tuple(o)) for p, o in ref.pre_tokenize_str(text)]
    else:
        pre = tokenizers.PreTokenizedString(text)
        parts = segments(text, cuts)
        pre.split(lambda _, ns: [ns[a:b] for a, b in parts])
        ref.pre_tokenize(pre)
        found = [(p, tuple(o)) for p, o, _ in pre.get_splits()]
    return [piece for piece in found if piece[0]]  # type: ignore[misc]


def aligned(pt: Any, text: str, cuts: tuple[int, ...] = ()) -> list[Piece]:
    out: list[Piece] = []
    for a, b in segments(text, cuts):
        for ns in pt.pre_tokenize_aligned(NormalizedString.from_original(text[a:b], a)):
            out.append((ns.text, ns.offsets(0, len(ns.text))))
    return out


def fast(pt: Any, text: str, cuts: tuple[int, ...] = ()) -> list[str]:
    out: list[str] = []
    for a, b in segments(text, cuts):
        out += pt.pre_tokenize(text[a:b], a == 0)
    return out


def assert_same(config: dict[str, Any], texts: list[str], cuts: tuple[int, ...] = (),
                check_fast: bool = True) -> None:
    ref, pt = reference(config), ours(config)
    bad = []
    for text in texts:
        want = expected(ref, text, cuts)
        got = aligned(pt, text, cuts)
        if got != want:
            bad.append(f"aligned {text!r} cuts={cuts}\n  expected={want!r}\n  actual  ={got!r}")
        elif check_fast and fast(pt, text, cuts) != [p for p, _ in want]:
            bad.append(f"fast {text!r} cuts={cuts}\n  expected={[p for p, _ in want]!r}\n"
                       f"  actual  ={fast(pt, text, cuts)!r}")
    assert not bad, f"{config}: {len(bad)} of {len(texts)} differ; first:\n" + "\n".join(bad[:4])
