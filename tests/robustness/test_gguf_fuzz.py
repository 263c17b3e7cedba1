"""GGUF type and size fuzzing (tools/fuzz_readers.py gguf_value_mutants): only polytok errors, no hang.

Small packed vocabularies of each llama.cpp vocabulary type; every key polytok reads is given
every GGUF value type (bounds, negatives, NaN/Inf, empty, nested arrays) or deleted, and every
array's count is made huge. A mutant may load (then it must encode and decode) or be refused
with a `PolytokError`; any other exception, a MemoryError or a hang is an escape.
"""

from __future__ import annotations

import collections
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools"))

import fuzz_readers
from formats.gguf_pack import ARRAY, BOOL, FLOAT32, INT32, STRING, UINT8, UINT32

from polytok.formats.gguf_keys import KEY_TYPES

TOKENS = ["<unk>", "<s>", "</s>", "<0x0A>", "\u2581", "a", "b", "\u2581a", "ab", " ", "Ġ", "Ġa"]
COMMON = [("general.architecture", STRING, "llama"), ("tokenizer.ggml.tokens", (ARRAY, STRING), TOKENS),
          ("tokenizer.ggml.scores", (ARRAY, FLOAT32), [0.0, 0.0, 0.0, 0.0] + [-float(i) for i in range(8)]),
          ("tokenizer.ggml.token_type", (ARRAY, INT32), [2, 3, 3, 6] + [1] * 8),
          ("tokenizer.ggml.bos_token_id", UINT32, 1), ("tokenizer.ggml.add_bos_token", BOOL, True)]
BASES = {
    "llama": COMMON + [("tokenizer.ggml.model", STRING, "llama")],
    "gpt2": COMMON + [("tokenizer.ggml.model", STRING, "gpt2"), ("tokenizer.ggml.pre", STRING, "default"),
                      ("tokenizer.ggml.merges", (ARRAY, STRING), ["a b", "Ġ a"])],
    "t5": COMMON + [("tokenizer.ggml.model", STRING, "t5"),
                    ("tokenizer.ggml.precompiled_charsmap", (ARRAY, UINT8), [4, 0, 0, 0] + [0] * 8)],
    "bert": COMMON + [("tokenizer.ggml.model", STRING, "bert")],
}
SMALL_KEYS = ["tokenizer.ggml.model", "tokenizer.ggml.tokens", "tokenizer.ggml.scores", "tokenizer.ggml.token_type",
              "tokenizer.ggml.pre", "tokenizer.ggml.merges", "tokenizer.ggml.precompiled_charsmap",
              "tokenizer.ggml.bos_token_id", "tokenizer.ggml.add_bos_token"]


def _fuzz(model: str, keys: list[str]) -> None:
    escapes: list[str] = []
    counts: collections.Counter[str] = collections.Counter()
    fuzz_readers.fuzz_gguf_values(BASES[model], keys, 20.0, escapes, counts)
    assert not escapes, escapes[:5]
    assert counts["refused"] > 0 and counts["loaded"] > 0


@pytest.mark.parametrize("model", BASES)
def test_gguf_type_mutants_raise_only_polytok_errors(model):
    _fuzz(model, SMALL_KEYS)


@pytest.mark.slow
@pytest.mark.parametrize("model", BASES)
def test_gguf_type_mutants_of_every_read_key(model):
    _fuzz(model, sorted(KEY_TYPES))
