"""Encoding a long word takes memory in proportion to the text, a few dozen bytes a byte, not hundreds.

A run of one letter, or CJK without punctuation, reaches the model as one word (or,
for sentencepiece and llama.cpp's SPM, the whole text is one piece). Each case runs
one encode in a fresh interpreter (tests/robustness/encode_memory.py) and checks the
growth of its peak RSS against `BYTES_PER_BYTE` times the text's UTF-8 size (a
memory measurement, not a timing: a byte-level model has a symbol per byte, and the
merge loops had taken ~200 bytes per symbol), and its ids against the reference
engine run live on the same text: HF tokenizers 0.23.3 on the built-in GPT-2
tokenizer.json and on BERT's (whose normalizer spaces each CJK ideograph),
llama.cpp (llama-cpp-python 0.3.36) on its DeepSeek-LLM vocabulary (five regexes
split mixed scripts into many pieces), its nomic-bert-moe (UGM: a charsmap
normalizer, then Unigram over the whole text) and BGE (WPM: no word-length limit),
sentencepiece 0.2.3 on the .model files (fetched from its PyPI sdist). The slow sweep
runs 10 MB texts through every fixture tokenizer.
"""

from __future__ import annotations

import gzip

import pytest
from fixtures import REPO_ROOT, fixture_path

from robustness import encode_memory
from robustness.pathological import KINDS, tokenizer_files

BYTES_PER_BYTE = 60  # peak RSS growth allowed per byte of UTF-8 text
SLOW_BYTES_PER_BYTE = 80  # the 10 MB sweep: pre-tokenizer pieces and cached words add to the model's share
TIMEOUT = 900


def _hf_gpt2_ids(text: str) -> list[int]:
    tokenizers = pytest.importorskip("tokenizers")
    raw = gzip.decompress((REPO_ROOT / "src" / "polytok" / "data" / "gpt2.json.gz").read_bytes())
    return list(tokenizers.Tokenizer.from_str(raw.decode("utf-8")).encode(text).ids)


def _hf_fixture_ids(spec: str, text: str) -> list[int]:
    tokenizers = pytest.importorskip("tokenizers")
    path = next(get for family, name, get in tokenizer_files() if f"{family}/{name}" == spec)()
    return list(tokenizers.Tokenizer.from_file(str(path)).encode(text).ids)


def _llama_cpp_ids(spec: str, text: str) -> list[int]:
    pytest.importorskip("llama_cpp")
    import polytok
    from polytok.parity.engines import reference_side

    path = str(next(get for family, name, get in tokenizer_files() if f"{family}/{name}" == spec)())
    return reference_side("llama.cpp", path, "reference", polytok.load(path)).encode(text, True, None)


def _sentencepiece_ids(name: str, text: str, file: str = "spm.model") -> list[int]:
    sentencepiece = pytest.importorskip("sentencepiece")
    processor = sentencepiece.SentencePieceProcessor(model_file=str(fixture_path(name, file)))
    return list(processor.encode(text))


CASES = [
    ("gpt2", "one-char", 600_000, lambda text: _hf_gpt2_ids(text)),
    ("gpt2", "cjk", 300_000, lambda text: _hf_gpt2_ids(text)),
    ("gpt2", "letters-no-spaces", 300_000, lambda text: _hf_gpt2_ids(text)),
    ("hf_json/bert-base-uncased", "cjk", 300_000, lambda text: _hf_fixture_ids("hf_json/bert-base-uncased", text)),
    ("hf_json/bert-base-uncased", "mixed-no-spaces", 300_000,
     lambda text: _hf_fixture_ids("hf_json/bert-base-uncased", text)),
    ("gguf/deepseek-llm", "mixed-no-spaces", 300_000, lambda text: _llama_cpp_ids("gguf/deepseek-llm", text)),
    ("gguf/nomic-bert-moe", "cjk", 300_000, lambda text: _llama_cpp_ids("gguf/nomic-bert-moe", text)),
    ("gguf/bert-bge", "letters-no-spaces", 300_000, lambda text: _llama_cpp_ids("gguf/bert-bge", text)),
    ("sentencepiece/spm-botchan-unigram-1000", "one-char", 600_000,
     lambda text: _sentencepiece_ids("spm-botchan-unigram-1000", text)),
    ("sentencepiece/spm-kyoto-ja-unigram-8000", "cjk", 600_000,
     lambda text: _sentencepiece_ids("spm-kyoto-ja-unigram-8000", text)),
    ("sentencepiece/spm-mistral-v1", "spaces", 600_000,
     lambda text: _sentencepiece_ids("spm-mistral-v1", text, "tokenizer.model")),
    ("sentencepiece/spm-mistral-v1", "word-space", 600_000,
     lambda text: _sentencepiece_ids("spm-mistral-v1", text, "tokenizer.model")),
    ("sentencepiece/spm-botchan-bpe-1000", "one-char", 600_000,
     lambda text: _sentencepiece_ids("spm-botchan-bpe-1000", text)),
]


@pytest.mark.parametrize("spec,kind,size,reference", CASES, ids=[f"{c[0]}-{c[1]}" for c in CASES])
def test_a_long_word_takes_memory_in_proportion_to_the_text(spec, kind, size, reference):
    if "/" in spec:  # fetched (or skipped, when it cannot be had) here, not in the child
        next(get for family, name, get in tokenizer_files() if f"{family}/{name}" == spec)()
    found = encode_memory.run(spec, kind, size, TIMEOUT)
    assert "peak_mb" in found, found
    text = KINDS[kind](size)
    expected = reference(text)
    assert (found["ids"], found["sha256"]) == (len(expected), encode_memory.ids_digest(expected))
    per_byte = found["peak_mb"] * 1024 * 1024 / (found["mb"] * 1e6)
    assert per_byte <= BYTES_PER_BYTE, f"{spec} {kind}: {per_byte:.0f} bytes of peak RSS per byte of text"


@pytest.mark.slow
@pytest.mark.parametrize("family,name,get", list(tokenizer_files()), ids=lambda v: v if isinstance(v, str) else "")
def test_ten_megabytes_of_any_kind_take_memory_in_proportion(family, name, get):
    get()
    over = []
    for kind in ("one-char", "cjk", "letters-no-spaces", "mixed-no-spaces", "emoji", "spaces"):
        found = encode_memory.run(f"{family}/{name}", kind, 10_000_000 // len(KINDS[kind](1).encode()), 3 * TIMEOUT)
        if found.get("refused"):
            continue
        assert "peak_mb" in found, (kind, found)
        per_byte = found["peak_mb"] * 1024 * 1024 / (found["mb"] * 1e6)
        if per_byte > SLOW_BYTES_PER_BYTE:
            over.append(f"{kind}: {per_byte:.0f} bytes per byte ({found['peak_mb']:.0f} MB)")
    assert not over, over
