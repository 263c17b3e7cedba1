"""vocab.json + merges.txt (GPT-2 BPE) against transformers 5.24.0's GPT2TokenizerFast, run live.

Expected ids and texts come only from transformers (GPT2TokenizerFast(vocab_file, merges_file)
and GPT2TokenizerFast.from_pretrained(folder)) or from tokenizers' own errors, never from polytok.
"""

from __future__ import annotations

import contextlib
import json
import shutil
from pathlib import Path
from typing import Any

import fixtures
import pytest

import polytok
from polytok.errors import FormatError
from polytok.formats.gpt2_vocab import read_gpt2_vocab

transformers = pytest.importorskip("transformers")
tokenizers = pytest.importorskip("tokenizers")

GPT2_FILES = ("vocab.json", "merges.txt", "tokenizer_config.json", "special_tokens_map.json")


def _texts() -> list[str]:
    """The edge texts and 4000-character slices of the bench texts (when ../shared/fixtures has them)."""
    texts = fixtures.edge_texts()
    for name in ("en", "code", "multi"):
        with contextlib.suppress(pytest.skip.Exception):
            texts.append(fixtures.bench_slice(name, 4000))
    return texts


def _compare(ref: Any, ref_as_text: Any, tok: polytok.Tokenizer, texts: list[str]) -> None:
    """ids (both add_special, PARSE and AS_TEXT) and decode (both skip_special) equal the reference's."""
    bad = []
    for text in texts:
        for add in (True, False):
            want = ref(text, add_special_tokens=add)["input_ids"]
            got = tok.encode(text, add_special=add, special="parse")
            if got != want:
                bad.append(("parse", add, text[:50], want[:12], got[:12]))
            want_text = ref_as_text(text, add_special_tokens=add)["input_ids"]
            got_text = tok.encode(text, add_special=add, special="text")
            if got_text != want_text:
                bad.append(("text", add, text[:50], want_text[:12], got_text[:12]))
            for skip in (False, True):
                want_s = ref.decode(want, skip_special_tokens=skip)
                got_s = tok.decode(want, skip_special=skip)
                if got_s != want_s:
                    bad.append(("decode", skip, text[:50], want_s[:50], got_s[:50]))
    assert not bad, f"{len(bad)} mismatches, first: {bad[:3]}"


@pytest.fixture(scope="module")
def gpt2_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """GPT-2's vocab.json, merges.txt and config files, without its tokenizer.json."""
    folder = tmp_path_factory.mktemp("gpt2")
    for name in GPT2_FILES:
        shutil.copy(fixtures.fixture_path("gpt2", name), folder / name)
    return folder


def _bare_files(folder: Path, tmp_path: Path) -> Path:
    for name in ("vocab.json", "merges.txt"):
        shutil.copy(folder / name, tmp_path / name)
    return tmp_path / "vocab.json"


def test_files_match_gpt2_tokenizer_fast(gpt2_folder: Path, tmp_path: Path) -> None:
    """GPT2TokenizerFast(vocab_file, merges_file): the class defaults, no config."""
    vocab = _bare_files(gpt2_folder, tmp_path)
    merges = str(tmp_path / "merges.txt")
    ref = transformers.GPT2TokenizerFast(str(vocab), merges)
    ref_as_text = transformers.GPT2TokenizerFast(str(vocab), merges, split_special_tokens=True)
    tok = read_gpt2_vocab(vocab)
    assert len(tok) == len(ref) and tok.get_vocab() == ref.get_vocab()
    _compare(ref, ref_as_text, tok, _texts())


def test_folder_matches_from_pretrained(gpt2_folder: Path) -> None:
    """The shipped tokenizer_config.json / special_tokens_map.json, as from_pretrained reads them."""
    ref = transformers.GPT2TokenizerFast.from_pretrained(str(gpt2_folder))
    ref_as_text = transformers.GPT2TokenizerFast.from_pretrained(str(gpt2_folder), split_special_tokens=True)
    tok = polytok.load(gpt2_folder)
    assert tok.facts.format == "gpt2_vocab"
    assert tok.get_vocab() == ref.get_vocab()
    _compare(ref, ref_as_text, tok, _texts())
    assert tok.special_ids["eos"] == ref.eos_token_id == tok.token_to_id("<|endoftext|>")
    assert tok.id_to_token(15496) == ref.convert_ids_to_tokens(15496)


def test_no_prefix_space_by_default(gpt2_folder: Path, tmp_path: Path) -> None:
    """add_prefix_space defaults to False (a mutant default of True fails here)."""
    vocab = _bare_files(gpt2_folder, tmp_path)
    ref = transformers.GPT2TokenizerFast(str(vocab), str(tmp_path / "merges.txt"))
    assert read_gpt2_vocab(vocab).encode("Hello world") == ref("Hello world")["input_ids"] == [15496, 995]


