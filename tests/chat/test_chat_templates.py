"""Where templates come from, the Jinja environment, message handling and errors — against transformers.

The reference is transformers 5.x run here: ``AutoTokenizer.from_pretrained`` on a folder
(which reads chat_template.jinja, additional_chat_templates/ and tokenizer_config.json), or
``render_jinja_template`` with a template read from a GGUF file by gguf-py.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import json
import shutil

import pytest
from fixtures import fixture_path, gguf_vocab_path, llama_cpp_template_path

import polytok
from polytok import ChatTemplateError

transformers = pytest.importorskip("transformers")
from transformers.utils.chat_template_utils import render_jinja_template  # noqa: E402

HELLO = [{"role": "user", "content": "Hello"}]
CHAT = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": "Hello!"}, {"role": "user", "content": "Bye"}]


TINY_VOCAB = ["[UNK]", "Hello", "Hi", "Bye", "a", "b", "<|im_start|>", "<|im_end|>", "<s>", "</s>", "<tool>"]


def tiny_tokenizer_json():
    """A word-level tokenizer.json made here: templates, not tokenization, are under test."""
    added = [{"id": TINY_VOCAB.index(t), "content": t, "single_word": False, "lstrip": False, "rstrip": False,
              "normalized": False, "special": t != "<tool>"} for t in TINY_VOCAB[6:]]
    return {"version": "1.0", "truncation": None, "padding": None, "added_tokens": added, "normalizer": None,
            "pre_tokenizer": {"type": "Whitespace"}, "post_processor": None, "decoder": None,
            "model": {"type": "WordLevel", "vocab": {t: i for i, t in enumerate(TINY_VOCAB)}, "unk_token": "[UNK]"}}


def make_folder(tmp_path, name=None, config_changes=None, files=None):
    """A model folder: a fixture's (or the tiny) tokenizer.json and tokenizer_config.json, changed as asked."""
    folder = tmp_path / (name or "tiny")
    folder.mkdir(parents=True)
    if name is None:
        (folder / "tokenizer.json").write_text(json.dumps(tiny_tokenizer_json()), encoding="utf-8")
        config = {"bos_token": "<s>", "eos_token": "</s>", "unk_token": "[UNK]",
                  "tokenizer_class": "PreTrainedTokenizerFast"}
    else:
        shutil.copy(fixture_path(name, "tokenizer.json"), folder / "tokenizer.json")
        config = json.loads(fixture_path(name, "tokenizer_config.json").read_text(encoding="utf-8"))
    for key, value in (config_changes or {}).items():
        if value is None:
            config.pop(key, None)
        else:
            config[key] = value
    (folder / "tokenizer_config.json").write_text(json.dumps(config), encoding="utf-8")
    for rel, text in (files or {}).items():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_text(text, encoding="utf-8")
    return folder


def both(folder):
    return polytok.load(folder), transformers.AutoTokenizer.from_pretrained(str(folder))


@functools.cache
def llama3_pair():
    folder = fixture_path("llama3", "tokenizer.json").parent
    fixture_path("llama3", "tokenizer_config.json")
    return polytok.load(folder), transformers.AutoTokenizer.from_pretrained(str(folder))


def ref_render(ref, messages, **kw):
    return ref.apply_chat_template(copy.deepcopy(messages), tokenize=False, **kw)


# -- where the template comes from ---------------------------------------------------------


def test_chat_template_jinja_wins_over_the_config(tmp_path):
    folder = make_folder(tmp_path, files={"chat_template.jinja": "{% for m in messages %}[{{ m.role }}]{{ m.content }}"
                                                                 "{% endfor %}"})
    tok, ref = both(folder)
    expected = "[system]Be brief.[user]Hi[assistant]Hello![user]Bye"
    assert tok.apply_chat_template(CHAT) == ref_render(ref, CHAT) == expected


def test_named_templates_from_additional_chat_templates(tmp_path):
    folder = make_folder(tmp_path, files={"chat_template.jinja": "D{{ messages[0].content }}",
                                          "additional_chat_templates/tool_use.jinja": "T{{ tools | tojson }}",
                                          "additional_chat_templates/rag.jinja": "R{{ documents[0].text }}"})
    tok, ref = both(folder)
    tools = [{"type": "function", "function": {"name": "f"}}]
    docs = [{"title": "t", "text": "body"}]
    assert tok.apply_chat_template(HELLO) == ref_render(ref, HELLO) == "DHello"
    assert tok.apply_chat_template(HELLO, tools=tools) == ref_render(ref, HELLO, tools=tools)
    assert tok.apply_chat_template(HELLO, template="rag", documents=docs) == \
        ref_render(ref, HELLO, chat_template="rag", documents=docs) == "Rbody"
    with pytest.raises(ChatTemplateError, match=r"unknown template name 'ragg'.*\['default', 'rag', 'tool_use'\]"):
        tok.apply_chat_template(HELLO, template="ragg")


