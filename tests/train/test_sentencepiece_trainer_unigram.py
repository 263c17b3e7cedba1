"""`train_sentencepiece(model_type="unigram")` against sentencepiece 0.2.3's trainer, run live.

sentencepiece does not expose its seed pieces, so the seed step is checked on its own
against a brute-force count of the branching substrings; then the whole model (pieces,
float32 scores, types, specs) must equal spm's byte for byte, and sentencepiece must
give the same ids with both models. Default cases are small corpora (the pure Python
EM is slow); the sweep is ``slow``.
"""

from __future__ import annotations

import io
import math
from typing import Any

import pytest
from fixtures import bench_slice, edge_texts

from polytok.train.sentencepiece_pieces import PieceRules
from polytok.train.sentencepiece_seeds import lcp_array, seed_pieces, suffix_array
from polytok.train.sentencepiece_trainer import train_sentencepiece
from polytok.train.sentencepiece_unigram import digamma

spm = pytest.importorskip("sentencepiece")
model_pb2 = pytest.importorskip("sentencepiece.sentencepiece_model_pb2")


def lines(name: str, n_chars: int) -> list[str]:
    return [line for line in bench_slice(name, n_chars).split("\n") if line.strip()]


def spm_train(texts: list[str], **options: Any) -> bytes:
    out = io.BytesIO()
    spm.SentencePieceTrainer.train(sentence_iterator=iter(texts), model_writer=out, minloglevel=2,
                                   **{"num_threads": 1, **options})
    return out.getvalue()


def pieces_of(model: bytes) -> list[tuple[str, float, int]]:
    proto = model_pb2.ModelProto()
    proto.ParseFromString(model)
    return [(p.piece, p.score, p.type) for p in proto.pieces]


def assert_same_model(texts: list[str], **options: Any) -> bytes:
    expected = spm_train(texts, model_type="unigram", **options)
    ours = train_sentencepiece(texts, model_type="unigram", **{"num_threads": 1, **options})
    want, got = pieces_of(expected), pieces_of(ours)
    for index, (a, b) in enumerate(zip(want, got, strict=False)):
        assert a == b, f"id {index}: sentencepiece {a}, polytok {b}"
    assert len(want) == len(got)
    assert ours == expected
    return ours


def assert_same_ids(texts: list[str], model: bytes, **options: Any) -> None:
    reference = spm.SentencePieceProcessor(model_proto=spm_train(texts, model_type="unigram", **options))
    ours = spm.SentencePieceProcessor(model_proto=model)
    for text in texts[:40] + edge_texts():
        assert ours.encode(text) == reference.encode(text), text


def test_suffix_array_and_lcp_match_a_direct_sort() -> None:
    data = "▁abracadabra\0▁abra\0▁cadabra\0".encode() * 3 + b"\0xyz"
    order = suffix_array(data)
    assert order == sorted(range(len(data)), key=lambda i: data[i:])
    lcp = lcp_array(data, order)
    for i in range(1, len(data)):
        a, b = data[order[i - 1]:], data[order[i]:]
        common = 0
        while common < min(len(a), len(b)) and a[common] == b[common]:
            common += 1
        assert lcp[i] == common


def brute_force_candidates(data: bytes, max_chars: int) -> dict[bytes, int]:
    """Every substring of 2+ bytes occurring twice or more whose occurrences do not all continue with
    the same byte (the end of the data counts as its own continuation), cut at a trailing NUL, counts
    added up: the suffix tree's branching nodes, found without a suffix array."""
    occurrences: dict[bytes, list[int]] = {}
    for start in range(len(data)):
        for end in range(start + 2, len(data) + 1):
            occurrences.setdefault(data[start:end], []).append(start)
    counts: dict[bytes, int] = {}
    for sub, starts in occurrences.items():
        follow = {data[start + len(sub)] if start + len(sub) < len(data) else -1 for start in starts}
        if len(starts) < 2 or len(follow) < 2:
            continue
        if (sub[0] & 0xC0) == 0x80 or any(f != -1 and (f & 0xC0) == 0x80 for f in follow):
            continue
        piece = sub.rstrip(b"\0")
        if b"\0" in piece or not 1 < len(piece.decode()) <= max_chars:
            continue
        if PieceRules().is_valid(piece.decode()):
            counts[piece] = counts.get(piece, 0) + len(starts)
    return counts


