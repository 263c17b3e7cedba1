"""Model folders read the same way on every path: gzip-compressed files, and folders without config.json.

A folder holding ``NAME.gz`` instead of ``NAME`` (every file of it) must convert to
the GGUF llama.cpp's converter wrote from the plain folder (tests/golden/convert,
tools/gen_convert_goldens.py, llama-cpp-python 0.3.36) and load as the reference
engines read the plain files (HF tokenizers 0.23.3 and transformers 5.24,
sentencepiece 0.2.3, mistral-common 1.13.1, run live). A folder without
config.json takes the converter path its tokenizer leaves no doubt about (the
goldens were made with the architecture named), or is refused in one line.
"""

from __future__ import annotations

import base64
import gzip
import shutil
from pathlib import Path

import pytest
from fixtures import edge_texts, fixture_path

import polytok
from polytok.errors import FormatError

from .test_convert import SYNTHETIC, build_folder, describe_differences, golden

pytest.importorskip("gguf")
from polytok.convert.converter import metadata_digests, to_gguf


def gzip_all(folder: Path) -> Path:
    """Every file of `folder` replaced by ``NAME.gz``."""
    for path in sorted(p for p in folder.iterdir() if p.is_file()):
        path.with_name(path.name + ".gz").write_bytes(gzip.compress(path.read_bytes(), mtime=0))
        path.unlink()
    return folder


def assert_like_llama_cpps_converter(name: str, header: dict, rows: list[dict], out: Path) -> None:
    differences = describe_differences(header["digests"], metadata_digests(out))
    assert not differences, f"{name}: " + "\n".join(differences)
    tok = polytok.load(out)
    bad = []
    for row in rows:
        mode = "parse" if row["parse_special"] else "text"
        if tok.encode(row["text"], add_special=row["add_special"], special=mode) != row["ids"]:
            bad.append(f"{row['name']} add_special={row['add_special']} {mode}")
        if "detok_keep" in row and tok.decoder.detokenize(row["ids"], False, True) \
                != base64.b64decode(row["detok_keep"]):
            bad.append(f"{row['name']} detokenize")
    assert not bad, f"{name}: {len(bad)} of {len(rows)} rows differ: {bad[:5]}"


# --- every file gzip-compressed ------------------------------------------------------------------


@pytest.mark.parametrize("name", ["llama3", "gpt2", "bert-base-uncased", "mistral-v3-hf-converted", "arctic"])
def test_gzipped_folder_converts_as_llama_cpps_converter_did_the_plain_one(name, tmp_path):
    header, rows = golden(name)
    folder = gzip_all(build_folder(name, header, tmp_path))
    assert not [p for p in folder.iterdir() if not p.name.endswith(".gz")]
    report = to_gguf(folder, tmp_path / "out.gguf", like_converter=True)
    if name in ("llama3", "gpt2"):
        assert report.n_merges > 0 and report.special_ids  # what a tokenizer.json.gz lost before
    assert_like_llama_cpps_converter(name, header, rows, tmp_path / "out.gguf")


def _qwen3_folders(tmp_path: Path) -> tuple[Path, Path]:
    """qwen3's files, its chat template moved to chat_template.jinja; plain and gzipped."""
    import json

    plain = tmp_path / "plain"
    plain.mkdir()
    shutil.copyfile(fixture_path("qwen3", "tokenizer.json"), plain / "tokenizer.json")
    config = json.loads(fixture_path("qwen3", "tokenizer_config.json").read_text(encoding="utf-8"))
    (plain / "chat_template.jinja").write_text(config.pop("chat_template"), encoding="utf-8")
    (plain / "tokenizer_config.json").write_text(json.dumps(config), encoding="utf-8")
    packed = gzip_all(Path(shutil.copytree(plain, tmp_path / "packed")))
    return plain, packed


def test_gzipped_folder_loads_as_hf_reads_the_plain_one(tmp_path):
    tokenizers = pytest.importorskip("tokenizers")
    transformers = pytest.importorskip("transformers")
    plain, packed = _qwen3_folders(tmp_path)
    tok = polytok.load(packed)
    hf = tokenizers.Tokenizer.from_file(str(plain / "tokenizer.json"))
    texts = edge_texts()
    assert [tok.encode(t) for t in texts] == [hf.encode(t).ids for t in texts]
    auto = transformers.AutoTokenizer.from_pretrained(str(plain), trust_remote_code=False)
    # tokenizer_config.json.gz: the named special tokens; chat_template.jinja.gz: the template
    assert tok.special_ids["eos"] == auto.eos_token_id and tok.special_ids["pad"] == auto.pad_token_id
    messages = [{"role": "user", "content": "Hi there"}, {"role": "assistant", "content": "Hello!"}]
    assert tok.apply_chat_template(messages, add_generation_prompt=True) == \
        auto.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)


