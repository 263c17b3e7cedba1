"""vocab.txt (WordPiece) against transformers 5.24.0's BertTokenizerFast, run live.

Expected ids and texts come only from transformers (BertTokenizerFast(vocab_file) and
BertTokenizerFast.from_pretrained(folder) for the config cases), never from polytok.
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
from polytok.formats.wordpiece_vocab import read_wordpiece_vocab

transformers = pytest.importorskip("transformers")

FILES = ("bert-base-cased-vocab", "bert-chinese-vocab")


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


@pytest.mark.parametrize("lowercase", [True, False], ids=["default", "cased"])
@pytest.mark.parametrize("name", FILES)
def test_vocab_file_matches_bert_tokenizer_fast(name: str, lowercase: bool) -> None:
    path = fixtures.fixture_path(name, "vocab.txt")
    kwargs = {} if lowercase else {"do_lower_case": False}
    ref = transformers.BertTokenizerFast(str(path), **kwargs)
    ref_as_text = transformers.BertTokenizerFast(str(path), split_special_tokens=True, **kwargs)
    tok = read_wordpiece_vocab(path) if lowercase else read_wordpiece_vocab(path, lowercase=False)
    assert len(tok) == len(ref)
    assert tok.get_vocab() == ref.get_vocab()
    _compare(ref, ref_as_text, tok, _texts())


def test_default_lowercases() -> None:
    """The default is do_lower_case=True (a mutant default of False fails here)."""
    path = fixtures.fixture_path("bert-base-cased-vocab", "vocab.txt")
    ref = transformers.BertTokenizerFast(str(path))
    assert read_wordpiece_vocab(path).encode("Hello WORLD") == ref("Hello WORLD")["input_ids"]
    assert polytok.load(path).encode("Hello WORLD") == ref("Hello WORLD")["input_ids"]


def test_load_dispatches_to_the_reader(tmp_path: Path) -> None:
    src = fixtures.fixture_path("bert-chinese-vocab", "vocab.txt")
    shutil.copy(src, tmp_path / "vocab.txt")
    tok = polytok.load(tmp_path, lowercase=False)
    ref = transformers.BertTokenizerFast(str(src), do_lower_case=False)
    assert tok.facts.format == "wordpiece_vocab"
    assert tok.encode("Ab 中文 [MASK]") == ref("Ab 中文 [MASK]")["input_ids"]
    assert tok.token_to_id("[MASK]") == ref.convert_tokens_to_ids("[MASK]")
    assert tok.id_to_token(103) == ref.convert_ids_to_tokens(103)


CONFIGS: dict[str, tuple[dict[str, Any], dict[str, Any] | None, dict[str, Any]]] = {
    # name: (tokenizer_config.json, special_tokens_map.json or None, keyword options)
    "cased-config": ({"do_lower_case": False, "tokenizer_class": "BertTokenizer"}, None, {}),
    "strip-accents-no-cjk": ({"do_lower_case": False, "strip_accents": True, "tokenize_chinese_chars": False},
                             None, {}),
    "option-overrides-config": ({"do_lower_case": False}, None, {"do_lower_case": True}),
    "split-and-cleanup": ({"split_special_tokens": True, "clean_up_tokenization_spaces": True}, None, {}),
    "added-tokens-decoder": ({
        "do_lower_case": True,
        "mask_token": "[MASK]",
        "added_tokens_decoder": {
            "103": {"content": "[MASK]", "lstrip": True, "normalized": False, "rstrip": False,
                    "single_word": False, "special": True},
            "28996": {"content": "<New>", "lstrip": False, "normalized": True, "rstrip": True,
                      "single_word": False, "special": False},
            "28997": {"content": "<Sp>", "special": True, "normalized": True},
            "28998": {"content": "<Raw>", "special": False, "normalized": False},
        }}, None, {}),
    "typed-added-token": ({"do_lower_case": True,
                           "mask_token": {"__type": "AddedToken", "content": "[MASK]", "lstrip": True,
                                          "normalized": False, "rstrip": False, "single_word": False},
                           "additional_special_tokens": ["<Extra>"]}, None, {}),
    "decoder-without-named": ({"added_tokens_decoder": {
        "0": {"content": "[PAD]", "special": True}, "100": {"content": "[UNK]", "special": True},
        "28996": {"content": "<Mark>", "special": False}}}, None, {"unk_token": "[PAD]"}),
    "decoder-hides-special-map": ({"added_tokens_decoder": {"100": {"content": "[UNK]", "special": True}}},
                                  {"additional_special_tokens": ["<Extra2>"], "mask_token": "[UNK]"}, {}),
    "legacy-special-map": ({"do_lower_case": False},
                           {"mask_token": {"content": "[MASK]", "lstrip": True, "normalized": False,
                                           "rstrip": False, "single_word": False},
                            "cls_token": "[CLS]", "additional_special_tokens": ["<extra>"]}, {}),
}


@pytest.mark.parametrize("case", sorted(CONFIGS))
def test_folder_config_as_from_pretrained(tmp_path: Path, case: str) -> None:
    config, special_map, options = CONFIGS[case]
    shutil.copy(fixtures.fixture_path("bert-base-cased-vocab", "vocab.txt"), tmp_path / "vocab.txt")
    (tmp_path / "tokenizer_config.json").write_text(json.dumps(config), encoding="utf-8")
    if special_map is not None:
        (tmp_path / "special_tokens_map.json").write_text(json.dumps(special_map), encoding="utf-8")
    ref = transformers.BertTokenizerFast.from_pretrained(str(tmp_path), **options)
    ref_as_text = transformers.BertTokenizerFast.from_pretrained(str(tmp_path), split_special_tokens=True,
                                                                 **options)
    tok = read_wordpiece_vocab(tmp_path / "vocab.txt", **options)
    assert tok.get_vocab() == ref.get_vocab()
    texts = fixtures.edge_texts()[:80] + ["Hello [MASK] world , it 's <NEW>  x <SP> <Sp> <extra> Ça [CLS]! "
                                          "<Raw><raw> <EXTRA> <Extra> <Mark><mark>",
                                          "don 't do not . ?"]
    if ref.split_special_tokens:
        ref = transformers.BertTokenizerFast.from_pretrained(str(tmp_path), split_special_tokens=False,
                                                             **options)
        assert tok.encode(texts[-2]) == ref_as_text(texts[-2])["input_ids"]  # the config's default
    _compare(ref, ref_as_text, tok, texts)


def test_vocab_lines_as_tokenizers_reads_them(tmp_path: Path) -> None:
    """CRLF, trailing White_Space, duplicates (last index wins), no final newline."""
    vocab = tmp_path / "vocab.txt"
    vocab.write_bytes("[PAD]\r\n[UNK]\n[CLS]\n[SEP]\n[MASK]\nab \u3000\n##c\nab\nx\u00a0\n##c\nd".encode())
    ref = transformers.BertTokenizerFast(str(vocab))
    tok = read_wordpiece_vocab(vocab)
    assert tok.get_vocab() == ref.get_vocab()
    for text in ("ab abc x d dab", "[MASK]abc", ""):
        assert tok.encode(text) == ref(text)["input_ids"]


@pytest.mark.parametrize("content, line", [
    (b"[PAD]\n[UNK]\nok\n\xff\xfe bad\n", 4),
    (b"", 1),
    (b"\n", 1),
])
def test_bad_file_names_the_line(tmp_path: Path, content: bytes, line: int) -> None:
    vocab = tmp_path / "vocab.txt"
    vocab.write_bytes(content)
    if content == b"\n":
        # one empty line is a one-entry vocabulary (the empty token), as in tokenizers
        ref = transformers.BertTokenizerFast(str(vocab))
        assert read_wordpiece_vocab(vocab).get_vocab() == ref.get_vocab()
        return
    with pytest.raises(FormatError) as info:
        read_wordpiece_vocab(vocab)
    assert info.value.line == line
    assert str(vocab) in str(info.value) and f"line {line}" in str(info.value)


def test_unknown_option_is_an_error() -> None:
    path = fixtures.fixture_path("bert-base-cased-vocab", "vocab.txt")
    with pytest.raises(FormatError, match="no option"):
        read_wordpiece_vocab(path, add_prefix_space=True)


def test_encode_full_tokens_offsets_type_ids() -> None:
    """encode_full against the reference Encoding: tokens, offsets and (pair) type ids."""
    path = fixtures.fixture_path("bert-chinese-vocab", "vocab.txt")
    ref = transformers.BertTokenizerFast(str(path))
    tok = read_wordpiece_vocab(path)
    for text in _texts():
        want = ref(text, "pair text", return_offsets_mapping=True)
        got = tok.encode_full(text, pair="pair text")
        assert got.tokens == want.tokens(), text[:40]
        assert [tuple(o) for o in got.offsets] == [tuple(o) for o in want["offset_mapping"]], text[:40]
        assert got.type_ids == want["token_type_ids"], text[:40]
