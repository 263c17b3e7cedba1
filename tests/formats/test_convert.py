"""polytok convert against llama.cpp's convert_hf_to_gguf.py (goldens of tools/gen_convert_goldens.py).

The goldens hold, per model folder, the per-key digests of the tokenizer metadata
llama.cpp's converter (llama-cpp-python 0.3.36 sdist) wrote, and llama.cpp's ids
and detokenized bytes for the shared edge texts and long-text slices in three
modes; the generator asserted that llama.cpp gives exactly the same for
polytok's GGUF. Here (no llama.cpp needed) polytok's GGUF, written with ``like_converter=True``, must carry the same
metadata and polytok reading it must give the golden ids and bytes (polytok's
default GGUF, which differs for a few folders so that llama.cpp tokenizes them as HF
does, is held to llama.cpp in test_convert_default.py). Fixture
folders whose files are absent are skipped, saying so; the synthetic
redefinition folders (tests/data/convert) always run.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import json
import shutil
from pathlib import Path

import pytest
from fixtures import fixture_path

import polytok

pytest.importorskip("gguf")
from polytok.convert.converter import metadata_digests, to_gguf

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "convert"
SYNTHETIC = Path(__file__).resolve().parents[1] / "data" / "convert"
NAMES = sorted(p.name.removesuffix(".jsonl.gz") for p in GOLDEN.glob("*.jsonl.gz"))


def golden(name: str) -> tuple[dict, list[dict]]:
    with gzip.open(GOLDEN / f"{name}.jsonl.gz", "rt", encoding="utf-8") as f:
        rows = [json.loads(line) for line in f]
    return rows[0], rows[1:]


def build_folder(name: str, header: dict, tmp_path: Path) -> Path:
    """The folder the generator converted: the same input files (sha256-checked) and config.json."""
    folder = tmp_path / name
    folder.mkdir()
    for file, sha in header["inputs"].items():
        if file == "config.json":
            continue
        src = SYNTHETIC / name / file if (SYNTHETIC / name).is_dir() else fixture_path(name, file)
        data = src.read_bytes()
        assert hashlib.sha256(data).hexdigest() == sha, f"{name}/{file} is not the file the goldens were made from"
        (folder / file).write_bytes(data)
    (folder / "config.json").write_text(header["config_json"], encoding="utf-8")
    return folder


def converted_once(tmp_path_factory, load=golden, **options):
    """name -> (header, rows, folder, GGUF path, ConversionReport): the goldens `load` reads, the folder
    built from them and converted with `options`, once a name."""
    cache: dict[str, tuple[dict, list[dict], Path, Path, object]] = {}

    def get(name: str):
        if name not in cache:
            header, rows = load(name)
            work = tmp_path_factory.mktemp(name)
            folder = build_folder(name, header, work)
            out = work / f"{name}.gguf"
            cache[name] = (header, rows, folder, out, to_gguf(folder, out, **options))
        return cache[name]
    return get


@pytest.fixture(scope="module")
def converted(tmp_path_factory):
    once = converted_once(tmp_path_factory, like_converter=True)

    def get(name: str):
        header, rows, _, out, _ = once(name)
        return header, rows, out

    get.report = lambda name: once(name)[4]  # the ConversionReport
    return get


def describe_differences(expected: dict, got: dict) -> list[str]:
    out = []
    for key in sorted(set(expected) | set(got)):
        a, b = expected.get(key), got.get(key)
        if a == b:
            continue
        if a is None or b is None:
            out.append(f"{key}: {'missing in polytok' if b is None else 'not written by llama.cpp'} ({a or b})")
        elif a["type"] != b["type"]:
            out.append(f"{key}: type {b['type']} where llama.cpp wrote {a['type']}")
        elif "len" in a and a["len"] != b["len"]:
            out.append(f"{key}: {b['len']} elements where llama.cpp wrote {a['len']}")
        elif "chunks" in a:
            first = next(i for i, (x, y) in enumerate(zip(a["chunks"], b["chunks"])) if x != y)
            out.append(f"{key}: differs in elements {first * 4096}..{first * 4096 + 4095}")
        else:
            out.append(f"{key}: {b.get('value')!r} where llama.cpp wrote {a.get('value')!r}")
    return out


@pytest.mark.parametrize("name", NAMES)
def test_metadata_equals_llama_cpp_converter(name, converted):
    header, _, out = converted(name)
    differences = describe_differences(header["digests"], metadata_digests(out))
    assert not differences, "\n".join(differences)


# every golden folder: the pre type the structure recognises is the one llama.cpp's hash table names
# (a WordPiece or SentencePiece folder's session reads no pre type: the converter's name is kept)
PRE_DECIDED_BY = {"gpt2": "structure and hash", "llama3": "structure and hash", "qwen3": "structure and hash",
                  "bert-base-uncased": "wordpiece", "llama2": "sentencepiece", "phi-3-mini": "sentencepiece",
                  "mistral-v3-hf-converted": "sentencepiece", "arctic": "sentencepiece",
                  "internlm2": "sentencepiece", "llama-redefined": "sentencepiece"}


@pytest.mark.parametrize("name", NAMES)
def test_structure_agrees_with_the_hash_on_every_golden_folder(name, converted):
    header, _, _ = converted(name)
    decision = converted.report(name).pre_decision
    assert decision.how == PRE_DECIDED_BY[name]
    assert decision.name == header["digests"]["tokenizer.ggml.pre"]["value"]


@pytest.mark.parametrize("name", NAMES)
def test_polytok_reads_its_gguf_as_llama_cpp_reads_the_converters(name, converted):
    _, rows, out = converted(name)
    assert_reads_as_llama_cpp(out, rows)


def assert_reads_as_llama_cpp(gguf_path: Path, rows: list[dict]) -> None:
    """polytok reading `gguf_path` gives llama.cpp's golden ids and detokenized bytes on every row."""
    tok = polytok.load(gguf_path)
    bad = []
    for row in rows:
        mode = "parse" if row["parse_special"] else "text"
        got = tok.encode(row["text"], add_special=row["add_special"], special=mode)
        if got != row["ids"]:
            bad.append(f"{row['name']} add_special={row['add_special']} {mode}: {got[:12]} != {row['ids'][:12]}")
        for key, flags in (("detok_keep", (False, True)), ("detok_skip", (True, False))):
            if key in row and tok.decoder.detokenize(row["ids"], *flags) != base64.b64decode(row[key]):
                bad.append(f"{row['name']} detokenize{flags} differs")
    assert not bad, f"{len(bad)} of {len(rows)} rows differ:\n" + "\n".join(bad[:8])


