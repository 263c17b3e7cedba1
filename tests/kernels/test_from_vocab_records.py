"""The compiled builders from a sentencepiece file's piece records (spm_merge ``Merger.from_vocab``,
unigram ``Lattice.from_vocab``) read the records in place when their buffer is aligned for them and
from a copy when it is not: both give the same tables, on real files."""

from __future__ import annotations

import pytest
from fixtures import bench_slice, edge_texts, fixture_path

from ._compiled import compiled

FILES = [("spm-botchan-bpe-1000", "spm.model"), ("spm-botchan-unigram-1000", "spm.model"),
         ("spm-mistral-v1", "tokenizer.model"), ("spm-kyoto-ja-unigram-8000", "spm.model")]


def _misaligned(records: bytes) -> memoryview:
    """`records` in a buffer one byte off any alignment."""
    return memoryview(bytearray(b"\0" + records))[1:]


def _words() -> list[str]:
    text = " ".join(edge_texts()[:200]) + bench_slice("en", 4000) + bench_slice("multi", 4000)
    return [word for word in text.replace(" ", "\u2581").split("\u2581") if word][:3000]


@pytest.mark.parametrize(("name", "filename"), FILES)
def test_misaligned_records_build_the_same_table(name, filename):
    vocab = compiled("spm_model").read(fixture_path(name, filename).read_bytes())
    misaligned = _misaligned(vocab.records)
    assert misaligned.tobytes() == vocab.records
    words = _words()
    if "unigram" in name:
        build = compiled("unigram").Lattice.from_vocab
        options = (0, -20.0, True, False, True, None)
        aligned, shifted = build(vocab.data, vocab.records, *options), build(vocab.data, misaligned, *options)
        assert [shifted.nodes(w, True) for w in words] == [aligned.nodes(w, True) for w in words]
    else:
        build = compiled("spm_merge").Merger.from_vocab
        options = (frozenset(), [None] * 256, 1, 0, 100, 10)
        aligned, shifted = build(vocab.data, vocab.records, *options), build(vocab.data, misaligned, *options)
        assert [shifted.ids(w) for w in words] == [aligned.ids(w) for w in words]
