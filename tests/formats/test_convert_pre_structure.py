"""tokenizer.ggml.pre recognised from the pre-tokenizer's structure (`polytok.convert.pre_structure`).

- Edited fixture folders whose hash llama.cpp's converter does not know (a token
  appended, a special token renamed, two ids swapped: tools/gen_pre_structure_goldens.py)
  convert by structure; polytok reading the written GGUF gives the ids llama.cpp
  (llama-cpp-python 0.3.36) gave on it, recorded in tests/golden/convert/edited/, and
  the ids HF tokenizers gives on the folder (live), but where the goldens name a
  difference (Qwen's NFC normalizer, which llama.cpp does not run, and ``</s>``, which
  llama.cpp makes a control token as an end-of-generation text).
- On every fixture folder with a known hash the structure agrees with it, except
  where llama.cpp's own pre type cuts text otherwise than the folder does (listed).
- A structure no llama.cpp type has is refused, naming the nearest type and what differs.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import json
import sys
import unicodedata
from pathlib import Path

import pytest
from fixtures import fixture_path

import polytok
from polytok.errors import FormatError
from polytok.formats.gguf_token_attrs import LLAMA_EOG_TEXTS

pytest.importorskip("gguf")
from polytok.convert.converter import metadata_digests, to_gguf
from polytok.convert.gguf_vocab import pre_hash, pre_name, read_tokenizer_json_data
from polytok.convert.pre_structure import HF_SPELLINGS, decide, nearest, splits_as, structure_of

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools"))
import gen_pre_structure_goldens as gen

from .test_convert import describe_differences

EDITED = Path(__file__).resolve().parents[1] / "golden" / "convert" / "edited"


def edited_golden(name: str) -> tuple[dict, list[dict]]:
    with gzip.open(EDITED / f"{name}.jsonl.gz", "rt", encoding="utf-8") as f:
        rows = [json.loads(line) for line in f]
    return rows[0], rows[1:]


def build_edited(name: str, header: dict, tmp_path: Path) -> Path:
    folder, what = gen.build(name, fixture_path, header["fixture_files"], tmp_path)
    assert what == header["edit"]
    for file, sha in header["inputs"].items():
        assert hashlib.sha256((folder / file).read_bytes()).hexdigest() == sha, f"{name}/{file} is not the golden's"
    return folder


@pytest.mark.parametrize("name", [
    "gpt2-added",
    pytest.param("gpt2-renumbered", marks=pytest.mark.slow),
    pytest.param("llama3-renamed", marks=pytest.mark.slow),
    pytest.param("qwen3-added", marks=pytest.mark.slow),
    pytest.param("olmo-added", marks=pytest.mark.slow),
])
def test_unknown_hash_converts_by_structure_as_llama_cpp_and_hf_read_it(name, tmp_path):
    from tokenizers import Tokenizer

    header, rows = edited_golden(name)
    folder = build_edited(name, header, tmp_path)
    out = tmp_path / f"{name}.gguf"
    report = to_gguf(folder, out)
    assert pre_name(report.chkhsh) is None, "the edit must make the hash unknown to llama.cpp's table"
    assert report.pre == header["pre"] and report.pre_decision.how == "structure"
    assert "pre decided by: structure" in report.lines()
    differences = describe_differences(header["digests"], metadata_digests(out))
    assert not differences, "\n".join(differences)
    tok = polytok.load(out)
    hf = Tokenizer.from_file(str(folder / "tokenizer.json"))
    hf.no_truncation()
    nfc = (read_tokenizer_json_data(folder).get("normalizer") or {}).get("type") == "NFC"
    bad, hf_differs = [], []
    for row in rows:
        mode = "parse" if row["parse_special"] else "text"
        ids = tok.encode(row["text"], add_special=row["add_special"], special=mode)
        if ids != row["ids"]:
            bad.append(f"{row['name']} add_special={row['add_special']} {mode}")
        if "detok_keep" in row and tok.decoder.detokenize(row["ids"], False, True) \
                != base64.b64decode(row["detok_keep"]):
            bad.append(f"{row['name']} detokenize")
        if row["parse_special"] and hf.encode(row["text"], add_special_tokens=row["add_special"]).ids != ids:
            hf_differs.append(f"{row['name']} add_special={row['add_special']}")
            # the check's named differences: a normalizer llama.cpp does not run, its end-of-generation texts
            assert (nfc and unicodedata.normalize("NFC", row["text"]) != row["text"]) \
                or any(eog in row["text"] for eog in LLAMA_EOG_TEXTS), row["name"]
    assert not bad, f"{len(bad)} of {len(rows)} rows differ from llama.cpp's: {bad[:5]}"
    assert hf_differs == header["llama_cpp_differs_from_hf"]


# fixture -> the hash's name, which the structure agrees with: the BPE folders of the convert goldens
# (tests/golden/convert; test_convert.py checks every golden folder on its conversion) and more.
AGREE = {"gpt2": "gpt-2", "qwen3": "qwen2", "olmo-dolma2": "dbrx", "roberta-base": "roberta-bpe"}
# llama.cpp's own type for these cuts some text otherwise than the folder: the hash's name is kept,
# the report names the nearest exact-looking type and the difference
HASH_ONLY = {
    # the folder splits digits (Digits, individual_digits false) after ByteLevel; falcon's list has no such
    # step, default's has one but no backtick in its punctuation
    "falcon": ("falcon", "nearest default; differs: pre_tokenizer.pretokenizers[2]: Digits after ByteLevel"),
    # llama.cpp's gpt-4o lookaheads leave combining marks out of words; the o200k regex keeps them in
    "gpt4o": ("gpt-4o", "nearest gpt-4o; differs: pieces of 'cafe\u0301' differ"),
}


def _decision(fixture: str, tmp_path: Path, wordpiece: bool = False, like_converter: bool = False):
    """The pre decision for a shared fixture's folder (every file of it)."""
    from polytok.formats.hf_json import read_model_folder

    if not gen.SHARED.is_dir():
        pytest.skip("../shared/fixtures is absent")
    folder = tmp_path / fixture
    folder.mkdir()
    for file in gen.base_files(fixture):
        (folder / file).write_bytes(fixture_path(fixture, file).read_bytes())
    data = read_tokenizer_json_data(folder)
    chkhsh = pre_hash(read_model_folder(folder))
    return data, decide(data, chkhsh, pre_name(chkhsh), None, wordpiece=wordpiece, like_converter=like_converter)


