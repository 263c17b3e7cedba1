"""Every kernel from several threads at once: the ids of each text are those of one thread alone.

The kernels release the GIL on long words, texts and scans (docs/kernels.md), and keep no
scratch shared between calls; the texts here are long enough to take those paths (words of
thousands of symbols, texts past the special-token scan's threshold) and short ones between.
"""

from __future__ import annotations

import contextlib
import threading

import pytest
from fixtures import HF_JSON_FIXTURES, bench_slice, edge_texts, fixture_path

import polytok
from polytok import kernels

# each row exercises other kernels: split + bpe_merge + special_scan, tiktoken ranks,
# charsmap + unigram, charsmap + spm_merge, wordpiece (+ the BERT cut)
_ROWS = [("gpt2", None), ("llama3", None), ("bert-base-uncased", None),
         ("cl100k_base-tiktoken", "cl100k_base.tiktoken"), ("spm-botchan-unigram-1000", "spm.model"),
         ("spm-mistral-v1", "tokenizer.model")]


def _texts() -> list[str]:
    out = edge_texts()[:40] + ["a" * 6000, "▁" * 300 + "ab" * 3000, "你好世界" * 1500, " " * 9000 + "x",
                               "Hello <|endoftext|> world [CLS] <s> " * 400]
    with contextlib.suppress(pytest.skip.Exception):
        out += [bench_slice(name, 20_000) for name in ("bench_en", "bench_code", "bench_multi")]
    return out


@pytest.mark.parametrize(("name", "filename"), _ROWS, ids=[name for name, _ in _ROWS])
def test_threads_give_one_threads_ids(name: str, filename: str | None) -> None:
    if not kernels.built():
        pytest.skip("no kernels built")
    tok = polytok.load(fixture_path(name, filename or HF_JSON_FIXTURES[name]))
    texts = _texts()
    with kernels.pure_path():
        pure = polytok.load(fixture_path(name, filename or HF_JSON_FIXTURES[name]))
    want = [pure.encode(t) for t in texts]
    results: dict[int, list[list[int]]] = {}
    errors: list[BaseException] = []
    start = threading.Barrier(4)

    def work(k: int) -> None:
        try:
            start.wait()
            half = len(texts) // 2
            order = texts[half * (k // 2):] + texts[:half * (k // 2)]  # other orders fill the caches differently
            order = order[::-1] if k % 2 else order
            got = {t: tok.encode(t) for t in order}
            results[k] = [got[t] for t in texts]
        except BaseException as exc:  # reported below, in the test's thread
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors, errors
    for k in range(4):
        for text, ids, expected in zip(texts, results[k], want):
            assert ids == expected, (k, text[:60])