def test_named_templates_from_the_config_list(tmp_path):
    named = [{"name": "default", "template": "{{ bos_token }}D{{ messages | length }}"},
             {"name": "tool_use", "template": "T{% for t in tools %}{{ t.function.name }}{% endfor %}"}]
    folder = make_folder(tmp_path, config_changes={"chat_template": named})
    tok, ref = both(folder)
    tools = [{"type": "function", "function": {"name": "lookup"}}]
    assert tok.apply_chat_template(CHAT) == ref_render(ref, CHAT) == "<s>D4"
    assert tok.apply_chat_template(CHAT, tools=tools) == ref_render(ref, CHAT, tools=tools) == "Tlookup"
    # a given source that is not a name renders as a template of its own
    assert tok.apply_chat_template(CHAT, template="{{ eos_token }}!") == "</s>!"


def test_several_templates_without_a_default_need_a_name(tmp_path):
    folder = make_folder(tmp_path, config_changes={"chat_template": [{"name": "a", "template": "A"},
                                                                   {"name": "b", "template": "B"}]})
    tok, ref = both(folder)
    with pytest.raises(ValueError):
        ref_render(ref, HELLO)
    with pytest.raises(ChatTemplateError, match=r"none is named 'default'.*\['a', 'b'\]"):
        tok.apply_chat_template(HELLO)
    assert tok.apply_chat_template(HELLO, template="b") == "B"


def test_no_template_is_an_error_that_says_where_it_looked(tmp_path):
    tok = polytok.load(make_folder(tmp_path))
    with pytest.raises(ChatTemplateError, match="no chat template.*tokenizer_config.json"):
        tok.apply_chat_template(HELLO)
    with pytest.raises(ChatTemplateError, match="unknown template name 'default'"):
        tok.apply_chat_template(HELLO, template="default")


def _gguf_reference(name):
    # gguf's reader needs ~18 s for command-r's 256k tokens; the metadata reader is tested against it
    from polytok.formats.gguf_reader import read_gguf_metadata

    kv = read_gguf_metadata(gguf_vocab_path(name)).kv
    return kv, kv["tokenizer.ggml.tokens"]


def test_gguf_named_templates_equal_transformers_rendering():
    fields, texts = _gguf_reference("command-r")
    tok = polytok.load(gguf_vocab_path("command-r"))
    specials = {"bos_token": texts[fields["tokenizer.ggml.bos_token_id"]],
                "eos_token": texts[fields["tokenizer.ggml.eos_token_id"]]}
    docs = [{"title": "Tides", "text": "The moon <b>pulls</b>."}]
    tools = [{"name": "search", "description": "Search", "parameter_definitions": {}}]
    for name, kwargs in (("default", {}), ("rag", {"documents": docs}), ("tool_use", {"tools": tools})):
        key = "tokenizer.chat_template" + ("" if name == "default" else f".{name}")
        (expected,), _ = render_jinja_template([copy.deepcopy(CHAT)], chat_template=fields[key],
                                               add_generation_prompt=True, **specials, **kwargs)
        assert tok.apply_chat_template(CHAT, template=name if name != "default" else None,
                                       add_generation_prompt=True, **kwargs) == expected, name
    assert tok.apply_chat_template(CHAT, tools=tools) == \
        tok.apply_chat_template(CHAT, template="tool_use", tools=tools)


def test_gguf_tokenize_parses_template_markers_and_reads_content_markers_as_text():
    tok = polytok.load(gguf_vocab_path("qwen2"))
    messages = [{"role": "user", "content": "say <|im_end|> please"}]
    text = tok.apply_chat_template(messages, add_generation_prompt=True)
    parsed = tok.apply_chat_template(messages, add_generation_prompt=True, tokenize=True, content_special="parse")
    assert parsed == tok.encode(text, add_special=False, special="parse")
    as_text = tok.apply_chat_template(messages, add_generation_prompt=True, tokenize=True)
    im_end = tok.token_to_id("<|im_end|>")
    assert parsed.count(im_end) == as_text.count(im_end) + 1
    assert tok.decode(as_text) == text


# -- the environment, against transformers' ------------------------------------------------

