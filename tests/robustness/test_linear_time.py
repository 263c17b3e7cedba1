"""Encode time on pathological text grows linearly with its length, for every fixture tokenizer.

The slow sweep times each tokenizer (tests/robustness/pathological.py: every
tokenizer.json, the ggml-vocab GGUFs, the .model/tiktoken/tekken/vocab files) on each
pathological text at two sizes and fails when the time grows far faster than the size
(a quadratic path grows 64x for 8x the text; the bound is 3x linear, generous for a
shared machine). tools/sweep_pathological.py prints the seconds per MB.
"""

from __future__ import annotations

import time

import pytest

import polytok
from robustness.pathological import KINDS, tokenizer_files

SMALL, LARGE = 50_000, 400_000
FACTOR = 3.0


def _seconds(tok: polytok.Tokenizer, text: str) -> float:
    best = float("inf")
    for _ in range(2):
        start = time.perf_counter()
        try:
            tok.encode(text)
        except polytok.PolytokError:
            return 0.0  # the reference refuses this text too (e.g. WordPiece without [UNK])
        best = min(best, time.perf_counter() - start)
    return best


def _check_linear(tok: polytok.Tokenizer, kinds: list[str], small: int, large: int) -> None:
    steep = []
    for kind in kinds:
        t_small = max(_seconds(tok, KINDS[kind](small)), 0.002)
        t_large = _seconds(tok, KINDS[kind](large))
        if t_large > FACTOR * (large / small) * t_small and t_large > 0.5:
            steep.append(f"{kind}: {t_small:.3f}s -> {t_large:.3f}s")
    assert not steep, f"super-linear encode: {steep}"


def test_gpt2_builtin_is_linear_on_pathological_text():
    _check_linear(polytok.load("gpt2"), ["one-char", "spaces", "letters-no-spaces", "combining"], 10_000, 80_000)


@pytest.mark.slow
@pytest.mark.parametrize("family,name,get", list(tokenizer_files()), ids=lambda v: v if isinstance(v, str) else "")
def test_every_fixture_tokenizer_is_linear(family, name, get):
    _check_linear(polytok.load(get()), list(KINDS), SMALL, LARGE)
