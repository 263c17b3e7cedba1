"""Mutation fuzzing of every reader (tools/fuzz_readers.py) as a test: only polytok errors, no hang.

Mutants of small copies of real fixtures (robustness/corpus_sources.py): for JSON a
wrong-typed value (huge or negative integers, NaN/Inf, list, object, string, bool, null) or a
deleted key at every key path, for rank files a bad rank or token on one line, for every file
truncations, bit flips, 0xff length bursts and insertions. A mutant may load (then it must encode and decode) or be
refused with a `PolytokError`; anything else is an escape. The default run fuzzes a few
targets; ``-m slow`` all 27 with 150 byte mutants each.
"""

from __future__ import annotations

import collections
import random
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools"))

import fuzz_readers

from robustness.corpus_sources import fuzz_targets

DEFAULT = {"bert-base-uncased", "llama2", "gguf-bert-bge", "spm-botchan-bpe-1000", "tiktoken-gpt2-2000",
           "rwkv-3000", "wordpiece-vocab-3000", "gpt2-merges.txt"}
TARGETS = list(fuzz_targets())


def _fuzz(name, path, kind, options, rounds):
    escapes: list[str] = []
    counts: collections.Counter[str] = collections.Counter()
    if kind in ("json", "tekken"):
        fuzz_readers.fuzz_json(name, path, kind, 20.0, escapes, counts)
    fuzz_readers.fuzz_bytes(name, path, options, rounds, random.Random(name), 20.0, escapes, counts)
    assert not escapes, escapes[:5]
    assert counts["refused"] > 0


@pytest.mark.parametrize("name,path,kind,options", [t for t in TARGETS if t[0] in DEFAULT],
                         ids=lambda v: v if isinstance(v, str) else "")
def test_mutants_raise_only_polytok_errors(name, path, kind, options):
    _fuzz(name, path, kind, options, rounds=40)


@pytest.mark.slow
@pytest.mark.parametrize("name,path,kind,options", TARGETS, ids=lambda v: v if isinstance(v, str) else "")
def test_mutants_raise_only_polytok_errors_everywhere(name, path, kind, options):
    _fuzz(name, path, kind, options, rounds=150)