ENVIRONMENT = """\
{%- set ns = namespace(n=0) -%}
{% for m in messages %}
  {% if loop.index > 3 %}{% break %}{% endif %}
  {% if m.role == 'system' %}{% continue %}{% endif %}
  {% set ns.n = ns.n + 1 %}
  {% generation %}{{ m.content | tojson }}|{{ m | tojson(indent=2, sort_keys=True) }}{% endgeneration %}
{% endfor %}
{{ ns.n }} {{ bos_token }} {{ eos_token }} {{ date_string | default('none') }}
{{ dict(a=1, b="é<>&") | tojson(separators=(',', ':')) }} {{ dict.fromkeys(['x', 'y'], 0) | tojson(ensure_ascii=True) }}
{{ strftime_now('%Y') | length }} {{ messages | selectattr('role', 'equalto', 'user') | list | length }}
"""


def test_environment_behaviour_equals_transformers(tmp_path):
    tok, ref = both(make_folder(tmp_path))
    messages = [{"role": "system", "content": "S"}, {"role": "user", "content": "ünï <b>&</b>"},
                {"role": "assistant", "content": "x\ny", "extra": [1, 2.5, None, True]},
                {"role": "user", "content": "never reached"}]
    for kwargs in ({}, {"bos_token": "<B>", "date_string": "1 Jan 2026"}):
        expected = ref_render(ref, messages, chat_template=ENVIRONMENT, **kwargs)
        assert tok.apply_chat_template(messages, template=ENVIRONMENT, **kwargs) == expected
    assert "<B>" in tok.apply_chat_template(messages, template=ENVIRONMENT, bos_token="<B>")


@pytest.mark.parametrize("source", [
    "{{ messages.__class__ }}{{ ''.__class__.__mro__ }}",
    "{% set x = [] %}{{ x.append(1) }}",
    "{% set ns = namespace(_hidden=1) %}{{ ns._hidden }}",
    "{% set ns = namespace() %}{% set ns._x = 1 %}",
    "{{ raise_exception('no system role here') }}",
    "{{ missing.attribute }}",
    "{{ range(10 ** 6) | list | length }}",
])  # fmt: skip
def test_the_sandbox_refuses_what_transformers_refuses(tmp_path, source):
    tok, ref = both(make_folder(tmp_path))
    try:
        expected = ref_render(ref, HELLO, chat_template=source)
    except Exception:
        with pytest.raises(ChatTemplateError):
            tok.apply_chat_template(HELLO, template=source)
    else:
        assert tok.apply_chat_template(HELLO, template=source) == expected


def test_errors_name_the_template_and_line():
    tok, _ = llama3_pair()
    with pytest.raises(ChatTemplateError, match=r"line 3: syntax error") as err:
        tok.apply_chat_template(HELLO, template="a\nb\n{% for x in %}\n")
    assert err.value.line == 3
    with pytest.raises(ChatTemplateError, match=r"line 2: only two turns") as err:
        tok.apply_chat_template(HELLO, template="x\n{{ raise_exception('only two turns') }}")
    assert err.value.reason == "only two turns"
    gemma2 = llama_cpp_template_path("google-gemma-2-2b-it").read_text(encoding="utf-8")
    with pytest.raises(ChatTemplateError, match="System role not supported"):
        tok.apply_chat_template(CHAT, template=gemma2)
    with pytest.raises(ChatTemplateError, match="empty conversation"):
        tok.apply_chat_template([], template="{{ x }}")
    with pytest.raises(ChatTemplateError, match="tools\\[0\\] must be a JSON-schema dict"):
        tok.apply_chat_template(HELLO, template="{{ x }}", tools=[len])


# -- message handling -------------------------------------------------------------------------


@dataclasses.dataclass
class Message:
    role: str
    content: str | None
    reasoning: str | None = None


FIELDS = ("{% for m in messages %}{{ m.role }}:{{ m.content if 'content' in m else '<no content>' }}"
          "/{{ m.reasoning_content }}/{{ m.thinking }}/{{ m.reasoning }};{% endfor %}")


def test_message_objects_none_keys_and_reasoning_aliases_equal_transformers(tmp_path):
    tok, ref = both(make_folder(tmp_path))
    messages = [Message("user", "q"), Message("assistant", None, reasoning="because"),
                {"role": "assistant", "content": "a", "thinking": "t", "reasoning_content": None}]
    expected = ref_render(ref, messages, chat_template=FIELDS)
    assert tok.apply_chat_template(messages, template=FIELDS) == expected
    assert "assistant:<no content>/because/because/because" in expected


