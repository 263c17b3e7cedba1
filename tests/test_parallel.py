"""encode_batch over forked processes (polytok.parallel.batches): the same ids as the reference's batch call."""

from __future__ import annotations

import re

import pytest
from fixtures import HF_JSON_FIXTURES, bench_slice, edge_texts, fixture_path

import polytok
from polytok import parallel
from polytok.parallel import batches

tokenizers = pytest.importorskip("tokenizers")
pytestmark = pytest.mark.skipif(not parallel.can_fork(), reason="no fork start method here: batches stay serial")


@pytest.mark.parametrize("name", ["gpt2", "llama2"])
def test_pool_ids_equal_tokenizers_encode_batch(name):
    path = fixture_path(name, HF_JSON_FIXTURES[name])
    texts = list(edge_texts()) + [line for line in bench_slice("bench_multi", 40_000).split("\n") if line]
    ref = tokenizers.Tokenizer.from_file(str(path))
    expected = [e.ids for e in ref.encode_batch(texts, add_special_tokens=True)]
    tok = polytok.load(path)
    assert tok.encode_batch(texts, workers=2) == expected
    assert tok.encode_batch(texts, workers=1) == expected


def test_padding_applies_to_the_whole_batch():
    path = fixture_path("gpt2", HF_JSON_FIXTURES["gpt2"])
    ref = tokenizers.Tokenizer.from_file(str(path))
    ref.enable_padding(pad_id=50256, pad_token="<|endoftext|>")
    texts = ["a", "a much longer text than the first", "mid sized one"] * 4
    tok = polytok.load(path)
    tok.padding = polytok.Padding(pad_id=50256, pad_token="<|endoftext|>")
    assert tok.encode_batch(texts, workers=3) == [e.ids for e in ref.encode_batch(texts)]


def test_an_error_in_a_worker_is_raised_as_this_process_raises_it():
    tok = polytok.load("gpt2")
    texts = ["fine"] * 10 + [None] + ["fine"] * 10  # HF raises TypeError too
    with pytest.raises(Exception) as serial:
        tok.encode_batch(texts, workers=1)
    with pytest.raises(type(serial.value)):
        tok.encode_batch(texts, workers=2)


def test_an_encode_error_past_the_first_share_is_raised_with_its_own_type_and_message():
    """A text that only fails when encoded (a lone surrogate), among the spans the forked
    processes share: the error is the one a one-process encode raises, not a worker's repr."""
    tok = polytok.load("gpt2")
    texts = ["fine text"] * 30 + ["a\ud800b"] + ["fine text"] * 10
    with pytest.raises(polytok.PolytokError) as serial:
        tok.encode_batch(texts, workers=1)
    with pytest.raises(type(serial.value), match=re.escape(str(serial.value))):
        tok.encode_batch(texts, workers=2)


def test_workers_must_be_positive():
    with pytest.raises(ValueError, match="workers"):
        polytok.load("gpt2").encode_batch(["a"], workers=0)


@pytest.mark.parametrize("sizes", [[], [5], [1] * 10, [100, 1, 1, 1, 100], [0, 0, 0], list(range(50))])
@pytest.mark.parametrize("parts", [1, 2, 3, 8])
def test_spans_cover_the_batch_in_order(sizes, parts):
    spans = batches._spans(sizes, parts)
    covered = [i for start, end in spans for i in range(start, end)]
    assert covered == list(range(len(sizes)))
    assert all(end > start for start, end in spans)


@pytest.mark.parametrize("bad", [None, 5, b"bytes", ["a", 1]])
def test_a_text_that_is_not_text_is_a_type_error_as_in_tokenizers(bad):
    import gzip

    ref = tokenizers.Tokenizer.from_str(gzip.decompress(polytok.formats.BUILTIN["gpt2"].read_bytes()).decode())
    with pytest.raises(TypeError):
        ref.encode(bad)
    tok = polytok.load("gpt2")
    with pytest.raises(TypeError, match="expected a str or a list of str"):
        tok.encode(bad)
    with pytest.raises(TypeError, match="expected a str or a list of str"):
        tok.encode_full(bad)


@pytest.mark.parametrize("name", ["llama3", "bert-base-uncased"])
def test_the_workers_words_come_back_into_this_process_cache(name):
    """After a pooled batch, this process's caches hold the words the workers met, with the
    reference's ids: a second pass of every text in this process (reading those entries)
    still equals the reference."""
    path = fixture_path(name, HF_JSON_FIXTURES[name])
    texts = [line for line in bench_slice("bench_en", 60_000).split("\n") if line] * 2
    texts += [line for line in bench_slice("bench_multi", 60_000).split("\n") if line]
    ref = tokenizers.Tokenizer.from_file(str(path))
    ref.no_truncation()
    expected = [e.ids for e in ref.encode_batch(texts, add_special_tokens=False)]
    tok = polytok.load(path)
    tok.truncation = None
    caches = batches._caches(tok)
    assert caches and all(len(cache) == 0 for cache in caches)
    assert tok.encode_batch(texts, add_special=False, workers=2) == expected
    head = max(1, len(batches._spans([len(t) for t in texts], batches.WARM_SHARE * 2 * 4)) // (batches.WARM_SHARE * 2))
    assert head < batches.WARM_SHARE * 2 * 4  # the parent encoded only the first spans itself
    filled = len(caches[0])
    assert [tok.encode(t, add_special=False) for t in texts] == expected
    assert len(caches[0]) - filled < filled // 10  # the second pass found nearly every word cached


def _square_or_fail(n: int) -> int:
    if n == 3:
        raise ValueError("three")
    return n * n


@pytest.mark.skipif(not parallel.can_fork(), reason="no fork start method here")
def test_run_shared_gives_each_outcome_in_order_and_reaps_its_workers():
    """Item 0 in this process, the others in forked children; an error comes back as its repr.
    No child is left behind, running or unreaped."""
    import os
    import time

    here = os.getpid()
    assert parallel.run_shared(lambda n: (n, os.getpid() == here), [0, 1, 2]) == \
        [(True, (0, True)), (True, (1, False)), (True, (2, False))]
    outcomes = parallel.run_shared(_square_or_fail, [2, 3, 4])
    assert outcomes[0] == (True, 4) and outcomes[2] == (True, 16)
    assert outcomes[1][0] is False and "three" in outcomes[1][1]
    deadline = time.monotonic() + 10
    while True:
        try:  # raises once this process has no child, running or not reaped (WNOWAIT: reaps none)
            os.waitid(os.P_ALL, 0, os.WEXITED | os.WNOHANG | os.WNOWAIT)
        except ChildProcessError:
            break
        assert time.monotonic() < deadline, "a run_shared worker was never reaped"
        time.sleep(0.01)
