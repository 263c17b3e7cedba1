"""Where each format keeps its chat templates: `FormatFacts.chat.templates` against the references' loaders.

Model folders: transformers 5.x ``AutoTokenizer.from_pretrained(folder).chat_template``
(a string, or a dict of named templates), run here. GGUF: llama-cpp-python 0.3.36,
run here: the names are the ``tokenizer.chat_template.*`` keys of ``Llama.metadata``
(the ones its ``Llama.__init__`` offers as chat formats) and each template is what
llama.cpp's ``llama_model_chat_template(model, name)`` returns.
"""

from __future__ import annotations

import json
import shutil

import pytest
from fixtures import fixture_path, gguf_vocab_path

import polytok

VOCAB = ["[UNK]", "a", "b", "<s>", "</s>"]
STRING = "{% for m in messages %}{{ m.content }}{% endfor %}"
NAMED = [{"name": "default", "template": "D{{ messages | length }}"}, {"name": "tool_use", "template": "T"}]

# case: (tokenizer_config.json's chat_template, other files of the folder)
FOLDERS = {
    "config string": (STRING, {}),
    "config list of named templates": (NAMED, {}),
    "chat_template.jinja wins over the config": (NAMED, {"chat_template.jinja": "J{{ bos_token }}"}),
    "additional templates alone replace the config": (STRING, {"additional_chat_templates/rag.jinja": "R"}),
    "chat_template.jinja and additional templates": (None, {"chat_template.jinja": "J",
                                                            "additional_chat_templates/rag.jinja": "R",
                                                            "additional_chat_templates/tool_use.jinja": "T"}),
    "chat_template.json is the processor's file": (None, {"chat_template.json": json.dumps({"chat_template": "P"})}),
    "no template": (None, {}),
}


def _folder(tmp_path, config_template, files):
    tokenizer = {"version": "1.0", "added_tokens": [], "normalizer": None, "pre_tokenizer": {"type": "Whitespace"},
                 "post_processor": None, "decoder": None,
                 "model": {"type": "WordLevel", "vocab": {t: i for i, t in enumerate(VOCAB)}, "unk_token": "[UNK]"}}
    (tmp_path / "tokenizer.json").write_text(json.dumps(tokenizer), encoding="utf-8")
    config = {"tokenizer_class": "PreTrainedTokenizerFast", "bos_token": "<s>", "eos_token": "</s>",
              "unk_token": "[UNK]"}
    if config_template is not None:
        config["chat_template"] = config_template
    (tmp_path / "tokenizer_config.json").write_text(json.dumps(config), encoding="utf-8")
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text, encoding="utf-8")
    return tmp_path


def _transformers_templates(folder):
    transformers = pytest.importorskip("transformers")
    found = transformers.AutoTokenizer.from_pretrained(str(folder)).chat_template
    return {} if found is None else {"default": found} if isinstance(found, str) else dict(found)


@pytest.mark.parametrize("case", FOLDERS)
def test_folder_templates_are_the_ones_transformers_reads(tmp_path, case):
    folder = _folder(tmp_path, *FOLDERS[case])
    expected = _transformers_templates(folder)
    assert polytok.load(folder).facts.chat.templates == expected
    assert bool(expected) == (case not in ("no template", "chat_template.json is the processor's file"))


def test_a_sentencepiece_folder_reads_the_config_template_too(tmp_path):
    shutil.copy(fixture_path("spm-botchan-unigram-1000", "spm.model"), tmp_path / "tokenizer.model")
    config = {"tokenizer_class": "LlamaTokenizer", "chat_template": NAMED}
    (tmp_path / "tokenizer_config.json").write_text(json.dumps(config), encoding="utf-8")
    tok = polytok.load(tmp_path)
    assert tok.facts.format == "sentencepiece" and tok.facts.source == str(tmp_path)
    assert tok.facts.chat.templates == _transformers_templates(tmp_path) == {t["name"]: t["template"] for t in NAMED}


