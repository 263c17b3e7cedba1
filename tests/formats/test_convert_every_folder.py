"""Every fixture folder with a tokenizer.json, to a GGUF and back to a folder, each step proven.

`polytok.convert.convert` writes the folder as a GGUF and proves it (polytok's GGUF
reader, held to llama.cpp 0.3.36 by the goldens of test_convert*.py, or llama.cpp when
installed, against HF tokenizers on the folder; the check's named differences, each one
llama.cpp has, excepted), then writes that GGUF as a folder and proves it (HF tokenizers
on the written tokenizer.json against the GGUF's engine). The written folder must then
give the original folder's ids, HF tokenizers 0.23.3 live on both, on every check text in
all four modes, except the texts the first step's check named; the names are pinned per
folder. A folder no GGUF can express, or whose GGUF no tokenizer.json can, is refused at
that step, with the reason pinned here and listed in docs/convert.md.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fixtures import fixture_path

from polytok.convert.proof import convert
from polytok.convert.texts import CHECK_TEXTS
from polytok.errors import PolytokError

pytest.importorskip("gguf")
tokenizers = pytest.importorskip("tokenizers")

WITH_CONFIG = ("tokenizer.json", "tokenizer_config.json")
JSON = ("tokenizer.json",)
# folder -> (its files, and "exact" with the check's named differences, or the step refused and a phrase
# of the reason: "gguf" for folder -> GGUF, "hf" for GGUF -> folder)
OUTCOMES: dict[str, tuple[tuple[str, ...], str, set[str] | str]] = {
    "gpt2": (JSON, "exact", set()),
    "llama2": (WITH_CONFIG, "exact", set()),
    "llama3": (WITH_CONFIG, "exact", set()),
    "mistral-v3-hf-converted": (WITH_CONFIG, "exact", {"leading-space"}),
    "phi-3-mini": (WITH_CONFIG, "exact", {"added-made-control"}),
    "qwen3": (WITH_CONFIG, "exact", {"added-made-control", "eog-text", "normalizer"}),
    "gemma3": (WITH_CONFIG, "exact", {"added-made-control"}),
    # a word starting with llama.cpp's phantom space
    "bert-base-uncased": (JSON, "hf", "no tokenizer.json puts a mark before every word"),
    "falcon": (JSON, "hf", "'>>TITLE<<' and '<|endoftext|>' overlap"),
    "olmo-dolma2": (JSON, "hf", "'|||PHONE_NUMBER|||' and '|||EMAIL_ADDRESS|||' overlap"),
    "roberta-base": (JSON, "hf", "strip the whitespace beside them"),  # ASCII spaces, HF every space
    "chatglm3": (WITH_CONFIG, "gguf", "adds 2 tokens before the text"),
    "whisper-tiny": (JSON, "gguf", "adds 2 tokens before the text"),
    "claude": (WITH_CONFIG, "gguf", "differs: normalizer NFKC"),
    "clip": (JSON, "gguf", "no llama.cpp pre-tokenizer type splits as this tokenizer"),
    "tortoise-tts": (JSON, "gguf", "nearest: whitespace"),  # given GPT-2's architecture below
    "gpt4o": (WITH_CONFIG, "gguf", "does not read back as the folder's tokenizer: text scripts-007"),
    "labse-cropped": (JSON, "gguf", "unk_token '[UNK]' is not in the vocabulary"),
    "albert-base-v2-tf5": (WITH_CONFIG, "gguf", "Unigram (UGM) is written from a tokenizer.model"),
    "marian-nmt": (WITH_CONFIG, "gguf", "Unigram (UGM) is written from a tokenizer.model"),
    "wordlevel-en": (JSON, "gguf", "no vocabulary type for a WordLevel model"),
}
# vocabularies past 100k entries take seconds a step
SLOW = {"llama3", "qwen3", "gemma3", "gpt4o", "olmo-dolma2", "mistral-v3-hf-converted"}


def build(name: str, tmp_path: Path) -> Path:
    folder = tmp_path / name
    folder.mkdir()
    for file in OUTCOMES[name][0]:
        (folder / file).write_bytes(fixture_path(name, file).read_bytes())
    if name == "tortoise-tts":  # no architecture of its own: the path a BPE would take
        (folder / "config.json").write_text(json.dumps({"architectures": ["GPT2LMHeadModel"]}), encoding="utf-8")
    return folder


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.slow) if n in SLOW else n for n in OUTCOMES])
def test_folder_to_gguf_to_folder(name, tmp_path):
    folder = build(name, tmp_path)
    _, outcome, expected = OUTCOMES[name]
    try:
        first = convert(folder, tmp_path / "x.gguf")
    except PolytokError as exc:
        assert outcome == "gguf" and isinstance(expected, str) and expected in str(exc), str(exc)
        assert not (tmp_path / "x.gguf").exists()
        return
    assert outcome != "gguf", f"converted, expected a refusal: {expected}"
    try:
        convert(tmp_path / "x.gguf", tmp_path / "back", to="hf")
    except PolytokError as exc:
        assert outcome == "hf" and isinstance(expected, str), str(exc)
        assert any(expected in r for r in getattr(exc, "reasons", [str(exc)])), str(exc)
        return
    assert outcome == "exact", f"converted back, expected a refusal: {expected}"
    assert {d for *_, d in first.proof.known} == expected
    named = {(text, special) for text, _, special, _ in first.proof.known}
    original = tokenizers.Tokenizer.from_file(str(folder / "tokenizer.json"))
    original.no_truncation()
    original.no_padding()
    back = tokenizers.Tokenizer.from_file(str(tmp_path / "back" / "tokenizer.json"))
    bad = []
    for text_name, text in CHECK_TEXTS:
        for special in ("text", "parse"):
            original.encode_special_tokens = back.encode_special_tokens = special == "text"
            for add in (False, True):
                a, b = original.encode(text, add_special_tokens=add).ids, back.encode(text, add_special_tokens=add).ids
                if a != b and (text_name, special) not in named:
                    bad.append((text_name, special, add, a[:8], b[:8]))
    assert not bad, f"{len(bad)} text x mode pairs differ: {bad[:4]}"