_AGREE_SLOW = ("qwen3", "olmo-dolma2")  # large vocabularies; the golden ones run in test_convert.py


@pytest.mark.parametrize("fixture", [pytest.param(f, marks=pytest.mark.slow) if f in _AGREE_SLOW else f
                                     for f in sorted(AGREE)])
def test_structure_agrees_with_the_hash(fixture, tmp_path):
    data, decision = _decision(fixture, tmp_path)
    assert (decision.name, decision.how) == (AGREE[fixture], "structure and hash")
    assert AGREE[fixture] in splits_as(data)[0]


@pytest.mark.slow
@pytest.mark.parametrize("like_converter", [False, True])
def test_hash_with_another_ignore_merges_gives_way_to_the_exact_type(tmp_path, like_converter):
    """llama3's hash names smaug-bpe, which splits as llama-bpe but merges words the tokenizer.json
    takes whole: the exact type is written, and the hash's name with like_converter."""
    data, decision = _decision("llama3", tmp_path, like_converter=like_converter)
    expected = ("smaug-bpe", "structure and hash") if like_converter else ("llama-bpe", "structure")
    assert (decision.name, decision.how, decision.hash_name) == (*expected, "smaug-bpe")
    assert "smaug-bpe" in splits_as(data)[0] and "llama-bpe" in splits_as(data)[1]


def test_wordpiece_needs_no_pre_type(tmp_path):
    _, decision = _decision("bert-base-uncased", tmp_path, wordpiece=True)
    assert (decision.name, decision.how) == ("jina-v2-en", "wordpiece")


