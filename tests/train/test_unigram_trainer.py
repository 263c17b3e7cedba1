"""HF's ``UnigramTrainer`` (tokenizers 0.23.3), live.

HF sums its EM floats in hash-map order, so its scores differ run to run in the
last bits, and ``finalize`` hands its score penalties (0.0001 apart) to missing
characters in hash-set order. What is compared:

* the seeds (``n_sub_iterations=0`` and a vocabulary larger than the seeds, where
  HF's final vocabulary is the seeds themselves): exactly equal;
* the trained vocabulary: the same pieces as every one of HF's runs (which must
  agree), each score within `TOLERANCE` except the penalised characters, whose
  scores are the same values handed out in another order; the special tokens and
  ``unk_id`` equal, and the scores in id order equal within `TOLERANCE`.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from fixtures import bench_slice, fixture_path

import polytok
from polytok.train.pipeline import train
from polytok.train.unigram_trainer import UnigramTrainer

tokenizers = pytest.importorskip("tokenizers")

TOLERANCE = 1e-9
Vocab = list[tuple[str, float]]


def lines(name: str, chars: int) -> list[str]:
    return bench_slice(name, chars).splitlines()


def word_counts(texts: list[str]) -> dict[str, int]:
    """The word table HF's trainer sees under a Whitespace pre-tokenizer."""
    split = tokenizers.pre_tokenizers.Whitespace()
    counts: Counter[str] = Counter()
    for text in texts:
        counts.update(word for word, _ in split.pre_tokenize_str(text))
    return dict(counts)


def hf_train(texts: list[str], **options: Any) -> tuple[Vocab, Any]:
    tok = tokenizers.Tokenizer(tokenizers.models.Unigram())
    tok.pre_tokenizer = tokenizers.pre_tokenizers.Whitespace()
    tok.train_from_iterator(texts, tokenizers.trainers.UnigramTrainer(show_progress=False, **options))
    model = json.loads(tok.to_str())["model"]
    return [(piece, score) for piece, score in model["vocab"]], model["unk_id"]


def assert_same_vocab(ours: Vocab, theirs: Vocab) -> None:
    """`ours` equals `theirs` up to HF's run-to-run freedom (see the module docstring)."""
    assert len(ours) == len(theirs)
    mine, hf = dict(ours), dict(theirs)
    assert set(mine) == set(hf)
    moved = sorted(piece for piece in mine if abs(mine[piece] - hf[piece]) > TOLERANCE)
    assert all(len(piece) == 1 for piece in moved), moved
    for a, b in zip(sorted(mine[p] for p in moved), sorted(hf[p] for p in moved), strict=True):
        assert abs(a - b) <= TOLERANCE
    for (_, a), (_, b) in zip(ours, theirs, strict=True):
        assert abs(a - b) <= TOLERANCE


@pytest.mark.parametrize("corpus, chars, options", [
    ("en", 8_000, {}),
    ("multi", 5_000, {"max_piece_length": 5}),
    ("code", 6_000, {"seed_size": 150}),
])
def test_seeds_equal_hf(corpus: str, chars: int, options: dict[str, Any]) -> None:
    texts = lines(corpus, chars)
    theirs, _ = hf_train(texts, vocab_size=1_000_000, n_sub_iterations=0, **options)
    seeds = UnigramTrainer(**options).seeds(word_counts(texts))
    assert seeds[0][0] == "<UNK>" and math.isnan(seeds[0][1])
    assert sorted(seeds[1:]) == sorted(theirs)


CASES: list[tuple[str, int, dict[str, Any]]] = [
    ("en", 12_000, {"vocab_size": 300}),
    ("multi", 9_000, {"vocab_size": 400, "unk_token": "<unk>", "special_tokens": ["<pad>", "<s>"]}),
    ("code", 9_000, {"vocab_size": 350, "unk_token": "<unk>", "special_tokens": ["<s>", "<unk>"],
                     "shrinking_factor": 0.6, "n_sub_iterations": 1, "max_piece_length": 6}),
    ("en", 6_000, {"vocab_size": 250, "initial_alphabet": ["q", "zed", "é"]}),
]


@pytest.mark.parametrize("corpus, chars, options", CASES)
def test_vocabulary_equals_hf(corpus: str, chars: int, options: dict[str, Any]) -> None:
    texts = lines(corpus, chars)
    runs = [hf_train(texts, **options) for _ in range(3)]
    assert all({p for p, _ in vocab} == {p for p, _ in runs[0][0]} for vocab, _ in runs), "HF's runs disagree"
    got = UnigramTrainer(**options).train(word_counts(texts))
    specials = (["<unk>"] if options.get("unk_token") not in (None, *options.get("special_tokens", [])) else []) \
        + options.get("special_tokens", [])
    assert [p for p, _ in got.pieces[:len(specials)]] == specials
    for vocab, unk_id in runs:
        assert got.unk_id == unk_id
        assert_same_vocab(got.pieces, vocab)


TIES: list[tuple[dict[str, int], dict[str, Any]]] = [
    # a 2-best hypothesis pushed with the score of its parent in the heap rises above it
    ({"baaac": 1, "cc": 3, "abc": 3, "cacba": 1, "baa": 3, "aabab": 1, "abbabc": 2, "aaab": 3, "bac": 3, "bb": 1},
     {"vocab_size": 5, "n_sub_iterations": 0, "shrinking_factor": 0.5}),
    # popping sinks the hole toward the later of two equally good children
    ({"ab": 2, "bab": 3, "aaabbb": 1, "ba": 1, "babababba": 3, "baaaa": 1, "aabba": 1, "abaa": 1, "babbbbaabb": 1,
      "aabaab": 1, "baababb": 1}, {"vocab_size": 8, "n_sub_iterations": 0, "shrinking_factor": 0.75}),
    # Viterbi keeps the first of two equally good left nodes
    ({"cbbabc": 1, "caaaca": 2, "bbbaac": 3, "bacb": 3, "cbcc": 1},
     {"vocab_size": 6, "n_sub_iterations": 0, "shrinking_factor": 0.5}),
]


