"""doctor on fixture folders with one defect planted each: it finds exactly that finding,
and nothing for the same folder without it. Expected ids come from the reference engines
run live (HF tokenizers, sentencepiece, transformers), never from polytok."""

from __future__ import annotations

import json

import pytest

from doctor.folders import CONVERSATION, codes, edit_json, hf_folder, model_folder
from polytok.doctor import diagnose

tokenizers = pytest.importorskip("tokenizers")

# every tokenizer.json folder also has this one (real: HF parses special markers by default)
FORGEABLE = "forgeable-markers"


def _template(folder, source):
    edit_json(folder / "tokenizer_config.json", lambda c: c.__setitem__("chat_template", source))


def _hf(folder):
    return tokenizers.Tokenizer.from_file(str(folder / "tokenizer.json"))


# -- files-disagree ------------------------------------------------------------------------------

GPT2_PATTERN = r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"


def _gpt2_trio(folder):
    """GPT-2 three ways: tokenizer.json, vocab.json + merges.txt, a tiktoken rank file."""
    return model_folder(folder, ("gpt2", "tokenizer.json"), ("gpt2", "tokenizer_config.json"), ("gpt2", "vocab.json"),
                        ("gpt2", "merges.txt"), ("whisper-gpt2-tiktoken", "gpt2.tiktoken"))