def test_gzipped_special_tokens_map_is_read(tmp_path):
    transformers = pytest.importorskip("transformers")
    plain = tmp_path / "plain"
    plain.mkdir()
    for file in ("tokenizer.json", "special_tokens_map.json"):  # the map is the only source of the names
        shutil.copyfile(fixture_path("gpt2", file), plain / file)
    packed = gzip_all(Path(shutil.copytree(plain, tmp_path / "packed")))
    auto = transformers.AutoTokenizer.from_pretrained(str(plain), trust_remote_code=False)
    tok = polytok.load(packed)
    assert tok.special_ids == {"bos": auto.bos_token_id, "eos": auto.eos_token_id, "unk": auto.unk_token_id}


def test_gzipped_tekken_folder_loads_as_mistral_common_reads_the_plain_file(tmp_path):
    pytest.importorskip("mistral_common")
    from mistral_common.tokens.tokenizers.tekken import Tekkenizer

    plain = fixture_path("tekken-240718", "tekken.json")
    folder = tmp_path / "tekken"
    folder.mkdir()
    (folder / "tekken.json.gz").write_bytes(gzip.compress(plain.read_bytes(), mtime=0))
    tok = polytok.load(folder)
    ref = Tekkenizer.from_file(str(plain))
    texts = edge_texts()[:80]
    assert [tok.encode(t) for t in texts] == [ref.encode(t, bos=True, eos=False) for t in texts]


def test_gzipped_tokenizer_model_folder_loads_as_sentencepiece(tmp_path):
    spm = pytest.importorskip("sentencepiece")
    plain = fixture_path("spm-mistral-v3", "tokenizer.model")
    folder = tmp_path / "spm"
    folder.mkdir()
    (folder / "tokenizer.model.gz").write_bytes(gzip.compress(plain.read_bytes(), mtime=0))
    sp = spm.SentencePieceProcessor(model_file=str(plain))
    tok = polytok.load(folder)
    texts = edge_texts()
    assert [tok.encode(t) for t in texts] == [list(sp.encode(t)) for t in texts]


def test_gzipped_redefinition_folder_keeps_the_redefined_base_ids(tmp_path):
    spm = pytest.importorskip("sentencepiece")
    folder = gzip_all(Path(shutil.copytree(SYNTHETIC / "arctic", tmp_path / "arctic")))
    sp = spm.SentencePieceProcessor(model_file=str(SYNTHETIC / "arctic" / "tokenizer.model"))
    tok = polytok.load(folder)
    for new, old in {"<|im_start|>": "弘", "<|im_end|>": "给"}.items():
        assert tok.encode(new, special="parse") == [sp.piece_to_id(old)]  # tokenizer_config.json.gz read


# --- no config.json ------------------------------------------------------------------------------


@pytest.mark.parametrize("name, architecture, why", [
    ("bert-base-uncased", "bert", "WordPiece"), ("gpt2", "gpt2", "byte-level BPE"),
    ("llama2", "llama", "byte-fallback BPE")])
def test_folder_without_config_takes_the_path_its_tokenizer_decides(name, architecture, why, tmp_path):
    header, rows = golden(name)
    folder = build_folder(name, header, tmp_path)
    (folder / "config.json").unlink()  # the goldens' converter run named the architecture
    report = to_gguf(folder, tmp_path / "out.gguf", like_converter=True)
    assert report.architecture == architecture and why in (report.inferred or "")
    assert_like_llama_cpps_converter(name, header, rows, tmp_path / "out.gguf")


def _wordlevel_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "wordlevel"
    folder.mkdir()
    shutil.copyfile(fixture_path("wordlevel-en", "tokenizer.json"), folder / "tokenizer.json")
    return folder


def _whitespace_bpe_folder(tmp_path: Path) -> Path:
    """tortoise-tts: a BPE with a Whitespace pre-tokenizer, neither byte-level nor Llama's."""
    folder = tmp_path / "tortoise"
    folder.mkdir()
    shutil.copyfile(fixture_path("tortoise-tts", "tokenizer.json"), folder / "tokenizer.json")
    return folder


def test_folder_whose_tokenizer_does_not_decide_is_refused(tmp_path):
    folder = _whitespace_bpe_folder(tmp_path)
    with pytest.raises(FormatError) as err:
        to_gguf(folder, tmp_path / "out.gguf")
    assert err.value.key == "architectures" and err.value.file.endswith("config.json")
    assert "a BPE tokenizer.json" in str(err.value) and not (tmp_path / "out.gguf").exists()