@pytest.mark.parametrize("counts, options", TIES)
def test_ties_break_as_hf(counts: dict[str, int], options: dict[str, Any]) -> None:
    texts = [word for word, count in counts.items() for _ in range(count)]
    got = UnigramTrainer(**options).train(counts)
    for _ in range(3):
        theirs, _ = hf_train(texts, **options)
        assert_same_vocab(got.pieces, theirs)


@pytest.mark.parametrize("options", [{"vocab_size": 10}, {"vocab_size": 10, "unk_token": "<unk>",
                                                           "special_tokens": ["<s>"]}])
def test_empty_corpus_as_hf(options: dict[str, Any]) -> None:
    theirs, unk_id = hf_train([""], **options)
    got = UnigramTrainer(**options).train({})
    assert (got.pieces, got.unk_id) == (theirs, unk_id)


def test_too_small_a_vocabulary_is_refused_as_hf_refuses() -> None:
    texts = lines("multi", 3_000)
    with pytest.raises(Exception, match="not large enough"):
        hf_train(texts, vocab_size=20)
    with pytest.raises(polytok.PolytokError, match="cannot hold"):
        UnigramTrainer(vocab_size=20).train(word_counts(texts))


def test_train_on_a_pipeline_loads_in_hf_and_encodes_alike() -> None:
    texts = lines("en", 8_000)
    pipeline = {"pre_tokenizer": {"type": "Whitespace"}, "model": {"type": "Unigram"}}
    got = train(texts, pipeline, UnigramTrainer(vocab_size=260, unk_token="<unk>", special_tokens=["<s>"]))
    loaded = tokenizers.Tokenizer.from_str(got.to_str())
    theirs, unk_id = hf_train(texts, vocab_size=260, unk_token="<unk>", special_tokens=["<s>"])
    assert got.data["model"]["unk_id"] == unk_id == 0
    assert_same_vocab([(p, s) for p, s in got.data["model"]["vocab"]], theirs)
    sample = "Unigram <s> zebra quaffs 42"
    assert got.encode(sample) == loaded.encode(sample).ids


def test_train_new_on_albert_equals_transformers() -> None:
    transformers = pytest.importorskip("transformers")
    texts = lines("multi", 10_000)
    folder = fixture_path("albert-base-v2-tf5", "tokenizer.json").parent
    ref = transformers.AutoTokenizer.from_pretrained(str(folder)).train_new_from_iterator(texts, 500)
    got = polytok.load(str(folder / "tokenizer.json")).train_new(texts, 500)
    theirs = json.loads(ref.backend_tokenizer.to_str())
    mine = json.loads(tokenizers.Tokenizer.from_str(got.to_str()).to_str())  # type: ignore[attr-defined]
    assert {k: v for k, v in mine["model"].items() if k != "vocab"} \
        == {k: v for k, v in theirs["model"].items() if k != "vocab"}
    assert_same_vocab([(p, s) for p, s in mine["model"]["vocab"]], [(p, s) for p, s in theirs["model"]["vocab"]])
    assert mine["added_tokens"] == theirs["added_tokens"]
    assert mine["post_processor"] == theirs["post_processor"]
    sample = "Hello wörld, [CLS] 你好 ok"
    assert got.encode(sample) == ref.backend_tokenizer.encode(sample).ids


def test_cli_model_unigram_writes_what_hf_trains(tmp_path: Path) -> None:
    from polytok.cli.main import main
    corpus = tmp_path / "corpus.txt"
    corpus.write_text(bench_slice("en", 6_000), encoding="utf-8")
    out = tmp_path / "tokenizer.json"
    assert main(["train", str(corpus), "--model", "unigram", "--vocab-size", "240", "--special-token", "<s>",
                 "--out", str(out)]) == 0
    written = tokenizers.Tokenizer.from_file(str(out))
    ref = tokenizers.Tokenizer(tokenizers.models.Unigram())
    ref.normalizer = tokenizers.normalizers.NFKC()
    ref.pre_tokenizer = tokenizers.pre_tokenizers.Metaspace()
    trainer = tokenizers.trainers.UnigramTrainer(vocab_size=240, unk_token="<unk>", special_tokens=["<s>"],
                                                 show_progress=False)
    ref.train([str(corpus)], trainer)  # HF reads the file's lines with their ends, as polytok does
    mine, theirs = json.loads(written.to_str())["model"], json.loads(ref.to_str())["model"]
    assert mine["unk_id"] == theirs["unk_id"]
    assert_same_vocab([(p, s) for p, s in mine["vocab"]], [(p, s) for p, s in theirs["vocab"]])


@pytest.mark.slow
@pytest.mark.parametrize("corpus", ["en", "multi", "code"])
@pytest.mark.parametrize("vocab_size", [200, 800, 2000])
def test_vocabulary_sweep(corpus: str, vocab_size: int) -> None:
    texts = lines(corpus, 60_000)
    runs = [hf_train(texts, vocab_size=vocab_size, unk_token="<unk>") for _ in range(3)]
    got = UnigramTrainer(vocab_size=vocab_size, unk_token="<unk>").train(word_counts(texts))
    sets = [{p for p, _ in vocab} for vocab, _ in runs]
    assert {p for p, _ in got.pieces} in sets
    for vocab, _ in runs:
        if {p for p, _ in vocab} == {p for p, _ in got.pieces}:
            assert_same_vocab(got.pieces, vocab)
