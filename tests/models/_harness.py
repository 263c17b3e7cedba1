"""Shared helpers for the model tests: the live reference and a readable comparison.

The reference for a model is a `tokenizers.Tokenizer` holding only that model (no
normalizer, no pre-tokenizer, no post-processor), so ``encode(word)`` runs
exactly ``Model::tokenize(word)`` and reports char offsets into `word`.
"""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
import tokenizers
from fixtures import edge_texts

from polytok.errors import PolytokError


def reference(model: Any) -> tokenizers.Tokenizer:
    """A reference tokenizer around a `tokenizers.models.*` object."""
    return tokenizers.Tokenizer(model)


def reference_from_json(model_config: dict[str, Any]) -> tokenizers.Tokenizer:
    """A reference tokenizer whose tokenizer.json has `model_config` as its model."""
    document = {"version": "1.0", "truncation": None, "padding": None, "added_tokens": [],
                "normalizer": None, "pre_tokenizer": None, "post_processor": None, "decoder": None,
                "model": model_config}
    return tokenizers.Tokenizer.from_str(json.dumps(document))


def expected_spans(ref: tokenizers.Tokenizer, word: str) -> list[tuple[int, int, int]]:
    encoding = ref.encode(word)
    return [(i, start, end) for i, (start, end) in zip(encoding.ids, encoding.offsets)]


def check_words(ref: tokenizers.Tokenizer, ours: Any, words: list[str], spans: bool = True,
                values: bool = True) -> None:
    """`ours` gives the reference's ids (and char offsets, and token strings) for every word, or raises where it raises.

    The first difference is shown with each id's token. `values` compares
    ``token_value`` with the reference's ``Encoding.tokens`` (off where ids are
    shared by several tokens: HF then picks one in hash order).
    """
    for word in words:
        try:
            encoding = ref.encode(word)
        except Exception:  # the reference refuses the word: polytok must raise its own error
            with pytest.raises(PolytokError):
                ours.tokenize(word)
            with pytest.raises(PolytokError):
                ours.tokenize_spans(word)
            continue
        expected = [(i, start, end) for i, (start, end) in zip(encoding.ids, encoding.offsets)]
        ids = [i for i, _, _ in expected]
        got = ours.tokenize(word)
        assert got == ids, _report(ref, word, ids, got)
        if spans:
            got_spans = ours.tokenize_spans(word)
            assert got_spans == expected, _report(ref, word, expected, got_spans)
            if values:
                got_values = [ours.token_value(i, word, start, end) for i, start, end in got_spans]
                assert got_values == encoding.tokens, f"word {word[:80]!r}: token strings differ"


def _report(ref: tokenizers.Tokenizer, word: str, expected: list[Any], got: list[Any]) -> str:
    first = next((k for k, (a, b) in enumerate(zip(expected, got)) if a != b), min(len(expected), len(got)))

    def show(items: list[Any]) -> str:
        return " ".join(f"{item}={ref.id_to_token(item if isinstance(item, int) else item[0])!r}" for item in items)

    return (f"word {word[:80]!r}: first difference at token {first}\n"
            f"  expected {show(expected)}\n  got      {show(got)}")


def random_words(rng: random.Random, alphabet: str, count: int, max_len: int) -> list[str]:
    return ["".join(rng.choice(alphabet) for _ in range(rng.randint(1, max_len))) for _ in range(count)]


def edge_words() -> list[str]:
    """Edge texts with spaces kept, as whole words (a model may see any string)."""
    return [text for text in edge_texts() if text]


def real_model(name: str) -> tuple[tokenizers.Tokenizer, dict[str, Any]]:
    """The reference tokenizer of a real tokenizer.json fixture (skips when absent) and its model config."""
    from fixtures import HF_JSON_FIXTURES, fixture_path

    path = fixture_path(name, HF_JSON_FIXTURES[name])
    full = tokenizers.Tokenizer.from_file(str(path))
    with open(path, encoding="utf-8") as f:
        config = json.load(f)["model"]
    return full, config


def real_words(full: tokenizers.Tokenizer, texts: list[str]) -> list[str]:
    """The words the file's own normalizer and pre-tokenizer give the model for `texts` (deduplicated)."""
    words: dict[str, None] = {}
    for text in texts:
        normalized = full.normalizer.normalize_str(text) if full.normalizer else text
        if full.pre_tokenizer:
            words.update((piece, None) for piece, _ in full.pre_tokenizer.pre_tokenize_str(normalized))
        else:
            words[normalized] = None
    return [word for word in words if word]


def corpus_texts(chars: int) -> list[str]:
    """Edge texts plus the first `chars` characters of each throughput corpus (when present)."""
    from fixtures import SHARED_FIXTURES

    texts = edge_words()
    for stem in ("en", "code", "multi"):
        path = SHARED_FIXTURES / "texts" / f"bench_{stem}.txt"
        if path.is_file():
            with open(path, encoding="utf-8", newline="") as f:
                texts.append(f.read(chars))
    return texts