@pytest.mark.parametrize("template_name", ["Qwen-Qwen3-0.6B", "meta-llama-Llama-3.1-8B-Instruct",
                                           "google-gemma-2-2b-it", "deepseek-ai-DeepSeek-V3.1"])
@pytest.mark.parametrize("final", ["The answer is", "The answer is ", "Two\nlines "])
def test_continue_final_message_equals_transformers(template_name, final):
    source = llama_cpp_template_path(template_name).read_text(encoding="utf-8")
    tok, ref = llama3_pair()
    messages = [{"role": "user", "content": "Q?"}, {"role": "assistant", "content": final}]
    expected = ref_render(ref, messages, chat_template=source, continue_final_message=True)
    assert tok.apply_chat_template(messages, template=source, continue_final_message=True) == expected
    ids = ref.apply_chat_template(copy.deepcopy(messages), chat_template=source, continue_final_message=True,
                                  return_dict=False, sanitize_control_tokens=True)
    assert tok.apply_chat_template(messages, template=source, continue_final_message=True, tokenize=True) == ids


def test_continue_final_message_errors(tmp_path):
    tok = polytok.load(make_folder(tmp_path))
    messages = [{"role": "user", "content": "Q?"}, {"role": "assistant", "content": "A", "reasoning": "R"}]
    with pytest.raises(ChatTemplateError, match="exclude each other"):
        tok.apply_chat_template(messages, template="{{ x }}", continue_final_message=True, add_generation_prompt=True)
    with pytest.raises(ChatTemplateError, match="never reads"):
        tok.apply_chat_template(messages, template="{{ messages | length }}", continue_final_message="reasoning")
    with pytest.raises(ChatTemplateError, match="drops part of the final message"):
        tok.apply_chat_template(messages, template="{{ messages[0].content }}", continue_final_message=True)


# -- state tokens through apply_chat_template ---------------------------------------------------

STATE_TEMPLATE = ("{% for m in messages %}<{{ m.role }}>{{ m.content }}{% if m.role == 'assistant' %}<eot>"
                  "{% endif %}{% endfor %}{% if add_generation_prompt %}<assistant>{% endif %}")


def state_gguf(tmp_path, k):
    """A tiny SentencePiece-type GGUF with <user>/<assistant>/<eot> and paperkiln.state_tokens.k."""
    from formats.gguf_pack import ARRAY, FLOAT32, INT32, STRING, UINT32, pack_gguf

    specials = ["<unk>", "<s>", "</s>", "<user>", "<assistant>", "<eot>"]
    pieces = ["▁", "a", "b", "▁a", "▁b", "ab"]
    tokens = specials + [f"<0x{b:02X}>" for b in range(256)] + pieces
    kvs = [("general.architecture", STRING, "llama"), ("tokenizer.ggml.model", STRING, "llama"),
           ("tokenizer.ggml.tokens", (ARRAY, STRING), tokens),
           ("tokenizer.ggml.scores", (ARRAY, FLOAT32), [0.0] * 262 + [-float(i) for i in range(len(pieces))]),
           ("tokenizer.ggml.token_type", (ARRAY, INT32), [2, 3, 3, 3, 3, 3] + [6] * 256 + [1] * len(pieces)),
           ("tokenizer.ggml.bos_token_id", UINT32, 1), ("tokenizer.ggml.eos_token_id", UINT32, 2),
           ("tokenizer.chat_template", STRING, STATE_TEMPLATE)]
    if k is not None:
        kvs.append(("paperkiln.state_tokens.k", UINT32, k))
    path = tmp_path / f"state-{k}.gguf"
    path.write_bytes(pack_gguf(kvs))
    return polytok.load(path)


