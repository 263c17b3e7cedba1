"""Token redefinitions (Arctic / InternLM2 style), the pre-tokenizer hash, and conversion errors.

The redefined ids come from sentencepiece run live on the folder's
tokenizer.model (the id of the piece the config renames) and from llama.cpp's
goldens (tests/golden/convert, tools/gen_convert_goldens.py); never from polytok.
"""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import pytest

import polytok
from polytok.errors import FormatError

spm = pytest.importorskip("sentencepiece")

SYNTHETIC = Path(__file__).resolve().parents[1] / "data" / "convert"
GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "convert"
ARCTIC = {"<|im_start|>": "弘", "<|im_end|>": "给"}
INTERN = {"<|plugin|>": "[UNUSED_TOKEN_141]", "<|interpreter|>": "[UNUSED_TOKEN_142]",
          "<|action_end|>": "[UNUSED_TOKEN_143]", "<|action_start|>": "[UNUSED_TOKEN_144]",
          "<|im_end|>": "[UNUSED_TOKEN_145]", "<|im_start|>": "[UNUSED_TOKEN_146]"}


def base_ids(folder: str, renames: dict[str, str]) -> dict[str, int]:
    sp = spm.SentencePieceProcessor(model_file=str(SYNTHETIC / folder / "tokenizer.model"))
    return {new: sp.piece_to_id(old) for new, old in renames.items()}


@pytest.mark.parametrize("folder, renames", [("arctic", ARCTIC), ("internlm2", INTERN), ("llama-redefined", ARCTIC)])
def test_load_folder_gives_the_redefined_base_id(folder, renames):
    tok = polytok.load(SYNTHETIC / folder)
    size = spm.SentencePieceProcessor(model_file=str(SYNTHETIC / folder / "tokenizer.model")).get_piece_size()
    for new, id_ in base_ids(folder, renames).items():
        assert tok.encode(new, special="parse") == [id_], new
        assert tok.token_to_id(new) == id_
        assert id_ < size
    assert len(tok) == size  # nothing appended


@pytest.mark.parametrize("folder, renames", [("arctic", ARCTIC), ("internlm2", INTERN)])
def test_converted_gguf_has_the_new_text_at_the_base_id(folder, renames, tmp_path):
    pytest.importorskip("gguf")
    from polytok.convert.converter import to_gguf

    report = to_gguf(SYNTHETIC / folder, tmp_path / "out.gguf")
    expected = base_ids(folder, renames)
    assert {r.new: r.id for r in report.redefinitions} == expected
    assert {r.new: r.old for r in report.redefinitions} == renames
    assert all(r.type == "CONTROL" for r in report.redefinitions)
    tok = polytok.load(tmp_path / "out.gguf")
    for new, id_ in expected.items():
        assert tok.encode(new, add_special=False, special="parse") == [id_]
        assert tok.id_to_token(id_) == new


def test_llama_cpp_golden_ids_for_the_redefined_text():
    # llama.cpp on its own converter's GGUF of the Arctic folder: <|im_start|> is the base id of 弘
    with gzip.open(GOLDEN / "arctic.jsonl.gz", "rt", encoding="utf-8") as f:
        rows = [json.loads(line) for line in f][1:]
    row = next(r for r in rows if r["text"] == "<|im_start|>" and r["parse_special"] and not r["add_special"])
    assert row["ids"] == [base_ids("arctic", ARCTIC)["<|im_start|>"]]
    tok = polytok.load(SYNTHETIC / "arctic")
    assert tok.encode("<|im_start|>", add_special=False, special="parse") == row["ids"]


def test_internlm2_eos_becomes_im_end():
    tok = polytok.load(SYNTHETIC / "internlm2")
    assert tok.special_ids["eos"] == base_ids("internlm2", INTERN)["<|im_end|>"]


def test_lone_model_file_loads_as_sentencepiece():
    path = SYNTHETIC / "arctic" / "tokenizer.model"
    sp = spm.SentencePieceProcessor(model_file=str(path))
    tok = polytok.load(path)
    for text in ("<|im_start|>弘 给", "弘扬 给你"):
        assert tok.encode(text) == sp.encode(text)


def _folder(tmp_path: Path, src: str = "arctic") -> Path:
    folder = tmp_path / src
    shutil.copytree(SYNTHETIC / src, folder)
    return folder


