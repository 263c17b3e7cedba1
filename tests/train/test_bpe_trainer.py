"""`BpeTrainer` against HF tokenizers 0.23.3's ``BpeTrainer``, run live.

Both train on the same lines: HF through ``Tokenizer.train_from_iterator``, polytok on the
word table of the same pre-tokenizer. The vocabulary (pieces and ids) and the merges, in
order, must be equal. With a prefix or suffix HF's ids for the prefixed characters follow
its hash map; there the test checks that polytok, given the word order HF's vocabulary
shows, gives HF's result, and that its own order gives one such result. A few cases run by
default; the sweep over corpora, sizes and options is ``slow``.
"""

from __future__ import annotations

import random
from typing import Any

import pytest
from fixtures import bench_slice
from hf_word_order import hf_word_order

from polytok.train.bpe_trainer import BpeTrainer, compute_alphabet, initial_chars, train_bpe, train_bpe_words
from polytok.train.word_counts import count_words

tokenizers = pytest.importorskip("tokenizers")
from tokenizers import models, pre_tokenizers, trainers  # noqa: E402


def generated_lines(n: int, seed: int = 7) -> list[str]:
    """Lines of made-up words over a small alphabet: many equal pair counts, so ties decide."""
    rng = random.Random(seed)
    syllables = ["ka", "to", "ri", "an", "ne", "su", "mo", "é", "ß", "ло", "в", "日", "本"]
    words = ["".join(rng.choice(syllables) for _ in range(rng.randint(1, 4))) for _ in range(300)]
    return [" ".join(rng.choice(words) for _ in range(rng.randint(3, 12))) for _ in range(n)]


def corpus(name: str, chars: int) -> list[str]:
    if name == "generated":
        return generated_lines(chars // 40)
    return bench_slice(name, chars).splitlines(keepends=True)


def hf_pipeline(kind: str) -> Any:
    tok = tokenizers.Tokenizer(models.BPE())
    if kind == "byte_level":
        tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    else:
        tok.pre_tokenizer = pre_tokenizers.Metaspace()
    return tok


def hf_train(lines: list[str], kind: str, options: dict[str, Any]) -> tuple[dict[str, int], list[tuple[str, str]],
                                                                                 dict[str, int]]:
    tok = hf_pipeline(kind)
    tok.train_from_iterator(lines, trainers.BpeTrainer(show_progress=False, **options))
    import json

    model = json.loads(tok.to_str())["model"]
    pre = tok.pre_tokenizer
    counts = count_words(lines, lambda s: [w for w, _ in pre.pre_tokenize_str(s)])
    return model["vocab"], [tuple(m) for m in model["merges"]], counts


def options_for(kind: str, extra: dict[str, Any]) -> dict[str, Any]:
    opts = dict(extra)
    if kind == "byte_level":
        opts.setdefault("initial_alphabet", pre_tokenizers.ByteLevel.alphabet())
    return opts


def check_equal(lines: list[str], kind: str, extra: dict[str, Any]) -> None:
    opts = options_for(kind, extra)
    vocab, merges, counts = hf_train(lines, kind, opts)
    got = BpeTrainer(**opts).train(counts)
    assert list(got.vocab.items()) == list(vocab.items())
    assert got.merges == merges


CASES = [
    ("bench_en", 60_000, "byte_level", {"vocab_size": 700}),
    ("bench_multi", 40_000, "metaspace", {"vocab_size": 5000, "min_frequency": 3}),
    ("bench_multi", 30_000, "metaspace", {"vocab_size": 700, "special_tokens": ["<unk>", "<s>"], "limit_alphabet": 90}),
    ("generated", 20_000, "byte_level", {"vocab_size": 500, "max_token_length": 3}),
    # a limit no piece reaches: the trainer's list path (kept for max_token_length) on ordinary ties
    ("bench_multi", 30_000, "metaspace", {"vocab_size": 900, "max_token_length": 1000}),
]


@pytest.mark.parametrize(("name", "chars", "kind", "extra"), CASES)
def test_bpe_equals_hf(name: str, chars: int, kind: str, extra: dict[str, Any]) -> None:
    check_equal(corpus(name, chars), kind, extra)


# limit_alphabet with byte-level: all 256 initial characters weigh the same, and HF keeps
# whichever its hash order puts last (docs/training.md); so with Metaspace only
SWEEP = [
    (name, chars, kind, extra)
    for name in ("bench_en", "bench_code", "bench_multi", "generated")
    for chars in (100_000, 400_000)
    for kind in ("byte_level", "metaspace")
    for extra in ({"vocab_size": 1000}, {"vocab_size": 4000, "min_frequency": 2},
                  {"vocab_size": 3000, "special_tokens": ["[PAD]", "[UNK]"],
                   **({"limit_alphabet": 150} if kind == "metaspace" else {})},
                  {"vocab_size": 2000, "max_token_length": 5})
]


@pytest.mark.slow
@pytest.mark.parametrize(("name", "chars", "kind", "extra"), SWEEP)
def test_bpe_equals_hf_sweep(name: str, chars: int, kind: str, extra: dict[str, Any]) -> None:
    check_equal(corpus(name, chars), kind, extra)


def test_min_frequency_keeps_pairs_at_the_threshold() -> None:
    """Training stops at min_frequency, not at vocab_size: the last merges' counts equal it."""
    lines = corpus("generated", 8_000)
    check_equal(lines, "metaspace", {"vocab_size": 100_000, "min_frequency": 5})


def test_alphabet_limit_drops_the_rarest() -> None:
    words = [("aaab", 1), ("cd", 2)]  # a:3 b:1 c:2 d:2 ; keep 3 drops b
    assert compute_alphabet(words, set(), 3) == ["a", "c", "d"]
    # initial characters outweigh any count; among equal counts the smaller code point goes first
    assert compute_alphabet(words, {"b"}, 3) == ["a", "b", "d"]
    assert initial_chars(["xy", "", "z"]) == {"x", "z"}


@pytest.mark.parametrize("extra", [
    {"vocab_size": 600, "continuing_subword_prefix": "##"},
    {"vocab_size": 600, "end_of_word_suffix": "</w>"},
])
def test_prefix_suffix_is_a_result_hf_gives(extra: dict[str, Any]) -> None:
    lines = corpus("bench_en", 30_000)
    opts = options_for("metaspace", extra)
    vocab, merges, counts = hf_train(lines, "metaspace", opts)
    order = hf_word_order(vocab, counts, opts)
    got = train_bpe_words(order, BpeTrainer(**opts))
    assert list(got.vocab.items()) == list(vocab.items())
    assert got.merges == merges
    # polytok's own order (code points) is one HF's hash map can take: the same pieces before
    # merging, in another order, and the same number of pieces in all
    ours = train_bpe(counts, BpeTrainer(**opts))
    first_merge = len(vocab) - len(merges)
    assert sorted(list(ours.vocab)[:first_merge]) == sorted(list(vocab)[:first_merge])
    assert len(ours.vocab) == len(vocab)


def test_tie_break_prefers_the_smaller_pair() -> None:
    """Two pairs of equal count: the pair of smaller ids merges first (HF's Merge ordering)."""
    counts = {"ab": 2, "cd": 2}
    got = BpeTrainer(vocab_size=5).train(counts)
    assert got.merges == [("a", "b")]
    check_equal(["ab cd ab cd zy zy"], "metaspace", {"vocab_size": 9})
