"""The models' column constructors (what the GGUF reader builds) against the public constructors.

`BPE.from_columns` and `SPM.from_columns` take the reader's lists as they are (no pairs, no
copy of the vocabulary; BPE keeps a list of pieces as its id -> token table): every answer
must be the one the public constructor's model gives, and a GGUF load must give the ids the
pure path gives.
"""

from __future__ import annotations

import pickle
import random
from typing import Any

import pytest
from fixtures import gguf_vocab_path

import polytok
from polytok import kernels
from polytok.errors import FormatError
from polytok.models.bpe import BPE
from polytok.models.spm import SPM

PIECES = ["a", "b", "ab", "c", "abc", "\u2581", "\u2581a", "<0x41>", "bc", "x"]
MERGES = [("a", "b"), ("ab", "c"), ("b", "c"), ("\u2581", "a")]
WORDS = ["abc", "ab", "cab", "\u2581abc", "zz", "", "bcab", "xabcx", "A", "a" * 300]


def _outcome(call: Any, word: str) -> Any:
    try:
        return call(word)
    except Exception as error:  # the error itself is compared
        return type(error), str(error)


def _both_bpe(**options: Any) -> tuple[BPE, BPE]:
    vocab = {p: i for i, p in enumerate(PIECES)}
    public = BPE(dict(vocab), MERGES, unknown_chars="block", **options)
    columns = BPE.from_columns(vocab, [a for a, _ in MERGES], [b for _, b in MERGES], pieces=list(PIECES),
                               ignore_merges=options.get("ignore_merges", False),
                               byte_fallback=options.get("byte_fallback", False))
    return public, columns


@pytest.mark.parametrize("options", [{}, {"ignore_merges": True}, {"byte_fallback": True}])
def test_bpe_columns_answer_as_the_public_model(options: dict[str, Any]) -> None:
    public, columns = _both_bpe(**options)
    assert isinstance(columns._vocab_r, list)
    for word in WORDS:
        assert columns.tokenize(word) == public.tokenize(word)
        assert columns.tokenize_spans(word) == public.tokenize_spans(word)
    for id in [*range(-3, len(PIECES) + 3), 10**12, -(10**12), 2.0, 2.5, -1.0, True, False, "1", None, 1j]:
        assert columns.id_to_token(id) == public.id_to_token(id), id  # type: ignore[arg-type]
    assert columns.get_vocab() == public.get_vocab() and columns.vocab_size() == public.vocab_size()
    restored = pickle.loads(pickle.dumps(columns))
    assert [restored.tokenize(w) for w in WORDS] == [public.tokenize(w) for w in WORDS]


def test_bpe_columns_pure_path() -> None:
    with kernels.pure_path():
        public, columns = _both_bpe()
    assert columns._kernel is None
    assert [columns.tokenize(w) for w in WORDS] == [public.tokenize(w) for w in WORDS]


def test_spm_columns_answer_as_the_public_model() -> None:
    rng = random.Random(5)
    pieces = PIECES + ["a"]  # a piece listed twice: its last id and score
    scores = [-float(rng.randint(0, 9)) for _ in pieces]
    public = SPM(list(zip(pieces, scores)))
    columns = SPM.from_columns(pieces, dict(zip(pieces, range(len(pieces)))), scores)
    for word in WORDS:
        assert _outcome(columns.tokenize, word) == _outcome(public.tokenize, word)
        assert _outcome(columns.tokenize_spans, word) == _outcome(public.tokenize_spans, word)
    assert [columns.id_to_token(i) for i in range(-1, len(pieces) + 1)] == \
        [public.id_to_token(i) for i in range(-1, len(pieces) + 1)]
    assert columns.token_to_id("a") == public.token_to_id("a") == len(pieces) - 1
    with pytest.raises(FormatError):
        SPM.from_columns([], {}, [])


@pytest.mark.parametrize("name", ["gemma-4", "llama-bpe", "qwen2", "llama-spm"])
def test_gguf_loads_give_the_pure_ids(name: str) -> None:
    path = gguf_vocab_path(name)
    tok = polytok.load(path)
    with kernels.pure_path():
        pure = polytok.load(path)
    text = "Hello world, ünïcode 😀 \t\n  x1234 " * 3
    assert tok.encode(text, add_special=False, special="text") == pure.encode(text, add_special=False, special="text")
    model = tok.model
    n = model.vocab_size()
    for id in [0, 1, n // 2, n - 1, n, -1, 10**9]:
        assert model.id_to_token(id) == pure.model.id_to_token(id)
