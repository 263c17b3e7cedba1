"""Inputs shared by the decoder tests: edge-case texts, real vocabularies, token lists.

Real tokenizer files are read from ../shared/fixtures (beside the repo); tests
that need one skip when it is absent. Expected outputs always come from the
live reference (`tokenizers`), never from polytok.
"""

from __future__ import annotations

import gzip
import json
import random
from functools import lru_cache
from pathlib import Path
from typing import Any

import pytest

import polytok.decoders

SHARED = Path(__file__).resolve().parents[2].parent / "shared" / "fixtures"


@lru_cache(maxsize=1)
def edge_texts() -> tuple[str, ...]:
    path = SHARED / "texts" / "edge_cases.jsonl"
    if not path.is_file():
        return ()
    return tuple(json.loads(line)["text"] for line in path.read_text(encoding="utf-8").splitlines() if line.strip())


@lru_cache(maxsize=4)
def tokenizer_text(name: str) -> str | None:
    folder = SHARED / "tokenizers" / name
    plain, packed = folder / "tokenizer.json", folder / "tokenizer.json.gz"
    if plain.is_file():
        return plain.read_text(encoding="utf-8")
    if packed.is_file():
        return gzip.decompress(packed.read_bytes()).decode("utf-8")
    return None


def reference_tokenizer(name: str) -> Any:
    import tokenizers

    text = tokenizer_text(name)
    if text is None:
        pytest.skip(f"shared fixture {name} absent")
    return tokenizers.Tokenizer.from_str(text)


def vocab_pieces(name: str) -> list[str]:
    text = tokenizer_text(name)
    if text is None:
        pytest.skip(f"shared fixture {name} absent")
    model = json.loads(text)["model"]
    vocab = model["vocab"]
    return sorted(vocab) if isinstance(vocab, dict) else [piece for piece, _ in vocab]


def random_lists(pieces: list[str], n: int, seed: int, max_len: int = 8) -> list[list[str]]:
    rng = random.Random(seed)
    return [[rng.choice(pieces) for _ in range(rng.randint(1, max_len))] for _ in range(n)]


def encoded_token_lists(name: str) -> list[list[str]]:
    """The reference's own tokens for every edge-case text (special tokens included)."""
    ref = reference_tokenizer(name)
    return [ref.encode(t).tokens for t in edge_texts()]


def ours_like(ref_decoder: Any) -> Any:
    """The polytok decoder loaded from the reference decoder's own JSON."""
    return polytok.decoders.from_config(json.loads(ref_decoder.__getstate__()), "decoder")


def assert_same(ref_decoder: Any, ours: Any, token_lists: list[list[str]]) -> None:
    bad = []
    for tokens in token_lists:
        expected = ref_decoder.decode(list(tokens))
        actual = "".join(ours.decode_chain(list(tokens)))
        if actual != expected:
            bad.append(f"tokens={tokens!r}\n  expected={expected!r}\n  actual  ={actual!r}")
    assert not bad, f"{len(bad)} of {len(token_lists)} differ; first:\n" + "\n".join(bad[:5])