def test_redefinition_out_of_range_names_file_and_key(tmp_path):
    folder = _folder(tmp_path)
    config = json.loads((folder / "tokenizer_config.json").read_text(encoding="utf-8"))
    config["added_tokens_decoder"]["99999"] = {"content": "<|x|>", "special": True}
    (folder / "tokenizer_config.json").write_text(json.dumps(config), encoding="utf-8")
    with pytest.raises(FormatError) as err:
        polytok.load(folder)
    assert err.value.file.endswith("tokenizer_config.json") and err.value.key == "added_tokens_decoder.99999"


def test_convert_redefinition_out_of_range_names_file_and_key(tmp_path):
    pytest.importorskip("gguf")
    from polytok.convert.converter import to_gguf

    for name, rule in (("arctic", "arctic"), ("internlm2", "internlm2"), ("llama-redefined", "generic")):
        folder = _folder(tmp_path, name)
        config = json.loads((folder / "tokenizer_config.json").read_text(encoding="utf-8"))
        config["added_tokens_decoder"]["420"] = {"content": "<|x|>", "special": True}
        (folder / "tokenizer_config.json").write_text(json.dumps(config), encoding="utf-8")
        with pytest.raises(FormatError) as err:
            to_gguf(folder, tmp_path / f"{name}.gguf")
        assert err.value.file.endswith("tokenizer_config.json"), rule
        assert err.value.key == "added_tokens_decoder.420", rule


