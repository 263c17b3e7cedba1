"""Loading a model folder: tokenizer.json plus the added tokens its tokenizer_config.json declares.

The reference is tokenizers' own file plus the same ``add_tokens`` call that
transformers makes for config entries the file does not hold (computed here from the
config, independently of polytok).
"""

from __future__ import annotations

import json

import pytest
from fixtures import ALL_HF_JSON, edge_texts, fixture_path

import polytok

tokenizers = pytest.importorskip("tokenizers")

WITH_CONFIG = sorted(f.name for f in ALL_HF_JSON if "tokenizer_config.json" in f.files)


def _reference(folder):
    ref = tokenizers.Tokenizer.from_file(str(folder / "tokenizer.json"))
    config = json.loads((folder / "tokenizer_config.json").read_text(encoding="utf-8"))
    present = {t.content for t in ref.get_added_tokens_decoder().values()}
    extra = []
    for _, entry in sorted(config.get("added_tokens_decoder", {}).items(), key=lambda kv: int(kv[0])):
        if entry["content"] not in present:
            special = entry.get("special", False)
            extra.append(tokenizers.AddedToken(entry["content"], single_word=entry.get("single_word", False),
                                               lstrip=entry.get("lstrip", False), rstrip=entry.get("rstrip", False),
                                               normalized=entry.get("normalized", not special), special=special))
    if extra:
        ref.add_tokens(extra)
    return ref, config


@pytest.mark.parametrize("name", WITH_CONFIG)
def test_folder_equals_reference_with_config_tokens(name):
    folder = fixture_path(name, "tokenizer.json").parent
    fixture_path(name, "tokenizer_config.json")
    ref, config = _reference(folder)
    ours = polytok.load(folder)
    assert len(ours) == ref.get_vocab_size(with_added_tokens=True)
    added = config.get("added_tokens_decoder", {}).values()
    texts = list(edge_texts())[::3] + [f"a {t['content']}b" for t in added][:50]
    for text in texts:
        assert ours.encode(text) == ref.encode(text).ids, text
    for key in ("bos_token", "eos_token"):
        value = config.get(key)
        if isinstance(value, dict):
            value = value.get("content")
        if isinstance(value, str):
            assert ours.facts.named_tokens[key.removesuffix("_token")].text == value


def test_named_special_ids_and_eos_as_end_of_generation():
    folder = fixture_path("llama3", "tokenizer.json").parent
    fixture_path("llama3", "tokenizer_config.json")
    ref = tokenizers.Tokenizer.from_file(str(folder / "tokenizer.json"))
    tok = polytok.load(folder)
    assert tok.special_ids["bos"] == ref.token_to_id("<|begin_of_text|>")
    assert tok.eog_ids == {ref.token_to_id("<|end_of_text|>")}
