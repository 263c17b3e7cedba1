"""A character with no token between characters that merge: llama.cpp's rule for GGUF, HF's for tokenizer.json.

llama.cpp (llm_tokenizer_bpe_session::tokenize) keeps the character as a symbol
that no merge crosses and drops it, or writes its <0xHH> byte tokens, only with
the ids; HF tokenizers drops it before merging. Expected GGUF ids and bytes are
llama.cpp's (tests/golden/gguf/unknown_chars/*.jsonl.gz, written by
tools/gen_llama_unknown_chars.py with llama-cpp-python 0.3.36) for two
synthetic vocabularies committed beside them and for the sdist's Falcon,
Refact, StarCoder and Gemma 4 vocabularies; the tokenizer.json side is HF
tokenizers, run live on the same vocabulary and merges.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import importlib.util
import json
from pathlib import Path

import pytest
from fixtures import gguf_vocab_path
from parity.diff_report import ids_mismatch

import polytok
from polytok.models.bpe import BPE
from polytok.parallel import long_text

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "tests" / "golden" / "gguf" / "unknown_chars"
NAMES = sorted(p.name.removesuffix(".jsonl.gz") for p in GOLDEN.glob("*.jsonl.gz"))
SYNTHETIC = [name for name in NAMES if name.startswith("synthetic-")]


def _tool():
    spec = importlib.util.spec_from_file_location("gen_llama_unknown_chars",
                                                  ROOT / "tools" / "gen_llama_unknown_chars.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


TOOL = _tool()


def _golden(name):
    with gzip.open(GOLDEN / f"{name}.jsonl.gz", "rt", encoding="utf-8") as lines:
        rows = [json.loads(line) for line in lines]
    return rows[0], rows[1:]


def _path(name):
    return GOLDEN / f"{name}.gguf" if name in SYNTHETIC else gguf_vocab_path(name)


def _plain_rows(rows):
    """The rows of the mode (add_special=False, parse_special=True), by text."""
    return {row["text"]: row["ids"] for row in rows if not row["add_special"]}


def test_every_expected_vocabulary_has_rows():
    assert set(NAMES) == {"falcon", "refact", "starcoder", "gemma-4", "synthetic-bytelevel", "synthetic-gemma4"}


@pytest.mark.parametrize("name", NAMES)
def test_ids_and_detokenize_equal_llama_cpp(name):
    header, rows = _golden(name)
    path = _path(name)
    assert hashlib.sha256(path.read_bytes()).hexdigest() == header["sha256"], "golden made from another file"
    tok = polytok.load(path)
    reports = []
    for _ in range(2):  # the second pass reads the word cache
        for row in rows:
            mode = "parse" if row["parse_special"] else "text"
            got = tok.encode(row["text"], add_special=row["add_special"], special=mode)
            report = ids_mismatch(str(path), row["text"], f"add_special={row['add_special']} special={mode}",
                                  row["ids"], got, tok.id_to_token)
            if report:
                reports.append(report)
    for row in rows:
        if "detok_keep" in row:
            expected = base64.b64decode(row["detok_keep"]).decode("utf-8", "replace")
            if tok.decode(row["ids"]) != expected:
                reports.append(f"{path} decode of {row['name']} differs")
    assert not reports, f"{len(reports)} mismatches; first ones:\n" + "\n\n".join(reports[:5])


@pytest.mark.parametrize("name", NAMES)
def test_batch_full_and_long_paths_equal_llama_cpp(name, monkeypatch):
    _, rows = _golden(name)
    tok = polytok.load(_path(name))
    plain = [row for row in rows if not row["add_special"]]  # parse_special=True
    texts, expected = [row["text"] for row in plain], [row["ids"] for row in plain]
    assert tok.encode_batch(texts, add_special=False, special="parse") == expected
    assert [tok.encode_full(t, add_special=False, special="parse").ids for t in texts] == expected
    long = next(row for row in plain if row["name"] == "long")
    monkeypatch.setattr(long_text, "MIN_CHARS", 100)
    shared = long_text.encode_long(tok, [long["text"]], add_special=False, special="parse", workers=2)
    assert shared in (None, [long["ids"]])  # None: the pipeline is encoded in one process (checked above)
    counted = long_text.count_long(tok, [long["text"]], add_special=False, special="parse", workers=2)
    assert counted in (None, [len(long["ids"])])


def test_falcon_vertical_tab_between_newline_and_spaces():
    _, rows = _golden("falcon")
    assert _plain_rows(rows)["\n\x0b  "] == [193, 258]  # 'Ċ', 'ĠĠ': \x0b has no token and blocks 'ĊĠĠ'
    assert polytok.load(gguf_vocab_path("falcon")).encode("\n\x0b  ", add_special=False) == [193, 258]


@pytest.mark.parametrize("name", SYNTHETIC)
def test_the_model_alone_equals_llama_cpp_on_one_word_texts(name):
    """BPE(unknown_chars="block") on its own, through each of its paths: the plain merge, the spans
    of encode_full and dropout (p so small no merge is skipped); the texts are one GGUF word each."""
    tokens, _, merges = TOOL.bytelevel_vocab() if name == "synthetic-bytelevel" else TOOL.gemma4_vocab()
    vocab = {text: i for i, text in enumerate(tokens)}
    _, rows = _golden(name)
    words = {t: ids for t, ids in _plain_rows(rows).items() if t.isascii() and t.isalpha() and "\n" not in t}
    assert "axbc" in words
    for dropout in (None, 1e-300):
        model = BPE(vocab, merges, unknown_chars="block", byte_fallback=name == "synthetic-gemma4",
                    dropout=dropout)
        for word, ids in words.items():
            assert model.tokenize(word) == ids, (word, dropout)
            assert [i for i, _, _ in model.tokenize_spans(word)] == ids, (word, dropout)


def _tokenizer_json(tokens, merges, byte_level):
    vocab = {text: i for i, text in enumerate(tokens)}
    model = {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
             "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": not byte_level,
             "ignore_merges": False, "vocab": vocab, "merges": [list(m) for m in merges]}
    if byte_level:
        level = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True}
        parts = {"normalizer": None, "pre_tokenizer": level, "decoder": level}
    else:
        parts = {"normalizer": {"type": "Replace", "pattern": {"String": " "}, "content": "\u2581"},
                 "pre_tokenizer": None, "decoder": None}
    return {"version": "1.0", "truncation": None, "padding": None, "added_tokens": [], **parts,
            "post_processor": None, "model": model}


@pytest.mark.parametrize("name", SYNTHETIC)
def test_tokenizer_json_keeps_hf_rule(name, tmp_path):
    """The same vocabulary and merges as tokenizer.json: polytok equals HF tokenizers (live), which
    drops the character before merging, and so differs from llama.cpp on the GGUF file."""
    tokenizers = pytest.importorskip("tokenizers")
    byte_level = name == "synthetic-bytelevel"
    tokens, _, merges = TOOL.bytelevel_vocab() if byte_level else TOOL.gemma4_vocab()
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(_tokenizer_json(tokens, merges, byte_level)), encoding="utf-8")
    ref = tokenizers.Tokenizer.from_file(str(path))
    tok = polytok.load(path)
    _, rows = _golden(name)
    llama = _plain_rows(rows)
    texts = TOOL.BYTELEVEL_TEXTS if byte_level else [t for t in TOOL.GEMMA4_TEXTS if "\n" not in t]
    differ = []
    for text in texts:
        expected = ref.encode(text, add_special_tokens=False).ids
        assert tok.encode(text, add_special=False) == expected, text
        assert tok.encode_full(text, add_special=False).ids == expected, text
        if expected != llama[text]:
            differ.append(text)
    assert "axbc" in differ and "axb" in differ  # a b -> ab (and ab c -> abc) across the dropped x