@pytest.mark.parametrize("config", [None, {"architectures": ["BertModel"]}])
def test_wordlevel_folder_is_refused_for_its_model_with_or_without_config(tmp_path, config):
    import json

    folder = _wordlevel_folder(tmp_path)
    if config is not None:
        (folder / "config.json").write_text(json.dumps(config), encoding="utf-8")
    with pytest.raises(FormatError) as err:
        to_gguf(folder, tmp_path / "out.gguf")
    assert err.value.key == "model.type" and err.value.file.endswith("tokenizer.json")
    assert "no vocabulary type for a WordLevel model" in str(err.value) and not (tmp_path / "out.gguf").exists()


def test_cli_refusal_without_config_is_one_line(tmp_path, capsys):
    from polytok.cli.main import main

    folder = _whitespace_bpe_folder(tmp_path)
    assert main(["convert", str(folder), str(tmp_path / "out.gguf")]) == 1
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "config.json" in err and "architectures" in err
    assert not (tmp_path / "out.gguf").exists()


def test_gzipped_added_tokens_json_is_read(tmp_path):
    import json

    transformers = pytest.importorskip("transformers")
    plain = tmp_path / "plain"
    plain.mkdir()
    shutil.copyfile(fixture_path("gpt2", "tokenizer.json"), plain / "tokenizer.json")
    (plain / "added_tokens.json").write_text(json.dumps({"<new_token>": 50257}), encoding="utf-8")
    packed = gzip_all(Path(shutil.copytree(plain, tmp_path / "packed")))
    auto = transformers.AutoTokenizer.from_pretrained(str(plain), trust_remote_code=False)
    text = "a <new_token> b<new_token>"
    assert 50257 in auto.encode(text)
    assert polytok.load(packed).encode(text) == auto.encode(text)


def test_gzipped_config_beside_a_vocab_txt_is_read(tmp_path):
    transformers = pytest.importorskip("transformers")
    plain = tmp_path / "plain"
    plain.mkdir()
    shutil.copyfile(fixture_path("bert-base-cased-vocab", "vocab.txt"), plain / "vocab.txt")
    (plain / "tokenizer_config.json").write_text('{"do_lower_case": false}', encoding="utf-8")
    packed = gzip_all(Path(shutil.copytree(plain, tmp_path / "packed")))
    auto = transformers.BertTokenizerFast.from_pretrained(str(plain))
    texts = ["Hello World", "ÉCOLE Ünïcode"] + edge_texts()[:40]
    assert auto.encode("Hello World") != transformers.BertTokenizerFast(str(plain / "vocab.txt")).encode("Hello World")
    tok = polytok.load(packed)
    assert [tok.encode(t) for t in texts] == [auto.encode(t) for t in texts]


def test_folder_without_config_with_an_id_gap_is_sized_by_its_highest_id(tmp_path):
    """o200k-style ids with a gap and no config.json: the converter takes the count of texts for the
    size and fails; polytok writes one past the highest id, the gap as [PAD<i>], and HF's ids hold."""
    import json

    tokenizers = pytest.importorskip("tokenizers")
    folder = tmp_path / "gap"
    folder.mkdir()
    data = json.loads(fixture_path("gpt2", "tokenizer.json").read_text(encoding="utf-8"))
    data["model"]["vocab"]["<|far|>"] = 50300  # a gap in the vocabulary's ids, as o200k's 199999..200018
    data["added_tokens"] = [*data.get("added_tokens", []), {
        "id": 50300, "content": "<|far|>", "single_word": False, "lstrip": False, "rstrip": False,
        "normalized": False, "special": True}]
    (folder / "tokenizer.json").write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(FormatError) as err:
        to_gguf(folder, tmp_path / "conv.gguf", like_converter=True)
    assert err.value.key == "model.vocab" and "50300" in str(err.value) and "config.json" in str(err.value)
    report = to_gguf(folder, tmp_path / "out.gguf")
    assert report.n_tokens == 50301 and report.type_counts.get("UNUSED") == 300 - 257
    hf = tokenizers.Tokenizer.from_file(str(folder / "tokenizer.json"))
    tok = polytok.load(tmp_path / "out.gguf")
    for text in ("hello <|far|> world", "<|endoftext|><|far|>"):
        assert tok.encode(text, add_special=False, special="parse") == hf.encode(text, add_special_tokens=False).ids


def test_unigram_tokenizer_json_without_tokenizer_model_is_refused(tmp_path):
    folder = tmp_path / "albert"
    folder.mkdir()
    shutil.copyfile(fixture_path("albert-base-v2-tf5", "tokenizer.json"), folder / "tokenizer.json")
    with pytest.raises(FormatError) as err:
        to_gguf(folder, tmp_path / "out.gguf")
    assert err.value.key == "model.type" and "Unigram (UGM) is written from a tokenizer.model" in str(err.value)