CONFIGS: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {
    # name: (tokenizer_config.json, keyword options)
    "prefix-space": ({"add_prefix_space": True}, {}),
    "prefix-space-option": ({}, {"add_prefix_space": True}),
    "bos-eos": ({"add_bos_token": True, "add_eos_token": True, "pad_token": "<|pad|>"}, {}),
    "bos-only-new-token": ({"add_bos_token": True, "bos_token": "<|start|>"}, {}),
    "added-tokens": ({"added_tokens_decoder": {
        "50256": {"content": "<|endoftext|>", "special": True, "normalized": False},
        "50257": {"content": " <sep> ", "special": False, "normalized": True, "lstrip": True},
        "50258": {"content": "<|im_end|>", "special": True, "rstrip": True, "single_word": False}}},
        {}),
}


@pytest.mark.parametrize("case", sorted(CONFIGS))
def test_config_as_from_pretrained(gpt2_folder: Path, tmp_path: Path, case: str) -> None:
    config, options = CONFIGS[case]
    vocab = _bare_files(gpt2_folder, tmp_path)
    (tmp_path / "tokenizer_config.json").write_text(json.dumps(config), encoding="utf-8")
    ref = transformers.GPT2TokenizerFast.from_pretrained(str(tmp_path), **options)
    ref_as_text = transformers.GPT2TokenizerFast.from_pretrained(str(tmp_path), split_special_tokens=True,
                                                                 **options)
    tok = read_gpt2_vocab(vocab, **options)
    assert tok.get_vocab() == ref.get_vocab()
    texts = fixtures.edge_texts()[:80] + ["Hi <sep> there<|im_end|>  <|endoftext|>x<|start|><|pad|>", ""]
    _compare(ref, ref_as_text, tok, texts)
    assert tok.encode(texts[-2], pair=" b c") == ref(texts[-2], " b c")["input_ids"]


# -- malformed files: tokenizers' BPE.from_file refuses them too ------------------------------

TINY_VOCAB = {"a": 0, "b": 1, "c": 2, "ab": 3, "abc": 4}


def _tiny(tmp_path: Path, merges: str) -> tuple[Path, Path]:
    vocab = tmp_path / "vocab.json"
    vocab.write_text(json.dumps(TINY_VOCAB), encoding="utf-8")
    merges_path = tmp_path / "merges.txt"
    merges_path.write_text(merges, encoding="utf-8")
    return vocab, merges_path


def test_tiny_files_match_tokenizers(tmp_path: Path) -> None:
    vocab, merges = _tiny(tmp_path, "#version: 0.2\na b\n#version again\nab c\n")
    ref = tokenizers.Tokenizer(tokenizers.models.BPE.from_file(str(vocab), str(merges)))
    tok = read_gpt2_vocab(vocab)
    for text in ("abc", "ab", "cab", "abcabc"):
        assert tok.encode(text) == ref.encode(text).ids


@pytest.mark.parametrize("merges, line", [
    ("#version: 0.2\na b\nab d\n", 3),     # a token missing from the vocabulary
    ("a b\nb c\n", 2),                     # a merged token ("bc") missing
    ("#version: 0.2\na b\nab  c\n", 3),    # three parts
    ("a b\n\nab c\n", 2),                  # an empty line
    ("a b\nabc\n", 2),                     # one part
])
def test_bad_merges_name_the_line(tmp_path: Path, merges: str, line: int) -> None:
    vocab, merges_path = _tiny(tmp_path, merges)
    with pytest.raises(Exception):  # noqa: B017 - tokenizers raises a plain Exception
        tokenizers.models.BPE.from_file(str(vocab), str(merges_path))  # the reference refuses it too
    with pytest.raises(FormatError) as info:
        read_gpt2_vocab(vocab)
    assert info.value.line == line and info.value.file == str(merges_path)
    assert f"line {line}" in str(info.value)


def test_empty_vocab_file_is_an_error(tmp_path: Path) -> None:
    vocab, _ = _tiny(tmp_path, "")
    vocab.write_bytes(b"")
    with pytest.raises(Exception):  # noqa: B017 - tokenizers raises a plain Exception
        tokenizers.models.BPE.from_file(str(vocab), str(tmp_path / "merges.txt"))
    with pytest.raises(FormatError) as info:
        read_gpt2_vocab(vocab)
    assert info.value.line == 1 and str(vocab) in str(info.value)


def test_missing_merges_file(tmp_path: Path) -> None:
    vocab = tmp_path / "vocab.json"
    vocab.write_text(json.dumps(TINY_VOCAB), encoding="utf-8")
    with pytest.raises(FormatError, match="merges.txt"):
        read_gpt2_vocab(vocab)


def test_encode_full_tokens_offsets(gpt2_folder: Path, tmp_path: Path) -> None:
    """encode_full against the reference Encoding: tokens and offsets."""
    vocab = _bare_files(gpt2_folder, tmp_path)
    ref = transformers.GPT2TokenizerFast(str(vocab), str(tmp_path / "merges.txt"))
    tok = read_gpt2_vocab(vocab)
    for text in _texts():
        want = ref(text, return_offsets_mapping=True)
        got = tok.encode_full(text)
        assert got.tokens == want.tokens(), text[:40]
        assert [tuple(o) for o in got.offsets] == [tuple(o) for o in want["offset_mapping"]], text[:40]
