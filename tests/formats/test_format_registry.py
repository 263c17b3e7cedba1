"""The format registry is the one source of what `sniff` and `load` know of a format.

- Every format of `polytok.formats.registry.FORMATS` is the first to claim a real file
  of its format and a tiny valid file of it; no format before it in the registry claims
  that file, so the registry's order decides exactly where claims overlap (a GGUF named
  tokenizer.json, a tiktoken rank file named tokenizer.model, RWKV lines in a .txt).
  The expected format of a real file is the one tests/fixture_sources.json records for
  it (the package or repository it comes from says what it is); of a tiny file, the
  format tests/robustness/hostile.py writes it in.
- The error for an unrecognised file lists exactly the registry's formats, in its
  order; the error for a folder holding none lists the folder search in the order
  docs/formats.md documents, and a folder holding two tokenizer files is read by the
  one documented first.
- The load options of each format: an option its reader does not take is refused with
  the message it has always had.
"""

from __future__ import annotations

import gzip
import itertools
import json
from fnmatch import fnmatch
from pathlib import Path

import pytest
from fixtures import GGUF_VOCAB, SOURCES, fixture_path, gguf_vocab_path
from robustness import hostile

import polytok
from polytok.formats import sniff
from polytok.formats.compressed import read_head
from polytok.formats.registry import BY_NAME, FOLDER_SEARCH, FORMATS, FileHead

# the format names of tests/fixture_sources.json, as polytok names the formats
MANIFEST_FORMATS = {
    "hf-tokenizer.json": "hf_json",
    "sentencepiece-model": "sentencepiece",
    "tiktoken-ranks (base64 token, rank per line)": "tiktoken",
    "mistral-tekken-json": "tekken",
    "rwkv-world-trie-vocab": "rwkv_vocab",
    "wordpiece-vocab.txt": "wordpiece_vocab",
    "bpe-vocab.json+merges.txt": "gpt2_vocab",
    "gguf": "gguf",
}
# (fixture, file, the files that must sit beside it)
REAL = [
    ("qwen3", "tokenizer.json", ()),
    ("tortoise-tts", "tokenizer.json", ()),
    ("spm-botchan-bpe-1000", "spm.model", ()),
    ("spm-mistral-v1", "tokenizer.model", ()),  # a SentencePiece model by its bytes: llama3's file has the same name
    ("llama3-tiktoken", "tokenizer.model", ()),
    ("whisper-gpt2-tiktoken", "gpt2.tiktoken", ()),
    ("tekken-240718", "tekken.json", ()),
    ("rwkv-world-vocab", "rwkv_vocab_v20230424.txt", ()),
    ("bert-base-cased-vocab", "vocab.txt", ()),
    ("gpt2", "vocab.json", ("merges.txt",)),
]
GGUF_REAL = ["llama-spm", "gpt-2", "bert-bge"]

VOCAB_TXT = b"[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\na\nb\n##b\n"
TOKENIZER_JSON = json.dumps(hostile.hf_base()).encode()
RANKS = b"\n".join(hostile.RANK_LINES) + b"\n"
RWKV = b"\n".join(hostile.RWKV_GOOD) + b"\n"
GPT2 = {hostile.VJ: hostile.GPT2_VOCAB, hostile.MT: b"#version: 0.2\na b\n"}
# (id, files, the file sniffed, its format); the last rows are files whose name says another format
TINY = [
    ("tokenizer.json", {"tokenizer.json": TOKENIZER_JSON}, "tokenizer.json", "hf_json"),
    ("tokenizer.json.gz", {"tokenizer.json.gz": gzip.compress(TOKENIZER_JSON)}, "tokenizer.json.gz", "hf_json"),
    ("gguf", {hostile.GG: hostile.VALID_GGUF}, hostile.GG, "gguf"),
    ("sentencepiece", {hostile.SP: hostile.VALID_SPM}, hostile.SP, "sentencepiece"),
    ("tiktoken", {hostile.TK: RANKS}, hostile.TK, "tiktoken"),
    ("tekken", hostile.tekken(), hostile.TE, "tekken"),
    ("vocab.txt", {hostile.VT: VOCAB_TXT}, hostile.VT, "wordpiece_vocab"),
    ("vocab.json+merges", GPT2, hostile.VJ, "gpt2_vocab"),
    ("vocab.json-alone", {hostile.VJ: hostile.GPT2_VOCAB}, hostile.VJ, "hf_json"),
    ("rwkv", {hostile.RW: RWKV}, hostile.RW, "rwkv_vocab"),
    ("gguf-named-tokenizer.json", {"tokenizer.json": hostile.VALID_GGUF}, "tokenizer.json", "gguf"),
    ("gguf-named-tekken.json", {"tekken.json": hostile.VALID_GGUF}, "tekken.json", "gguf"),
    ("ranks-named-tokenizer.model", {"tokenizer.model": RANKS}, "tokenizer.model", "tiktoken"),
    ("ranks-named-vocab.txt", {"vocab.txt": RANKS}, "vocab.txt", "tiktoken"),
    ("rwkv-named-vocab.txt", {"vocab.txt": RWKV}, "vocab.txt", "rwkv_vocab"),
    ("sentencepiece-named-model.v1", {"tokenizer.model.v1": hostile.VALID_SPM}, "tokenizer.model.v1",
     "sentencepiece"),
]
# a model folder's tokenizer files, in the order docs/formats.md says a folder is searched
FOLDER = [
    ("tokenizer.json", {"tokenizer.json": TOKENIZER_JSON}, "hf_json"),
    ("tekken.json", hostile.tekken(), "tekken"),
    ("tokenizer.model", {"tokenizer.model": hostile.VALID_SPM}, "sentencepiece"),
    ("vocab.json", GPT2, "gpt2_vocab"),
    ("vocab.txt", {hostile.VT: VOCAB_TXT}, "wordpiece_vocab"),
    ("rwkv_vocab*.txt", {hostile.RW: RWKV}, "rwkv_vocab"),
]