@pytest.mark.slow
@pytest.mark.parametrize("fixture", sorted(HASH_ONLY))
def test_hash_kept_where_llama_cpps_type_cuts_otherwise(fixture, tmp_path):
    _, decision = _decision(fixture, tmp_path)
    name, note = HASH_ONLY[fixture]
    assert (decision.name, decision.how) == (name, "hash") and note in decision.note


# --- structures, no hash ---------------------------------------------------------------------------

_QWEN2 = "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*" \
         "|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"


def _data(*steps: dict, normalizer: dict | None = None, ignore_merges: bool = False) -> dict:
    pre = steps[0] if len(steps) == 1 else {"type": "Sequence", "pretokenizers": list(steps)}
    return {"model": {"type": "BPE", "vocab": {}, "merges": [], "ignore_merges": ignore_merges},
            "normalizer": normalizer, "pre_tokenizer": pre}


def _split(regex: str, behavior: str = "Isolated", invert: bool = False) -> dict:
    return {"type": "Split", "pattern": {"Regex": regex}, "behavior": behavior, "invert": invert}


def _byte_level(use_regex: bool) -> dict:
    return {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": use_regex}


def _refusal(data: dict) -> str:
    with pytest.raises(FormatError) as err:
        decide(data, "0" * 64, None, None)
    return str(err.value)


@pytest.mark.parametrize(("data", "name"), [
    (_data(_byte_level(True)), "gpt-2"),
    (_data(_split(_QWEN2), _byte_level(False)), "qwen2"),
    # Removed + invert on a regex that keeps every character cuts as Isolated
    (_data(_split(_QWEN2, "Removed", True), _byte_level(False)), "qwen2"),
    (_data(_split(_QWEN2.replace("\\p{N}|", "\\p{N}{1,3}|")), _byte_level(False), ignore_merges=True), "llama-bpe"),
    (_data(_split(_QWEN2.replace("\\p{N}|", "\\p{N}{1,3}|")), _byte_level(False)), "dbrx"),
    (_data(_split(_QWEN2), _byte_level(False), normalizer={"type": "NFC"}), "qwen2"),
    (_data({"type": "Digits", "individual_digits": True}, _byte_level(True)), "starcoder"),
    # deepseek-ai/deepseek-coder-6.7b-base's Sequence: four Splits, Digits, ByteLevel without its regex
    (_data(_split("[\r\n]"), _split("\\s?\\p{L}+"), _split("\\s?\\p{P}+"), _split("[一-龥ࠀ-一가-퟿]+"),
           {"type": "Digits", "individual_digits": True}, _byte_level(False)), "deepseek-coder"),
])
def test_structure_names_the_type(data, name):
    decision = decide(data, "0" * 64, None, None)
    assert (decision.name, decision.how) == (name, "structure")


def test_digit_group_size_is_part_of_the_structure():
    regex = _QWEN2.replace("\\p{N}|", "\\p{N}{1,2}|")
    message = _refusal(_data(_split(regex), _byte_level(False)))
    assert "nearest: qwen2; differs: digits split up to 2 at a time here, 1 at a time in qwen2" in message, message


def test_byte_level_without_its_regex_is_not_gpt2():
    message = _refusal(_data(_byte_level(False)))
    assert "nearest: gpt-2; differs: 0 split regexes here, 1 in gpt-2" in message, message


def test_what_llama_cpp_cannot_express_is_named():
    assert "Split Removed invert=true (no llama.cpp form)" in _refusal(
        _data(_split("\\p{L}+", "Removed", True), _byte_level(True)))
    assert "normalizer NFKC (llama.cpp's BPE runs none)" in _refusal(
        _data(_byte_level(True), normalizer={"type": "NFKC"}))
    assert "ByteLevel add_prefix_space true (no llama.cpp form)" in _refusal(
        _data({**_byte_level(True), "add_prefix_space": True}))
    assert "pretokenizers[1]: Digits after ByteLevel" in _refusal(
        _data(_byte_level(True), {"type": "Digits", "individual_digits": True}))
    assert "ignore_merges true here, false in qwen2" in _refusal(
        _data(_split(_QWEN2), _byte_level(False), ignore_merges=True))


def test_pre_override_and_a_disagreeing_hash():
    data = _data(_split(_QWEN2), _byte_level(False))
    assert decide(data, "0" * 64, None, "gpt-2").how == "pre="
    decision = decide(data, "0" * 64, "gpt-2", None)  # an exact structure wins over a hash that splits otherwise
    assert (decision.name, decision.how) == ("qwen2", "structure") and "gpt-2" in decision.line()
    assert structure_of(data).byte_encode and nearest(data)[0] == "qwen2"


def test_equal_lists_must_also_cut_the_check_texts_alike():
    # the o200k and Tekken regexes as Xenova/gpt-4o's and Mistral-Nemo's tokenizer.json write them: llama.cpp's
    # lookahead spellings leave combining marks out of words
    o200k = next(hf for hf in HF_SPELLINGS if "{1,3}" in hf)
    message = _refusal(_data(_split(o200k, "Removed", True), _byte_level(False)))
    assert "nearest: gpt-4o; differs: pieces of 'cafe\u0301' differ" in message, message
    tekken = next(hf for hf in HF_SPELLINGS if "{1,3}" not in hf)
    message = _refusal(_data(_split(tekken), _byte_level(False)))
    assert "nearest: tekken; differs: pieces of 'cafe\u0301' differ at piece 0: ['cafe\xcc\u0123'] here, " \
           "['cafe', '\xcc\u0123'] in tekken; ignore_merges false here, true in tekken" in message, message


def test_sentencepiece_paths_report_that_no_pre_type_is_read(tmp_path):
    synthetic = Path(__file__).resolve().parents[1] / "data" / "convert" / "arctic"
    report = to_gguf(synthetic, tmp_path / "a.gguf")
    assert report.pre == "default" and report.pre_decision.how == "sentencepiece"
    assert any(line.startswith("pre decided by: sentencepiece") for line in report.lines())


# --- the tokenizer.json shapes of models llama.cpp's converter lists -------------------------------

SHAPES = {row["pre"]: row for row in json.loads(
    (Path(__file__).resolve().parents[1] / "data" / "convert" / "pre_tokenizer_shapes.json")
    .read_text(encoding="utf-8"))["shapes"]}
# pre name -> (nearest type, what differs) where llama.cpp's list cuts text otherwise than the tokenizer.json
# (its table still names that type from the hash: the hash's name is kept, and the report says why)
SHAPES_DIFFERING = {
    "falcon": ("default", "pre_tokenizer.pretokenizers[2]: Digits after ByteLevel"),
    # digits one at a time in the tokenizer.json, whole runs in llama.cpp's list
    "deepseek-llm": ("deepseek-llm", "split 6: digits split 1 at a time here, in whole runs in deepseek-llm"),
}


@pytest.mark.parametrize("pre", sorted(SHAPES))
def test_tokenizer_json_shapes_of_llama_cpps_listed_models(pre):
    row = SHAPES[pre]
    data = {"model": {"type": "BPE", "vocab": {}, "merges": []}, "normalizer": row["normalizer"],
            "pre_tokenizer": row["pre_tokenizer"]}
    names, _ = splits_as(data)
    if pre in SHAPES_DIFFERING:
        near, differences = nearest(data)
        assert not names and near == SHAPES_DIFFERING[pre][0] and differences[0].startswith(SHAPES_DIFFERING[pre][1])
        decision = decide(data, "0" * 64, pre, None)
        assert (decision.name, decision.how) == (pre, "hash") and SHAPES_DIFFERING[pre][1] in decision.note
    else:
        assert pre in names, f"{row['model']}: {names}"
        assert decide(data, "0" * 64, pre, None).how == "structure and hash"