def test_a_malformed_config_list_is_refused_at_load_as_transformers_does(tmp_path):
    folder = _folder(tmp_path, [NAMED[0], {"name": "x"}], {})
    with pytest.raises(KeyError):  # transformers' __init__: template["template"]
        _transformers_templates(folder)
    with pytest.raises(polytok.FormatError, match=r"tokenizer_config.json.*chat_template\[1\]"):
        polytok.load(folder)


def _gguf(tmp_path, kvs):
    from formats.gguf_pack import ARRAY, FLOAT32, INT32, pack_gguf
    from formats.gguf_pack import STRING as GGUF_STRING

    tokens = ["<unk>", "<s>", "</s>"] + [f"<0x{b:02X}>" for b in range(256)] + ["▁", "a", "b"]
    head = [("general.architecture", GGUF_STRING, "llama"), ("tokenizer.ggml.model", GGUF_STRING, "llama"),
            ("tokenizer.ggml.tokens", (ARRAY, GGUF_STRING), tokens),
            ("tokenizer.ggml.scores", (ARRAY, FLOAT32), [0.0] * 259 + [-1.0, -2.0, -3.0]),
            ("tokenizer.ggml.token_type", (ARRAY, INT32), [2, 3, 3] + [6] * 256 + [1] * 3)]
    path = tmp_path / "chat.gguf"
    path.write_bytes(pack_gguf(head + kvs))
    return path


def _llama_cpp_templates(path):
    llama_cpp = pytest.importorskip("llama_cpp")
    model = llama_cpp.Llama(model_path=str(path), vocab_only=True, verbose=False)
    prefix = "tokenizer.chat_template."
    names = [key[len(prefix):] for key in model.metadata if key.startswith(prefix)]
    out = {}
    for name in names + [None]:
        found = llama_cpp.llama_model_chat_template(model.model, None if name is None else name.encode())
        if found is not None:
            out["default" if name is None else name] = found.decode("utf-8")
    return out, model


def test_gguf_named_templates_are_found_by_key_as_llama_cpp_finds_them(tmp_path):
    from formats.gguf_pack import ARRAY
    from formats.gguf_pack import STRING as GGUF_STRING

    # the names list is stale (gguf-py writes it; llama.cpp never reads it): every key counts
    path = _gguf(tmp_path, [("tokenizer.chat_template.rag", GGUF_STRING, "R{{ documents[0].text }}"),
                            ("tokenizer.chat_template", GGUF_STRING, "D{{ bos_token }}"),
                            ("tokenizer.chat_template.tool_use", GGUF_STRING, "T"),
                            ("tokenizer.chat_templates", (ARRAY, GGUF_STRING), ["rag"])])
    expected, model = _llama_cpp_templates(path)
    tok = polytok.load(path)
    assert tok.facts.chat.templates == expected == {"default": "D{{ bos_token }}", "rag": "R{{ documents[0].text }}",
                                                    "tool_use": "T"}
    # the template's bos_token is the text of llama.cpp's BOS, as llama-cpp-python gives its chat formatter
    assert tok.facts.chat.variables["bos_token"] == model._model.token_get_text(model.token_bos())
    assert tok.apply_chat_template([{"role": "user", "content": "a"}]) == "D<s>"


def test_gguf_templates_of_a_real_file_equal_llama_cpps():
    path = gguf_vocab_path("command-r")
    expected, _ = _llama_cpp_templates(path)
    assert set(expected) == {"default", "rag", "tool_use"}
    assert polytok.load(path).facts.chat.templates == expected


def test_a_bad_state_token_count_is_refused_naming_the_key(tmp_path):
    from formats.gguf_pack import STRING as GGUF_STRING

    path = _gguf(tmp_path, [("paperkiln.state_tokens.k", GGUF_STRING, "two")])
    with pytest.raises(polytok.FormatError, match=r"paperkiln\.state_tokens\.k.*non-negative integer"):
        polytok.load(path)