def _manifest_format(name: str, file: str) -> str:
    """The format tests/fixture_sources.json records for a file, as polytok names it."""
    records = GGUF_VOCAB["files"] if name == GGUF_VOCAB["name"] else SOURCES[name]["files"]
    return MANIFEST_FORMATS[next(r for r in records if r["file"] == file)["format"]]


def _claimants(path: Path) -> list[str]:
    """The formats whose claim takes `path`, in registry order."""
    file = FileHead(path, path.name.lower(), read_head(path))
    return [spec.name for spec in FORMATS if spec.claims(file)]


def _write(folder: Path, files: dict[str, bytes]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for name, data in files.items():
        (folder / name).write_bytes(data)


def test_every_format_has_a_real_and_a_tiny_file() -> None:
    real = {_manifest_format(name, file) for name, file, _ in REAL}
    real |= {_manifest_format(GGUF_VOCAB["name"], f"ggml-vocab-{name}.gguf") for name in GGUF_REAL}
    assert real == set(BY_NAME)
    assert {fmt for *_, fmt in TINY} == set(BY_NAME)
    assert len(BY_NAME) == len(FORMATS)
    assert len({spec.expected for spec in FORMATS}) == len(FORMATS)


@pytest.mark.parametrize("name, file, beside", REAL, ids=[f"{n}/{f}" for n, f, _ in REAL])
def test_a_real_file_is_claimed_first_by_its_format(name: str, file: str, beside: tuple[str, ...]) -> None:
    path = fixture_path(name, file)
    for other in beside:
        assert fixture_path(name, other).parent == path.parent
    expected = _manifest_format(name, file)
    assert _claimants(path)[0] == expected
    assert sniff(path) == expected


@pytest.mark.parametrize("name", GGUF_REAL)
def test_a_real_gguf_vocabulary_is_claimed_first_by_gguf(name: str) -> None:
    path = gguf_vocab_path(name)
    expected = _manifest_format(GGUF_VOCAB["name"], path.name)
    assert _claimants(path)[0] == expected
    assert sniff(path) == expected


@pytest.mark.parametrize("case", TINY, ids=[c[0] for c in TINY])
def test_a_tiny_file_is_claimed_first_by_its_format(case: tuple[str, dict[str, bytes], str, str],
                                                   tmp_path: Path) -> None:
    _, files, entry, expected = case
    _write(tmp_path, files)
    assert _claimants(tmp_path / entry)[0] == expected
    assert sniff(tmp_path / entry) == expected


def test_an_unrecognised_file_names_exactly_the_registered_formats(tmp_path: Path) -> None:
    path = tmp_path / "weights.bin"
    path.write_bytes(b"\x00\x01 not a tokenizer")
    with pytest.raises(polytok.FormatError) as info:
        polytok.load(path)
    reason = info.value.reason
    prefix, suffix = "unrecognised tokenizer format (expected ", ", or a model folder holding one)"
    assert reason.startswith(prefix) and reason.endswith(suffix), reason
    assert reason[len(prefix):-len(suffix)].split(", ") == [spec.expected for spec in FORMATS]
    assert info.value.file == str(path)


def test_the_folder_search_is_the_documented_order(tmp_path: Path) -> None:
    assert tuple(name for name, _, _ in FOLDER) == FOLDER_SEARCH
    ranks: dict[str, set[int]] = {}
    for spec in FORMATS:
        if spec.folder_rank is not None:
            ranks.setdefault(spec.folder_files[0], set()).add(spec.folder_rank)
    assert all(len(r) == 1 for r in ranks.values()), ranks  # one place for each file
    (tmp_path / "empty").mkdir()
    with pytest.raises(polytok.FormatError) as info:
        polytok.load(tmp_path / "empty")
    assert info.value.reason == ("no tokenizer file found in this folder (looked for tokenizer.json, tekken.json, "
                                 "tokenizer.model, vocab.json, vocab.txt (each also .gz), rwkv_vocab*.txt)")


@pytest.mark.parametrize("first, second", list(itertools.combinations(range(len(FOLDER)), 2)),
                         ids=[f"{FOLDER[a][0]}>{FOLDER[b][0]}"
                              for a, b in itertools.combinations(range(len(FOLDER)), 2)])
def test_a_folder_is_read_by_its_first_file(first: int, second: int, tmp_path: Path) -> None:
    name, files, expected = FOLDER[first]
    _write(tmp_path / "alone", files)
    _write(tmp_path / "both", files)
    _write(tmp_path / "both", FOLDER[second][1])
    assert sniff(tmp_path / "both") == expected
    assert len(polytok.load(tmp_path / "both")) == len(polytok.load(tmp_path / "alone"))


def test_a_compressed_file_keeps_its_place(tmp_path: Path) -> None:
    _write(tmp_path, {"tokenizer.json.gz": gzip.compress(TOKENIZER_JSON)} | hostile.tekken())
    assert sniff(tmp_path) == "hf_json"


# (tiny file row, the option error it has always given); an option the reader checks itself is refused alike
NO_OPTIONS = "takes no options (got no_such_option)"
OPTION_ERRORS = [
    ("tokenizer.json", f"the hf_json reader {NO_OPTIONS}"),
    ("gguf", f"the gguf reader {NO_OPTIONS}"),
    ("sentencepiece", f"the sentencepiece reader {NO_OPTIONS}"),
    ("tiktoken", "the tiktoken reader takes no option no_such_option (it takes pattern, special_tokens)"),
    ("tekken", f"the tekken reader {NO_OPTIONS}"),
    ("vocab.txt", "the wordpiece_vocab reader takes no option no_such_option (it takes clean_up_tokenization_spaces, "
                  "cls_token, do_lower_case, lowercase, mask_token, pad_token, sep_token, split_special_tokens, "
                  "strip_accents, tokenize_chinese_chars, unk_token)"),
    ("vocab.json+merges", "the gpt2_vocab reader takes no option no_such_option (it takes add_bos_token, "
                          "add_eos_token, add_prefix_space, bos_token, eos_token, merges_file, pad_token, "
                          "split_special_tokens, unk_token)"),
    ("rwkv", f"the rwkv_vocab reader {NO_OPTIONS}"),
]


OPTION_ERRORS.append(("ranks-named-tokenizer.model", OPTION_ERRORS[3][1]))  # Llama 3's rank file, in a folder too


def _entry(row: str) -> tuple[dict[str, bytes], str]:
    _, files, entry, _ = next(c for c in TINY if c[0] == row)
    return files, entry


OPTION_CASES = [(row, reason, False) for row, reason in OPTION_ERRORS] + [
    (row, reason, True) for row, reason in OPTION_ERRORS
    if any(fnmatch(_entry(row)[1], name) for name in FOLDER_SEARCH)]


@pytest.mark.parametrize("row, reason, as_folder", OPTION_CASES,
                         ids=[f"{r}-{'folder' if f else 'file'}" for r, _, f in OPTION_CASES])
def test_an_option_the_reader_does_not_take(row: str, reason: str, as_folder: bool, tmp_path: Path) -> None:
    files, entry = _entry(row)
    _write(tmp_path, files)
    with pytest.raises(polytok.FormatError) as info:
        polytok.load(tmp_path if as_folder else tmp_path / entry, no_such_option=1)
    assert info.value.reason == reason


def test_the_builtin_tokenizer_takes_no_options() -> None:
    with pytest.raises(polytok.FormatError) as info:
        polytok.load("gpt2", no_such_option=1)
    assert info.value.reason == f"the builtin reader {NO_OPTIONS}"
