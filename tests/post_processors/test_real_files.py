"""Post-processors of real tokenizer.json files, on the edge-case texts (singles, pairs, truncation)."""

from __future__ import annotations

import pytest

from ._data import Setup, check_many, edge_texts, tokenizer_json

tokenizers = pytest.importorskip("tokenizers")


@pytest.mark.parametrize("name", ["bert-base-uncased", "llama2", "whisper-tiny", "clip", "chatglm3"])
def test_file_post_processor(name):
    base = tokenizer_json(name)
    setup = Setup(base, base["post_processor"])
    texts = list(edge_texts()[1::4])
    tally = check_many(setup, texts, list(zip(texts[::3], texts[1::3])), [None, {"max_length": 10, "stride": 2}])
    assert tally.get("ok", 0) > 50, tally
