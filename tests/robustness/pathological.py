"""Pathological texts and the list of every fixture tokenizer, for the linear-time sweep.

Used by tests/robustness/test_linear_time.py (slow) and tools/sweep_pathological.py.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from pathlib import Path

from fixtures import ALL_HF_JSON, GGUF_VOCAB_NAMES, SOURCES, fixture_path, gguf_vocab_path


def _mixed_no_spaces(n: int) -> str:
    rng = random.Random(8)
    alphabet = "abcdefghijklmnopqrstuvwxyzABCXYZ0123456789éßжщ日本語한국어ไทยعربي🤗\u0301.,;-_/"
    return "".join(rng.choice(alphabet) for _ in range(n))


def _letters_no_spaces(n: int) -> str:
    rng = random.Random(7)
    return "".join(rng.choice("etaoinshrdlucmfwypvbgkjqxz") for _ in range(n))


# name -> text of about n characters
KINDS: dict[str, Callable[[int], str]] = {
    "one-char": lambda n: "a" * n,
    "spaces": lambda n: " " * n,
    "digits": lambda n: "7" * n,
    "digit-run": lambda n: ("0123456789" * (n // 10 + 1))[:n],
    "combining": lambda n: "e" + "\u0301" * (n - 1),
    "newlines": lambda n: "\n" * n,
    "letters-no-spaces": _letters_no_spaces,
    "mixed-no-spaces": _mixed_no_spaces,
    "cjk": lambda n: "日" * n,
    "emoji": lambda n: "🤗" * n,
    "word-space": lambda n: ("ab " * (n // 3 + 1))[:n],
    "punct": lambda n: ("!?" * (n // 2 + 1))[:n],
    "space-tab-mix": lambda n: (" \t \n" * (n // 4 + 1))[:n],
}


def tokenizer_files() -> Iterator[tuple[str, str, Callable[[], Path]]]:
    """(family, name, a function giving the path) for every fixture tokenizer."""
    for fixture in ALL_HF_JSON:
        yield "hf_json", fixture.name, lambda f=fixture: fixture_path(f.name, f.files[0])
    for name in GGUF_VOCAB_NAMES:
        yield "gguf", name, lambda n=name: gguf_vocab_path(n)
    for entry in SOURCES.values():
        for record in entry["files"]:
            family = {"sentencepiece-model": "sentencepiece", "mistral-tekken-json": "tekken",
                      "wordpiece-vocab.txt": "wordpiece_vocab", "rwkv-world-trie-vocab": "rwkv_vocab"}.get(
                record["format"])
            if record["format"].startswith("tiktoken-ranks") and record["file"] != "pattern.json":
                family = "tiktoken"
            if family is not None:
                yield family, entry["name"], lambda e=entry["name"], r=record["file"]: fixture_path(e, r)