def test_bad_json_names_the_file(tmp_path):
    folder = _folder(tmp_path)
    (folder / "tokenizer_config.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(FormatError) as err:
        polytok.load(folder)
    assert err.value.file.endswith("tokenizer_config.json")


def test_convert_errors(tmp_path):
    pytest.importorskip("gguf")
    from polytok.convert.converter import to_gguf

    with pytest.raises(FormatError) as err:
        to_gguf(tmp_path / "missing", tmp_path / "o.gguf")
    assert err.value.file.endswith("missing")
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(FormatError):
        to_gguf(empty, tmp_path / "o.gguf")
    folder = _folder(tmp_path)
    (folder / "config.json").write_text('{"architectures": ["NoSuchModel"]}', encoding="utf-8")
    with pytest.raises(FormatError) as err:
        to_gguf(folder, tmp_path / "o.gguf")
    assert err.value.key == "architectures" and "NoSuchModel" in str(err.value)
    (folder / "config.json").write_text("[1,", encoding="utf-8")
    with pytest.raises(FormatError) as err:
        to_gguf(folder, tmp_path / "o.gguf")
    assert err.value.file.endswith("config.json")


def _gpt2_folder(tmp_path: Path, add_prefix_space: bool) -> Path:
    """The builtin GPT-2 tokenizer.json, its pre-tokenizer changed or not."""
    data = json.loads(gzip.decompress((Path(polytok.__file__).parent / "data" / "gpt2.json.gz").read_bytes()))
    data["pre_tokenizer"]["add_prefix_space"] = add_prefix_space
    folder = tmp_path / f"gpt2-{add_prefix_space}"
    folder.mkdir()
    (folder / "tokenizer.json").write_text(json.dumps(data), encoding="utf-8")
    (folder / "config.json").write_text('{"architectures": ["GPT2LMHeadModel"]}', encoding="utf-8")
    return folder


def _renumbered_gpt2_folder(tmp_path: Path) -> Path:
    """GPT-2 with the ids of two tokens swapped: the same tokenizer, a hash llama.cpp's table does not know."""
    tmp_path.mkdir(exist_ok=True)
    folder = _gpt2_folder(tmp_path, False)
    data = json.loads((folder / "tokenizer.json").read_text(encoding="utf-8"))
    vocab = data["model"]["vocab"]
    vocab["normal"], vocab["multiple"] = vocab["multiple"], vocab["normal"]  # both in the hash text
    (folder / "tokenizer.json").write_text(json.dumps(data), encoding="utf-8")
    return folder


def test_pre_hash_known_and_unknown(tmp_path):
    pytest.importorskip("gguf")
    from polytok.convert.check import ConversionCheckError
    from polytok.convert.converter import to_gguf
    from polytok.convert.gguf_vocab import pre_hash
    from polytok.formats.hf_json import read_model_folder

    known = to_gguf(_gpt2_folder(tmp_path, False), tmp_path / "a.gguf")
    assert known.pre == "gpt-2"
    renumbered = _renumbered_gpt2_folder(tmp_path / "r")
    chkhsh = pre_hash(read_model_folder(renumbered))
    # an unknown hash: the pre-tokenizer's structure names the type
    report = to_gguf(renumbered, tmp_path / "b.gguf")
    assert report.pre == "gpt-2" and report.chkhsh == chkhsh and report.check is not None
    assert report.pre_decision is not None and report.pre_decision.how == "structure"
    assert polytok.load(tmp_path / "b.gguf").facts.format == "gguf"
    report = to_gguf(renumbered, tmp_path / "b.gguf", pre="gpt-2")
    assert report.pre == "gpt-2" and report.pre_decision is not None and report.pre_decision.how == "pre="
    # no type adds a prefix space: refused by structure, naming the hash, the nearest type and the difference
    odd = _gpt2_folder(tmp_path, True)
    with pytest.raises(FormatError, match="nearest: gpt-2; differs: .*add_prefix_space true") as err:
        to_gguf(odd, tmp_path / "c.gguf")
    assert pre_hash(read_model_folder(odd)) in str(err.value)
    # a name whose pre-tokenizer splits otherwise (no prefix space): the GGUF is refused, naming a text
    with pytest.raises(ConversionCheckError, match="text whitespace-005"):
        to_gguf(odd, tmp_path / "c.gguf", pre="gpt-2")
    assert not (tmp_path / "c.gguf").exists()


def test_cli_convert_prints_the_report(tmp_path, capsys):
    pytest.importorskip("gguf")
    from polytok.cli.main import main

    assert main(["convert", str(SYNTHETIC / "arctic"), str(tmp_path / "a.gguf")]) == 0
    out = capsys.readouterr().out
    ids = base_ids("arctic", ARCTIC)
    assert f"{ids['<|im_start|>']}: '弘' -> '<|im_start|>' (CONTROL" in out
    assert "redefinitions: 2" in out and "tokenizer.ggml.pre: default" in out
    renumbered = _renumbered_gpt2_folder(tmp_path / "r")
    assert main(["convert", str(renumbered), str(tmp_path / "b.gguf")]) == 0
    out = capsys.readouterr().out
    assert "tokenizer.ggml.pre: gpt-2 (chkhsh" in out and "pre decided by: structure" in out
    assert main(["convert", str(renumbered), str(tmp_path / "b.gguf"), "--pre", "gpt-2"]) == 0
    assert "tokenizer.ggml.pre: gpt-2 (chkhsh" in capsys.readouterr().out
    odd = _gpt2_folder(tmp_path, True)
    assert main(["convert", str(odd), str(tmp_path / "c.gguf")]) == 1
    assert "nearest: gpt-2" in capsys.readouterr().err
    assert main(["convert", str(odd), str(tmp_path / "c.gguf"), "--pre", "gpt-2"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "does not read back" in err


def test_missing_gguf_package_names_the_extra(tmp_path, monkeypatch):
    import sys

    from polytok.errors import PolytokError

    monkeypatch.setitem(sys.modules, "gguf", None)
    from polytok.convert.converter import to_gguf

    with pytest.raises(PolytokError, match=r"polytok\[convert\]"):
        to_gguf(SYNTHETIC / "arctic", tmp_path / "o.gguf")


def test_transformers_appends_the_redefined_texts_polytok_does_not():
    """The known divergence: transformers 5.24's AutoTokenizer appends <|im_start|> after the vocabulary.

    Measured with protobuf installed (transformers needs it to read a bare tokenizer.model):
    len 422 and <|im_start|> -> [420] on the 420-piece Arctic folder; polytok keeps 420 and the base id.
    """
    pytest.importorskip("google.protobuf", reason="transformers reads a bare tokenizer.model only with protobuf")
    transformers = pytest.importorskip("transformers")
    hf = transformers.AutoTokenizer.from_pretrained(str(SYNTHETIC / "arctic"))
    size = spm.SentencePieceProcessor(model_file=str(SYNTHETIC / "arctic" / "tokenizer.model")).get_piece_size()
    hf_ids = hf.encode("<|im_start|>", add_special_tokens=False)
    assert hf_ids[0] >= size and len(hf) > size
    tok = polytok.load(SYNTHETIC / "arctic")
    expected = [base_ids("arctic", ARCTIC)["<|im_start|>"]]
    assert tok.encode("<|im_start|>", add_special=False, special="parse") == expected


def _redefined_gpt2_folder(tmp_path: Path, id_: int) -> tuple[Path, str, dict]:
    folder = _gpt2_folder(tmp_path, False)
    data = json.loads((folder / "tokenizer.json").read_text(encoding="utf-8"))
    old = next(t for t, i in data["model"]["vocab"].items() if i == id_)
    data["added_tokens"].append({"id": id_, "content": "<|im_start|>", "single_word": False, "lstrip": False,
                                 "rstrip": False, "normalized": False, "special": True})
    (folder / "tokenizer.json").write_text(json.dumps(data), encoding="utf-8")
    return folder, old, data


def test_tokenizer_json_added_token_on_a_base_id_replaces_its_text(tmp_path):
    """A tokenizer.json added token naming a base id: the new text at that id, reported, nothing appended.

    (llama.cpp's converter takes this id's text from transformers' ``vocab`` dict, whose
    order for two texts of one id follows a Rust HashMap: no stable reference to compare with.)
    Id 124 is 'À', byte 0xC0, which no UTF-8 text holds and no merge names.
    """
    pytest.importorskip("gguf")
    tokenizers = pytest.importorskip("tokenizers")
    from polytok.convert.converter import to_gguf

    folder, old, data = _redefined_gpt2_folder(tmp_path, 124)
    report = to_gguf(folder, tmp_path / "r.gguf")
    assert [(r.id, r.old, r.new, r.type) for r in report.redefinitions] == [(124, old, "<|im_start|>", "CONTROL")]
    assert report.n_tokens == len(data["model"]["vocab"])
    from polytok.formats.gguf_reader import read_gguf_metadata

    kv = read_gguf_metadata(tmp_path / "r.gguf").kv
    assert kv["tokenizer.ggml.tokens"][124] == "<|im_start|>" and kv["tokenizer.ggml.token_type"][124] == 3
    # HF appends the text as a new id; the check reads the GGUF's base id for it
    hf = tokenizers.Tokenizer.from_file(str(folder / "tokenizer.json"))
    assert hf.token_to_id("<|im_start|>") == len(data["model"]["vocab"])
    assert "special_markers-005" in report.check.known["redefinition"]
    assert polytok.load(tmp_path / "r.gguf").encode("<|im_start|>", special="parse") == [124]


def test_redefining_a_merged_token_writes_a_gguf_polytok_cannot_check(tmp_path):
    """Id 0 ('!') is named by merges: polytok's GGUF reader refuses merges naming a text the vocabulary
    no longer holds (llama.cpp builds its merge ranks without that check), so the read-back fails."""
    pytest.importorskip("gguf")
    from polytok.convert.check import ConversionCheckError
    from polytok.convert.converter import to_gguf

    folder, _, _ = _redefined_gpt2_folder(tmp_path, 0)
    with pytest.raises(ConversionCheckError, match=r"cannot be read back .*tokenizer\.ggml\.merges\["):
        to_gguf(folder, tmp_path / "r.gguf")
    assert not (tmp_path / "r.gguf").exists()


@pytest.mark.parametrize("folder", ["arctic", "llama-redefined", "internlm2"])
def test_folder_equals_sentencepiece_away_from_the_redefined_pieces(folder):
    from fixtures import edge_texts

    sp = spm.SentencePieceProcessor(model_file=str(SYNTHETIC / folder / "tokenizer.model"))
    tok = polytok.load(SYNTHETIC / folder)
    assert tok.special_ids.get("unk") == sp.unk_id()
    moved = set("弘给你") | {"[UNUSED_TOKEN_14"}
    every = edge_texts()  # the shared fixture's, or the repo's shorter list when it is absent
    texts = [t for t in every if not any(m in t for m in moved)]
    assert len(texts) > 0.9 * len(every)  # leaving out the texts that hold a moved piece leaves most
    bad = [t for t in texts if tok.encode(t, special="text") != sp.encode(t)]
    assert not bad, bad[:3]
