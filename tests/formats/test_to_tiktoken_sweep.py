"""write_tiktoken over every byte-level BPE fixture (slow): tiktoken 0.14 live against the source's engine.

tokenizer.json sources against HF tokenizers 0.23.3 (test_to_tiktoken.check_against_hf: edge texts,
20 000-character slices of the bench texts, the special tokens); GGUF sources against llama.cpp's
golden ids (tests/golden/gguf) where written, with the reason asserted where refused; the shipped
tiktoken files written back byte for byte. The default run keeps one case of each
(test_to_tiktoken.py).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from fixtures import fixture_path, gguf_vocab_path

from formats.test_to_tiktoken import check_against_hf, gguf_rows, texts, tiktoken_of
from polytok.convert.outcome import ConversionRefused
from polytok.convert.to_tiktoken import write_tiktoken

pytestmark = pytest.mark.slow

GGUF_REFUSED = {
    "aquila": "pre type 'default' runs 4 regexes one after another",
    "baichuan": "the GGUF vocabulary is llama, not a byte-level BPE",
    "bert-bge": "the GGUF vocabulary is bert, not a byte-level BPE",
    "command-r": "pre type 'command-r' runs 2 regexes one after another",
    "deepseek-coder": "pre type 'deepseek-coder' runs 5 regexes one after another",
    "deepseek-llm": "pre type 'deepseek-llm' runs 6 regexes one after another",
    "falcon": "pre type 'falcon' runs 3 regexes one after another",
    "gemma-4": "the GGUF vocabulary is gemma4, not a byte-level BPE",
    "gpt-neox": "pre type 'default' runs 4 regexes one after another",
    "llama-spm": "the GGUF vocabulary is llama, not a byte-level BPE",
    "mpt": "no token for the single byte b'\\xc0' (13 of the 256 missing)",
    "nomic-bert-moe": "the GGUF vocabulary is t5, not a byte-level BPE",
    "phi-3": "the GGUF vocabulary is llama, not a byte-level BPE",
    "qwen2": "merge #127991 '</s' + '>': '</s>' is not a token of the vocabulary",
    "qwen35": "merge #127991 '</s' + '>': '</s>' is not a token of the vocabulary",
    "refact": "pre type 'refact' runs 2 regexes one after another",
    "starcoder": "pre type 'starcoder' runs 2 regexes one after another",
}
GGUF_WRITTEN = ["gpt-2", "llama-bpe"]


@pytest.mark.parametrize("name", ["whisper-tiny", "olmo-dolma2", "llama3", "gpt4o"])
def test_hf_source_gives_hf_ids(tmp_path, name):
    check_against_hf(fixture_path(name, "tokenizer.json"), tmp_path / "out.tiktoken", texts(20000))


def test_llama3_tokenizer_json_gives_the_llama3_rank_file(tmp_path):
    write_tiktoken(str(fixture_path("llama3", "tokenizer.json")), str(tmp_path / "out.tiktoken"))
    assert (tmp_path / "out.tiktoken").read_bytes() == fixture_path("llama3-tiktoken", "tokenizer.model").read_bytes()


@pytest.mark.parametrize("name, reason", [("claude", "a normalizer (NFKC): tiktoken has none"),
                                          ("qwen3", "a normalizer (NFC): tiktoken has none")])
def test_normalizers_are_refused(tmp_path, name, reason):
    with pytest.raises(ConversionRefused) as caught:
        write_tiktoken(str(fixture_path(name, "tokenizer.json")), str(tmp_path / "out.tiktoken"))
    assert caught.value.reasons == [reason]


@pytest.mark.parametrize("name", GGUF_WRITTEN)
def test_gguf_source_gives_llama_cpp_ids(tmp_path, name):
    enc = tiktoken_of(write_tiktoken(str(gguf_vocab_path(name)), str(tmp_path / "out.tiktoken")))
    rows = [row for row in gguf_rows(name) if row["parse_special"] and not row["add_special"]]
    assert rows
    for row in rows:
        assert enc.encode(row["text"], allowed_special="all") == row["ids"], row["name"]


def test_every_gguf_golden_vocabulary_is_written_or_refused():
    names = sorted(p.name.removesuffix(".jsonl.gz") for p in (Path(__file__).parents[1] / "golden" / "gguf")
                   .glob("*.jsonl.gz"))
    assert names == sorted([*GGUF_REFUSED, *GGUF_WRITTEN])


@pytest.mark.parametrize("name", sorted(GGUF_REFUSED))
def test_gguf_refusals(tmp_path, name):
    with pytest.raises(ConversionRefused) as caught:
        write_tiktoken(str(gguf_vocab_path(name)), str(tmp_path / "out.tiktoken"))
    assert caught.value.reasons[0].startswith(GGUF_REFUSED[name]), caught.value.reasons


@pytest.mark.parametrize("name, filename", [
    ("llama3-tiktoken", "tokenizer.model"),
    ("whisper-multilingual-tiktoken", "multilingual.tiktoken"),  # a token of no bytes, written "="
    ("llama4-tiktoken", "tokenizer.model"),
])
def test_rank_files_are_written_back_byte_for_byte(tmp_path, name, filename):
    source = fixture_path(name, filename)
    write_tiktoken(str(source), str(tmp_path / "out.tiktoken"))
    assert (tmp_path / "out.tiktoken").read_bytes() == source.read_bytes()