def test_state_tokens_from_the_gguf_key(tmp_path):
    tok = state_gguf(tmp_path, 2)
    n = len(tok)
    user, assistant, eot = (tok.token_to_id(t) for t in ("<user>", "<assistant>", "<eot>"))
    messages = [{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"},
                {"role": "user", "content": "ab <eot>"}]
    ids = tok.apply_chat_template(messages, add_generation_prompt=True, tokenize=True)
    plain = tok.apply_chat_template(messages, add_generation_prompt=True, tokenize=True, state_tokens=0)
    assert plain.count(eot) == 1  # the <eot> the user wrote is text
    at = plain.index(eot) + 1
    assert ids == plain[:at] + [n, n + 1] + plain[at:]
    assert ids[-1] == assistant and ids.count(user) == 2
    # text has no state ids: they are not tokens
    assert "<eot><user>" in tok.apply_chat_template(messages)
    # parsed content: the user's <eot> closes nothing (no reply in that exchange yet)
    parsed = tok.apply_chat_template(messages, tokenize=True, content_special="parse")
    assert parsed.count(eot) == 2 and parsed.count(n) == 1


def test_state_tokens_passed_in_and_their_markers(tmp_path):
    tok = state_gguf(tmp_path, None)
    messages = [{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}]
    base = tok.apply_chat_template(messages, tokenize=True)
    assert max(base) < len(tok)
    assert tok.apply_chat_template(messages, tokenize=True, state_tokens=3) == base + [len(tok) + j for j in range(3)]
    with pytest.raises(polytok.PolytokError, match="the user marker '<human>'"):
        tok.apply_chat_template(messages, tokenize=True, state_tokens=1, state_markers=("<human>", "<assistant>",
                                                                                          "<eot>"))


def test_special_token_variables_include_the_model_specific_ones(tmp_path):
    folder = make_folder(tmp_path, config_changes={"extra_special_tokens": {"image_token": "<tool>"},
                                                   "pad_token": "b"})
    tok, ref = both(folder)
    source = "{{ bos_token }}|{{ eos_token }}|{{ unk_token }}|{{ pad_token }}|{{ image_token }}|{{ mask_token }}"
    assert tok.apply_chat_template(HELLO, template=source) == ref_render(ref, HELLO, chat_template=source) \
        == "<s>|</s>|[UNK]|b|<tool>|"


def test_content_markers_longest_first_and_forged_markers(tmp_path):
    """A marker inside a longer one is marked as part of the longer; private-use markers are dropped."""
    tj = tiny_tokenizer_json()
    for i, content in enumerate(["<x>", "<x>y"], start=len(TINY_VOCAB)):
        tj["model"]["vocab"][content] = i
        tj["added_tokens"].append({"id": i, "content": content, "single_word": False, "lstrip": False,
                                   "rstrip": False, "normalized": False, "special": True})
    tj["model"]["vocab"].update({"y": 20, "<": 21, ">": 22, "x": 23, ">y": 24, "yy": 25})
    folder = make_folder(tmp_path)
    (folder / "tokenizer.json").write_text(json.dumps(tj), encoding="utf-8")
    tok, ref = both(folder)
    source = "<s>{% for m in messages %}<x>{{ m.content }}</s>{% endfor %}"
    for content in ["a <x>yy b <x> y", "\U000f0000<x>\U000f0001 a", "<x\U000f0001>y", "a y\U000f0001y"]:
        messages = [{"role": "user", "content": content}]
        for sanitize in (True, False):
            expected = ref.apply_chat_template(copy.deepcopy(messages), chat_template=source, return_dict=False,
                                               sanitize_control_tokens=sanitize)
            got = tok.apply_chat_template(messages, template=source, tokenize=True,
                                          content_special="text" if sanitize else "parse")
            assert got == expected, (content, sanitize)


def test_chat_control_tokens_from_the_config_and_tokens_plain_text_makes(tmp_path):
    # "<tool>" is a non-special added token the template never writes: a control token only when listed
    source = "<s>{% for m in messages %}{{ m.content }}</s>{% endfor %}"
    messages = [{"role": "user", "content": "a <tool> b"}]
    for listed in (None, ["<tool>"]):
        folder = make_folder(tmp_path / str(listed is None), config_changes={"chat_control_tokens": listed})
        tok, ref = both(folder)
        expected = ref.apply_chat_template(copy.deepcopy(messages), chat_template=source, return_dict=False,
                                           sanitize_control_tokens=True)
        assert tok.apply_chat_template(messages, template=source, tokenize=True) == expected
        assert (tok.token_to_id("<tool>") in expected) == (listed is None)
    # a special token whose text the model itself makes from plain text cannot be read as text
    tj = tiny_tokenizer_json()
    tj["added_tokens"].append({"id": 1, "content": "Hello", "single_word": False, "lstrip": False, "rstrip": False,
                               "normalized": False, "special": True})
    folder = make_folder(tmp_path / "hello")
    (folder / "tokenizer.json").write_text(json.dumps(tj), encoding="utf-8")
    tok, ref = both(folder)
    with pytest.raises(ValueError, match="Can't sanitize"):
        ref.apply_chat_template(HELLO, chat_template=source, return_dict=False, sanitize_control_tokens=True)
    with pytest.raises(polytok.EncodeError, match="cannot read 'Hello' as text"):
        tok.apply_chat_template(HELLO, template=source, tokenize=True)
