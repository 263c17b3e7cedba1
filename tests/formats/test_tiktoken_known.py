"""polytok's table of known rank files (formats/tiktoken_known.py) against the code that defines them.

- OpenAI encodings: tiktoken_ext.openai_public's constructors are run with
  ``load_tiktoken_bpe`` / ``data_gym_to_mergeable_bpe_ranks`` replaced by a recorder,
  so each gives its ``expected_hash``, ``pat_str`` and ``special_tokens`` without a
  download; every one must be a row of the table (by hash) with that pattern and those
  special tokens.
- Llama 3 / Llama 4: llama-models 0.3.0's own ``llama3/tokenizer.py`` and
  ``llama4/tokenizer.py`` (and ``tokenizer_utils.py``), fetched from its wheel by
  sha256, are run on the ``tokenizer.model`` of the same wheel; their pattern,
  special tokens, BOS and EOS must be the table's row for that file's sha256.
- Whisper: openai-whisper 20250625's own ``whisper/tokenizer.py``, fetched from its sdist by
  sha256, run (``get_encoding("multilingual")``, its default ``num_languages``) on the
  ``multilingual.tiktoken`` of the same sdist laid beside it.
A wrong hash, pattern or special id in the table fails one of these.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import sys

import pytest
from fixtures import SOURCES, FetchError, cache_root, fetch_members, fixture_path

import polytok
from polytok.formats.tiktoken_known import KNOWN_RANKS

BY_NAME = {row.name: (digest, row) for digest, row in KNOWN_RANKS.items()}


def _openai_definitions(monkeypatch) -> dict[str, dict]:
    from tiktoken_ext import openai_public

    hashes: list[str] = []

    def record(_url, expected_hash=None, **_):
        hashes.append(expected_hash)
        return {}

    monkeypatch.setattr(openai_public, "load_tiktoken_bpe", record)
    monkeypatch.setattr(openai_public, "data_gym_to_mergeable_bpe_ranks", lambda **kw: hashes.append(None) or {})
    out = {}
    for name, constructor in openai_public.ENCODING_CONSTRUCTORS.items():
        hashes.clear()
        spec = constructor()
        out[name] = dict(spec, expected_hash=hashes[-1])
    return out


@pytest.mark.parametrize("name", ["r50k_base", "p50k_base", "cl100k_base", "o200k_base"])
def test_openai_rows_equal_tiktoken_ext(monkeypatch, name):
    spec = _openai_definitions(monkeypatch)[name]
    row = KNOWN_RANKS.get(spec["expected_hash"])
    assert row is not None, f"{name}: sha256 {spec['expected_hash']} is not in the table"
    assert row.name == name
    assert row.pattern == spec["pat_str"]
    assert row.special_tokens == spec["special_tokens"]


def test_shared_files_take_the_base_encoding(monkeypatch):
    """gpt2 reads r50k_base's ranks; p50k_edit and o200k_harmony reuse their base's file."""
    specs = _openai_definitions(monkeypatch)
    assert specs["gpt2"]["pat_str"] == BY_NAME["r50k_base"][1].pattern
    assert specs["gpt2"]["special_tokens"] == BY_NAME["r50k_base"][1].special_tokens
    assert specs["p50k_edit"]["expected_hash"] == BY_NAME["p50k_base"][0]
    assert specs["o200k_harmony"]["expected_hash"] == BY_NAME["o200k_base"][0]


# llama-models 0.3.0 wheel members and their sha256 (read from the wheel fixture_sources.json names)
_LLAMA_SOURCES = {
    "llama_models/tokenizer_utils.py": "562f69d8b94eea8c8d75fcd258602d130c712d51d65f76914933065032827c08",
    "llama_models/llama3/tokenizer.py": "03651bf842642adf7ae2fcb5afe4cd211c7fdb23180babc42a9c635d4bc8fc11",
    "llama_models/llama4/tokenizer.py": "606f0473436ebd847589149d7bb1b6761a85269c4b846767b813183ed5cd5795",
}


def _llama_models_root():
    root = cache_root() / "llama-models-0.3.0-src"
    files = {member: root / member for member in _LLAMA_SOURCES}
    fresh = all(p.is_file() and hashlib.sha256(p.read_bytes()).hexdigest() == sha
                for p, sha in zip(files.values(), _LLAMA_SOURCES.values()))
    if not fresh:
        try:
            contents = fetch_members(SOURCES["llama3-tiktoken"], _LLAMA_SOURCES)
        except FetchError as err:
            pytest.skip(f"llama-models 0.3.0 could not be downloaded ({err})")
        for member, data in contents.items():
            files[member].parent.mkdir(parents=True, exist_ok=True)
            files[member].write_bytes(data)
    for package in ("llama_models", "llama_models/llama3", "llama_models/llama4"):
        (root / package / "__init__.py").touch()
    return root


@pytest.mark.parametrize("version,fixture,pattern_attr", [("llama3", "llama3-tiktoken", "pat_str"),
                                                          ("llama4", "llama4-tiktoken", "O200K_PATTERN")])
def test_llama_rows_equal_llama_models(monkeypatch, version, fixture, pattern_attr):
    path = fixture_path(fixture, "tokenizer.model")
    monkeypatch.syspath_prepend(str(_llama_models_root()))
    for mod in [m for m in sys.modules if m == "llama_models" or m.startswith("llama_models.")]:
        monkeypatch.delitem(sys.modules, mod)
    module = importlib.import_module(f"llama_models.{version}.tokenizer")
    reference = module.Tokenizer(path)
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    row = KNOWN_RANKS.get(digest)
    assert row is not None and row.name == version
    assert row.pattern == getattr(module.Tokenizer, pattern_attr)
    assert row.special_tokens == reference.special_tokens
    assert row.special_tokens[row.bos] == reference.bos_id
    assert row.special_tokens[row.eos] == reference.eos_id
    tok = polytok.load(path)
    assert tok.special_ids == {"bos": reference.bos_id, "eos": reference.eos_id}
    assert len(tok) == reference.n_words


_WHISPER_SOURCE = {"openai_whisper-20250625/whisper/tokenizer.py":
                   "3b48e361a7e95b4ec0356ca6d72bba635778aa10269153136ee7bc34cae30b85"}


def _whisper_tokenizer_module():
    """whisper/tokenizer.py (it imports only tiktoken), beside assets/multilingual.tiktoken."""
    ranks = fixture_path("whisper-multilingual-tiktoken", "multilingual.tiktoken")
    root = cache_root() / "openai-whisper-20250625-src"
    source = root / "tokenizer.py"
    expected = next(iter(_WHISPER_SOURCE.values()))
    if not source.is_file() or hashlib.sha256(source.read_bytes()).hexdigest() != expected:
        try:
            contents = fetch_members(SOURCES["whisper-multilingual-tiktoken"], _WHISPER_SOURCE)
        except FetchError as err:
            pytest.skip(f"openai-whisper 20250625 could not be downloaded ({err})")
        root.mkdir(parents=True, exist_ok=True)
        source.write_bytes(next(iter(contents.values())))
    (root / "assets").mkdir(exist_ok=True)
    (root / "assets" / "multilingual.tiktoken").write_bytes(ranks.read_bytes())
    spec = importlib.util.spec_from_file_location("whisper_tokenizer_20250625", source)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module, ranks


def test_whisper_row_equals_whisper_get_encoding():
    module, path = _whisper_tokenizer_module()
    reference = module.get_encoding("multilingual")
    whisper = module.get_tokenizer(multilingual=True)
    row = KNOWN_RANKS[hashlib.sha256(path.read_bytes()).hexdigest()]
    assert row.name == "whisper-multilingual"
    assert row.pattern == reference._pat_str
    assert row.special_tokens == reference._special_tokens
    assert (row.special_tokens[row.bos], row.special_tokens[row.eos]) == (whisper.sot, whisper.eot)
    tok = polytok.load(path)
    assert tok.special_ids == {"bos": whisper.sot, "eos": whisper.eot}
    assert len(tok) == reference.n_vocab  # every id from 0 up is a token, the one of no bytes (50256) too


def test_fixture_hashes_are_table_rows():
    """The fixtures' recorded sha256 (from their packages) are the table's keys for those files."""
    recorded = {name: SOURCES[name]["files"][0]["sha256"] for name in
                ("whisper-gpt2-tiktoken", "whisper-multilingual-tiktoken", "llama3-tiktoken", "llama4-tiktoken",
                 "cl100k_base-tiktoken")}
    assert KNOWN_RANKS[recorded["whisper-gpt2-tiktoken"]].name == "r50k_base"
    assert KNOWN_RANKS[recorded["whisper-multilingual-tiktoken"]].name == "whisper-multilingual"
    assert KNOWN_RANKS[recorded["cl100k_base-tiktoken"]].name == "cl100k_base"
    assert KNOWN_RANKS[recorded["llama3-tiktoken"]].name == "llama3"
    assert KNOWN_RANKS[recorded["llama4-tiktoken"]].name == "llama4"
