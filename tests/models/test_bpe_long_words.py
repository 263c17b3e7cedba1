"""Words too long for the heap (over 4096 symbols) merge in `merge_tree`: ids equal to the reference engines'.

Each text is one word of thousands of letters (no space, so the pre-tokenizer keeps it
whole). References, run live: llama.cpp (llama-cpp-python 0.3.36) on llama.cpp's
GPT-2 and Llama-3 vocabularies and on the two synthetic vocabularies with characters
that have no token (tests/golden/gguf/unknown_chars, llama.cpp's rule: no merge
crosses them); tiktoken 0.14.0 on cl100k_base (pairs ranked by token id);
mistral-common on tekken. HF tokenizers is checked on the built-in GPT-2 by
tests/robustness/test_encode_memory.py.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from fixtures import gguf_vocab_path
from robustness.pathological import tokenizer_files

import polytok
from polytok.parity.engines import reference_side

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "gguf" / "unknown_chars"
SIZE = 9000  # characters: every case passes 4096 symbols


def _texts(alphabet: str) -> list[str]:
    rng = random.Random(len(alphabet))
    return [alphabet[0] * SIZE, "".join(rng.choice(alphabet) for _ in range(SIZE)),
            "".join(rng.choice(alphabet[:3]) for _ in range(SIZE))]


def _fixture(spec: str) -> Path:
    return next(get for family, name, get in tokenizer_files() if f"{family}/{name}" == spec)()


CASES = [
    ("llama.cpp", lambda: GOLDEN / "synthetic-bytelevel.gguf", "abcx"),
    ("llama.cpp", lambda: GOLDEN / "synthetic-gemma4.gguf", "abcx"),
    ("llama.cpp", lambda: gguf_vocab_path("gpt-2"), "etaoinshrdlu"),
    ("llama.cpp", lambda: gguf_vocab_path("llama-bpe"), "etaoinshrdlu"),
    ("tiktoken", lambda: _fixture("tiktoken/cl100k_base-tiktoken"), "etaoinshrdlu"),
    ("mistral", lambda: _fixture("tekken/tekken-240911"), "etaoinshrdlu"),
]


@pytest.mark.parametrize("engine,get,alphabet", CASES, ids=["bytelevel-unknown", "gemma4-unknown", "gguf-gpt-2",
                                                            "gguf-llama-bpe", "cl100k", "tekken"])
def test_long_words_merge_as_the_reference_does(engine, get, alphabet):
    pytest.importorskip({"llama.cpp": "llama_cpp", "tiktoken": "tiktoken", "mistral": "mistral_common"}[engine],
                        reason=f"{engine} (its Python package) is not installed here; CI runs without llama.cpp")
    try:
        path = str(get())
    except Exception as exc:  # a fixture that cannot be had here
        pytest.skip(f"fixture unavailable: {exc}")
    tok = polytok.load(path)
    ref = reference_side(engine, path, "reference", tok)
    for text in _texts(alphabet):
        expected = ref.encode(text, False, None)
        assert tok.encode(text, add_special=False) == expected, f"{Path(path).name}: {text[:20]!r}..."