def _gpt2_split(data):
    """The byte-level regex spelt out as a Split, digits in runs of at most three (Llama 3's rule)."""
    data["pre_tokenizer"] = {"type": "Sequence", "pretokenizers": [
        {"type": "Split", "pattern": {"Regex": GPT2_PATTERN.replace(r"\p{N}+", r"\p{N}{1,3}")},
         "behavior": "Isolated", "invert": False},
        {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": False}]}


def _llama3_pair(folder):
    return model_folder(folder, ("llama3", "tokenizer.json"), ("llama3", "tokenizer_config.json"),
                        ("llama3-tiktoken", "tokenizer.model"))


def _llama3_split(data):
    split = data["pre_tokenizer"]["pretokenizers"][0]
    split["pattern"]["Regex"] = split["pattern"]["Regex"].replace(r"\p{N}{1,3}", r"\p{N}+")


def _check_planted_regex(tmp_path, make, edit, names):
    from polytok.doctor.disagree import TEXTS, files_disagree
    from polytok.doctor.files import read_folder

    clean = make(tmp_path / "clean")
    assert files_disagree(read_folder(clean).files) == []
    planted = make(tmp_path / "planted")
    edit_json(planted / "tokenizer.json", edit)
    # HF tokenizers live: the edge texts the edited regex changes (digit runs longer than three)
    before, after = _hf(clean), _hf(planted)
    before.no_truncation()
    after.no_truncation()
    changed = [name for name, text in TEXTS if before.encode(text, add_special_tokens=False).ids
               != after.encode(text, add_special_tokens=False).ids]
    assert changed and changed[0] == "numbers-002"
    found = files_disagree(read_folder(planted).files)
    assert [sorted(p.rsplit("/", 1)[1] for p in f.files) for f in found] == names
    for finding in found:
        assert finding.details["first"]["name"] == changed[0]
        assert finding.details["diverging_texts"] == changed
        assert "numbers-002" in finding.message and "'1234567890'" in finding.message


def test_a_tokenizer_json_whose_regex_differs_from_the_other_files_disagrees(tmp_path):
    # the tokenizer.json against each of the others; vocab.json and gpt2.tiktoken still agree
    _check_planted_regex(tmp_path, _gpt2_trio, _gpt2_split,
                         [["tokenizer.json", "vocab.json"], ["gpt2.tiktoken", "tokenizer.json"]])


@pytest.mark.slow
def test_llama3s_tokenizer_json_with_another_regex_disagrees_with_its_tiktoken_file(tmp_path):
    _check_planted_regex(tmp_path, _llama3_pair, _llama3_split, [["tokenizer.json", "tokenizer.model"]])


def test_the_converted_mistral_tokenizer_json_and_its_model_disagree_on_space_runs(tmp_path):
    # real: transformers' conversion of a SentencePiece BPE model differs from sentencepiece on
    # leading spaces and space runs (docs/compare.md); compared without added tokens, so
    # sentencepiece's missing BOS is not reported
    spm = pytest.importorskip("sentencepiece")
    folder = model_folder(tmp_path / "m", ("mistral-v3-hf-converted", "tokenizer.json"),
                          ("mistral-v3-hf-converted", "tokenizer_config.json"), ("spm-mistral-v3", "tokenizer.model"))
    found = [f for f in diagnose(folder) if f.code == "files-disagree"]
    assert len(found) == 1
    details = found[0].details
    assert set(details["reasons"]) == {"metaspace-leading-space", "spm-space-runs"}
    assert details["first"]["text"] == " "
    sp = spm.SentencePieceProcessor(model_file=str(folder / "tokenizer.model"))
    assert _hf(folder).encode(" ", add_special_tokens=False).ids != sp.encode(" ")
    assert [[i] for i, _ in details["first"]["b"]] == [[i] for i in sp.encode(" ")]


# -- double-bos ----------------------------------------------------------------------------------

def test_a_template_writing_bos_beside_a_tokenizer_adding_it_is_a_double_bos(tmp_path):
    clean = hf_folder(tmp_path / "clean", "llama2")
    _template(clean, "{% for m in messages %}[{{ m.role }}] {{ m.content }}\n{% endfor %}")
    assert codes(diagnose(clean)) == [FORGEABLE]
    planted = hf_folder(tmp_path / "planted", "llama2")
    _template(planted, "{{ bos_token }}{% for m in messages %}[{{ m.role }}] {{ m.content }}\n{% endfor %}")
    # HF tokenizers live, the rendered text encoded as tokenizer(text) encodes it
    ids = _hf(planted).encode("<s>[user] Hello\n").ids
    assert ids[:2] == [1, 1]
    found = diagnose(planted)
    assert codes(found) == ["double-bos", FORGEABLE]
    assert found[0].details["prefix"] == [1] and found[0].details["ids"][:2] == ids[:2]
    assert "'<s>'" in found[0].message


# -- template-not-prefix-preserving --------------------------------------------------------------

@pytest.mark.parametrize("template, way, kind, message", [
    # drops every turn but the last two: message 3 pushes the first user turn out
    ("{% for m in messages[-2:] %}[{{ m.role }}] {{ m.content }}\n{% endfor %}", "history", "text", 3),
    # the generation prompt ends with a line break the reply does not start with
    ("{% for m in messages %}<|{{ m.role }}|>{{ m.content }}{% endfor %}"
     "{% if add_generation_prompt %}<|assistant|>\n{% endif %}", "generation", "text", 2),
    # a text prefix whose ids are not: 'Hello ' ends in '▁' where 'Hello Hi' has '▁Hi'
    ("{% for m in messages %}{{ m.content }} {% endfor %}", "generation", "ids", 2),
])
def test_a_template_that_rewrites_earlier_turns_is_not_prefix_preserving(tmp_path, template, way, kind, message):
    folder = hf_folder(tmp_path / "f", "llama2")
    _template(folder, template)
    found = [f for f in diagnose(folder) if f.code == "template-not-prefix-preserving"]
    assert len(found) == 1
    assert (found[0].details["way"], found[0].details["as"], found[0].details["message"]) == (way, kind, message)
    assert f"message {message}" in found[0].message
    if kind == "ids":  # HF tokenizers live: the ids of the two renderings
        hf = _hf(folder)
        short, long = (hf.encode(t, add_special_tokens=False).ids for t in ("Hello ", "Hello Hi there. "))
        assert long[:len(short)] != short


def test_a_template_that_extends_each_rendering_is_prefix_preserving(tmp_path):
    folder = hf_folder(tmp_path / "f", "llama2")
    _template(folder, "{% for m in messages %}<|{{ m.role }}|>\n{{ m.content }}\n{% endfor %}"
                      "{% if add_generation_prompt %}<|assistant|>\n{% endif %}")
    assert codes(diagnose(folder)) == [FORGEABLE]


def test_a_template_that_fails_on_a_plain_conversation(tmp_path):
    folder = hf_folder(tmp_path / "f", "llama2")
    _template(folder, "{{ raise_exception('only one message') if messages | length > 1 }}x")
    found = [f for f in diagnose(folder) if f.code == "template-failed"]
    assert len(found) == 1 and "only one message" in found[0].message


# -- redefined-tokens and past-embedding-size ----------------------------------------------------

def _added(entries):
    def change(config):
        for id_, text in entries.items():
            config["added_tokens_decoder"][str(id_)] = {"content": text, "special": True, "lstrip": False,
                                                        "rstrip": False, "normalized": False, "single_word": False}
    return change


def test_a_sentencepiece_folder_whose_config_renames_an_id(tmp_path):
    spm = pytest.importorskip("sentencepiece")
    folder = model_folder(tmp_path / "f", ("spm-mistral-v1", "tokenizer.model"))
    assert diagnose(folder) == []
    (folder / "tokenizer_config.json").write_text(json.dumps({"added_tokens_decoder": {}}), encoding="utf-8")
    edit_json(folder / "tokenizer_config.json", _added({31998: "<|im_start|>"}))
    sp = spm.SentencePieceProcessor(model_file=str(folder / "tokenizer.model"))
    found = diagnose(folder)
    assert codes(found) == ["redefined-tokens"]
    assert [(r["id"], r["old"], r["new"]) for r in found[0].details["redefinitions"]] == \
        [(31998, sp.id_to_piece(31998), "<|im_start|>")]
    assert found[0].details["reasons"] == ["redefined-token-appended"]


def _renamed_llama2(folder):
    folder = hf_folder(folder, "llama2")
    edit_json(folder / "tokenizer_config.json", _added({31998: "<|im_start|>"}))
    (folder / "config.json").write_text(json.dumps({"vocab_size": 32000}), encoding="utf-8")
    return folder


def test_a_tokenizer_json_folder_whose_config_renames_an_id_and_passes_the_embedding(tmp_path):
    folder = _renamed_llama2(tmp_path / "f")
    hf = _hf(folder)  # HF tokenizers live: the piece the id holds, and the first id after the vocabulary
    old, after = hf.id_to_token(31998), hf.get_vocab_size(with_added_tokens=True)
    assert old != "<|im_start|>" and after == 32000
    found = diagnose(folder)
    assert codes(found) == [FORGEABLE, "redefined-tokens", "past-embedding-size"]
    assert found[1].details["redefinitions"] == [{"id": 31998, "old": old, "new": "<|im_start|>",
                                                  "source": "tokenizer_config.json added_tokens_decoder.31998",
                                                  "appended_as": after}]
    assert [e["id"] for e in found[2].details["ids"]] == [after]


@pytest.mark.slow
def test_transformers_appends_the_renamed_text_of_a_tokenizer_json_folder(tmp_path):
    transformers = pytest.importorskip("transformers")
    folder = _renamed_llama2(tmp_path / "f")
    auto = transformers.AutoTokenizer.from_pretrained(str(folder))  # transformers 5.24 live
    appended, old = auto.convert_tokens_to_ids("<|im_start|>"), auto.convert_ids_to_tokens(31998)
    finding = next(f for f in diagnose(folder) if f.code == "redefined-tokens")
    assert finding.details["redefinitions"][0]["appended_as"] == appended == 32000
    assert finding.details["redefinitions"][0]["old"] == old


@pytest.mark.parametrize("vocab_size, flagged", [(32001, []), (32000, [32000]), (31000, [32000])])
def test_added_ids_at_or_past_the_config_vocab_size(tmp_path, vocab_size, flagged):
    folder = hf_folder(tmp_path / "f", "llama2")
    edit_json(folder / "tokenizer_config.json", _added({32000: "<|extra|>"}))
    (folder / "config.json").write_text(json.dumps({"text_config": {"vocab_size": vocab_size}}), encoding="utf-8")
    found = [f for f in diagnose(folder) if f.code == "past-embedding-size"]
    assert [e["id"] for f in found for e in f.details["ids"]] == flagged


def test_an_unreadable_file_beside_the_tokenizer(tmp_path):
    folder = hf_folder(tmp_path / "f", "llama2")
    (folder / "tekken.json").write_text("{not json", encoding="utf-8")
    found = diagnose(folder)
    assert codes(found) == ["unreadable-file", FORGEABLE]
    assert "tekken.json" in found[0].message


def test_the_conversation_is_the_documented_one():
    from polytok.doctor.conversation import CONVERSATION as used

    assert list(used) == CONVERSATION


def test_the_files_read_include_a_gguf_inside_and_one_named_after_the_folder(tmp_path):
    from polytok.doctor.files import tokenizer_files

    folder = tmp_path / "model[1]"
    folder.mkdir()
    for name in ("model[1]/tokenizer.json", "model[1]/vocab.json", "model[1]/weights.gguf", "model[1]-Q4.gguf",
                 "model1.gguf", "other.gguf"):
        (tmp_path / name).write_bytes(b"")
    # vocab.json is a GPT-2 vocabulary only beside merges.txt
    assert [p.name for p in tokenizer_files(folder)] == ["weights.gguf", "tokenizer.json", "model[1]-Q4.gguf"]
    (folder / "merges.txt").write_bytes(b"")
    assert [p.name for p in tokenizer_files(folder)] == ["weights.gguf", "vocab.json", "tokenizer.json",
                                                         "model[1]-Q4.gguf"]


@pytest.mark.slow
def test_a_gguf_converted_beside_the_folder_disagrees_with_a_planted_tokenizer_json(tmp_path):
    pytest.importorskip("gguf")
    from polytok.convert.converter import to_gguf
    from polytok.doctor.disagree import files_disagree
    from polytok.doctor.files import read_folder

    folder = _gpt2_trio(tmp_path / "gpt2")
    to_gguf(folder, tmp_path / "gpt2.gguf")
    assert files_disagree(read_folder(folder).files) == []
    edit_json(folder / "tokenizer.json", _gpt2_split)
    found = files_disagree(read_folder(folder).files)
    assert [sorted(p.rsplit("/", 1)[1] for p in f.files) for f in found] == \
        [["tokenizer.json", "vocab.json"], ["gpt2.tiktoken", "tokenizer.json"], ["gpt2.gguf", "tokenizer.json"]]


@pytest.mark.slow
def test_arctics_renamed_ids_are_appended_by_transformers_past_the_embedding(tmp_path):
    # a synthetic Arctic folder (tests/data/convert): 弘/给 renamed <|im_start|>/<|im_end|>
    pytest.importorskip("google.protobuf", reason="transformers reads a bare tokenizer.model only with protobuf")
    transformers = pytest.importorskip("transformers")
    spm = pytest.importorskip("sentencepiece")
    import shutil
    from pathlib import Path

    folder = tmp_path / "arctic"
    shutil.copytree(Path(__file__).resolve().parents[1] / "data" / "convert" / "arctic", folder)
    sp = spm.SentencePieceProcessor(model_file=str(folder / "tokenizer.model"))
    size = sp.get_piece_size()
    rows = json.loads((folder / "config.json").read_text(encoding="utf-8"))["vocab_size"]
    appended = transformers.AutoTokenizer.from_pretrained(str(folder)).convert_tokens_to_ids("<|im_start|>")
    assert appended >= size >= rows  # transformers 5.24 live: a new id, past the embedding
    found = diagnose(folder)
    assert codes(found) == ["redefined-tokens"]
    assert [(r["id"], r["old"], r["new"]) for r in found[0].details["redefinitions"]] == \
        [(sp.piece_to_id("弘"), "弘", "<|im_start|>"), (sp.piece_to_id("给"), "给", "<|im_end|>")]
    assert f"new ids after the base vocabulary (from {size}), past config.json's vocab_size {rows}" in found[0].message