@pytest.mark.parametrize("name", NAMES)
def test_special_ids_and_eog_of_polytok_gguf(name, converted):
    header, _, out = converted(name)
    tok = polytok.load(out)
    facts = header["facts"]
    assert sorted(tok.eog_ids) == facts["eog"]
    for key, value in facts["special_ids"].items():
        assert tok.special_ids.get(key) == (value if value >= 0 else None), key


def test_goldens_cover_the_acceptance_folders():
    wanted = {"llama3", "gpt2", "qwen3", "llama2", "bert-base-uncased", "phi-3-mini", "mistral-v3-hf-converted",
              "arctic", "internlm2"}
    assert wanted <= set(NAMES)


def test_base_gguf_copy_keeps_tensors_and_other_keys(tmp_path):
    import gguf
    import numpy as np

    base = tmp_path / "base.gguf"
    w = gguf.GGUFWriter(str(base), "llama")
    w.add_uint32("llama.context_length", 77)
    w.add_string("general.name", "Base Model")
    w.add_string("tokenizer.ggml.model", "gpt2")
    w.add_array("tokenizer.ggml.tokens", ["a", "b"])
    w.add_tensor("w", np.arange(12, dtype=np.float32).reshape(3, 4))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    out = tmp_path / "out.gguf"
    to_gguf(SYNTHETIC / "arctic", out, base_gguf=base)
    r = gguf.GGUFReader(str(out))
    assert r.get_field("llama.context_length").contents() == 77
    assert r.get_field("general.name").contents() == "Base Model"
    assert r.get_field("general.architecture").contents() == "llama"
    assert len(r.get_field("tokenizer.ggml.tokens").contents()) == 420
    assert r.get_field("tokenizer.ggml.model").contents() == "llama"
    assert np.array_equal(r.tensors[0].data, np.arange(12, dtype=np.float32).reshape(3, 4))
    direct = tmp_path / "direct.gguf"
    to_gguf(SYNTHETIC / "arctic", direct)
    a, b = metadata_digests(out), metadata_digests(direct)
    assert {k: v for k, v in a.items() if k != "general.architecture"} == \
        {k: v for k, v in b.items() if k != "general.architecture"}


def test_copy_of_synthetic_folder_name_does_not_matter(tmp_path):
    folder = tmp_path / "x"
    shutil.copytree(SYNTHETIC / "arctic", folder)
    header, _ = golden("arctic")
    to_gguf(folder, tmp_path / "x.gguf")
    assert describe_differences(header["digests"], metadata_digests(tmp_path / "x.gguf")) == []