def test_seed_pieces_are_the_branching_substrings_counted() -> None:
    sentences = [("▁the▁cat▁sat▁on▁the▁mat", 2), ("▁the▁cathédral", 1), ("▁mat▁cat▁ça", 1), ("▁ça", 2)]
    seeds = seed_pieces(sentences, PieceRules(), 1000000, 100)
    data = b"".join((text.encode() + b"\0") * freq for text, freq in sentences)
    expected = brute_force_candidates(data, 16)
    chars = [piece for piece, _ in seeds if len(piece) == 1]
    assert set(chars) == set("".join(text for text, _ in sentences))
    longer = {piece.encode() for piece, _ in seeds if len(piece) > 1}
    assert longer == set(expected)
    # scores: log(count * characters / total), the single characters by their counts
    weights = {piece: float(count * len(piece.decode())) for piece, count in expected.items()}
    for text, freq in sentences:
        for char in text:
            weights[char.encode()] = weights.get(char.encode(), 0.0) + freq
    total = sum(weights.values())
    for piece, score in seeds:
        assert score == pytest.approx(math.log(weights[piece.encode()] / total), abs=1e-6), piece


def test_digamma_against_the_series_identity() -> None:
    """psi(x + 1) = psi(x) + 1/x, and psi(1) = -Euler's gamma, to the series' accuracy."""
    assert digamma(1.0) == pytest.approx(-0.5772156649015329, abs=1e-9)
    for x in (0.5, 2.5, 7.0, 123.25):
        assert digamma(x + 1) == pytest.approx(digamma(x) + 1 / x, abs=1e-9)


CASES = [
    pytest.param("en", 5_000, {"vocab_size": 200}, id="en-200"),
    pytest.param("multi", 5_000, {"vocab_size": 300, "character_coverage": 0.98}, id="multi-coverage"),
    pytest.param("code", 3_000, {"vocab_size": 200, "split_by_whitespace": False, "split_digits": True},
                 id="code-nowhitespace-digits"),
    pytest.param("en", 4_000, {"vocab_size": 450, "hard_vocab_limit": False, "byte_fallback": True,
                               "user_defined_symbols": ["the"], "control_symbols": ["<c>"], "num_threads": 3,
                               "shrinking_factor": 0.6},
                 id="meta-threads-shrinking"),
]


@pytest.mark.parametrize(("corpus", "n_chars", "options"), CASES)
def test_unigram_same_model_as_spm_train(corpus: str, n_chars: int, options: dict[str, Any]) -> None:
    texts = lines(corpus, n_chars)
    model = assert_same_model(texts, **options)
    assert_same_ids(texts, model, **options)


def test_unigram_without_hard_vocab_limit_keeps_what_training_gives() -> None:
    assert_same_model(lines("en", 3_000), vocab_size=3000, hard_vocab_limit=False, num_sub_iterations=1)


SWEEP = [
    (corpus, n_chars, vocab, extra)
    for corpus, n_chars in (("en", 60_000), ("multi", 50_000), ("code", 40_000))
    for vocab in (500, 2000)
    for extra in ({}, {"byte_fallback": True, "character_coverage": 0.995, "num_threads": 4},
                  {"split_by_number": False, "max_sentencepiece_length": 8, "seed_sentencepiece_size": 3000})
]


@pytest.mark.slow
@pytest.mark.parametrize(("corpus", "n_chars", "vocab", "extra"), SWEEP)
def test_unigram_sweep(corpus: str, n_chars: int, vocab: int, extra: dict[str, Any]) -> None:
    texts = lines(corpus, n_chars)
    model = assert_same_model(texts, vocab_size=vocab, hard_vocab_limit=False, **extra)
    assert_same_ids(texts, model, vocab_size=vocab, hard_vocab_limit=False, **extra)
