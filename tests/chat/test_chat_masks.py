"""``return_dict``, ``assistant_masks`` and ``role_masks`` of `apply_chat_template`.

The assistant mask is compared live with transformers 5.x ``apply_chat_template(...,
return_dict=True, return_assistant_tokens_mask=True)`` on fixture tokenizer folders and
templates with ``{% generation %}`` blocks: the four of llama.cpp's ``models/templates/``
that have them (LFM2.5-8B-A1B and three poolside Laguna), templates written here for the
edge cases, and llama.cpp's Qwen2.5 template with blocks added around its assistant turns.

Role masks have no reference engine. Each message gets a sentinel content; the expected
mask of a role is built without polytok: the sentinels are found in transformers' rendering
of the chat, and the ids whose offsets (transformers' own, from the same folder) overlap
one of them are the role's. Then the masked ids must decode to exactly the sentinels.
That is done for every template of llama.cpp's ``models/templates/`` (the llama-cpp-python
sdist, `fixtures.llama_cpp_templates_dir`).
"""

from __future__ import annotations

import copy
import logging
import re
import warnings

import pytest
from fixtures import fixture_path, gguf_vocab_path, llama_cpp_template_path, llama_cpp_templates_dir

import polytok
from polytok import ChatTemplateError
from polytok.chat.masks import GENERATION_TAG

transformers = pytest.importorskip("transformers")

_PAIRS: dict = {}


def pair(name):
    """(polytok tokenizer, transformers tokenizer) of a fixture folder, built once."""
    if name not in _PAIRS:
        fixture_path(name, "tokenizer_config.json")
        folder = fixture_path(name, "tokenizer.json").parent
        _PAIRS[name] = (polytok.load(folder), transformers.AutoTokenizer.from_pretrained(str(folder)))
    return _PAIRS[name]


# -- templates with {% generation %} -------------------------------------------------------

HEADERS = ("{{ bos_token }}{% for m in messages %}<|start_header_id|>{{ m.role }}<|end_header_id|>\n\n"
           "{% if m.role == 'assistant' %}{% generation %}{{ m.content }}<|eot_id|>{% endgeneration %}"
           "{% else %}{{ m.content }}<|eot_id|>{% endif %}{% endfor %}"
           "{% if add_generation_prompt %}<|start_header_id|>assistant<|end_header_id|>\n\n{% endif %}")
# the block starts inside a word: the token across its edge is in the mask
MID_WORD = ("{% for m in messages %}{{ m.role }}:{% if m.role == 'assistant' %} Hel{% generation %}{{ m.content }}"
            "{% endgeneration %}ld{% else %} {{ m.content }}{% endif %}\n{% endfor %}")
# white-space control on the tags, and a {% set %} inside a block stays inside it
TRIMMED = ("{%- for m in messages %}\n[{{ m.role }}] {%- if m.role == 'assistant' %}\n"
           "    {%- generation -%}\n      {{ ' ' + m.content }}{% set leaked = 'LEAK' %}\n    {%- endgeneration -%}\n"
           "  {%- else %} {{ m.content }}{% endif %}\n{%- endfor %}{{ leaked }}")
# a block rendered inside a macro is placed where the macro's output begins (transformers' tracker)
IN_MACRO = ("{% macro turn(m) %}<{{ m.role }}>{% if m.role == 'assistant' %}{% generation %}{{ m.content }}"
            "{% endgeneration %}{% else %}{{ m.content }}{% endif %}</{{ m.role }}>{% endmacro %}"
            "{% for m in messages %}{{ turn(m) }}{% endfor %}")
NESTED = ("{% for m in messages %}{{ m.role }}: {% if m.role == 'assistant' %}{% generation %}<a>{% generation %}"
          "{{ m.content }}{% endgeneration %}</a>{% endgeneration %}{% else %}{{ m.content }}{% endif %}\n"
          "{% endfor %}")


def qwen25_with_generation():
    """llama.cpp's Qwen2.5 template with each assistant turn in a generation block."""
    source = llama_cpp_template_path("Qwen-Qwen2.5-7B-Instruct").read_text(encoding="utf-8")
    head = '{%- if (message.role == "user") or (message.role == "system" and not loop.first) or ' \
           '(message.role == "assistant" and not message.tool_calls) %}'
    assert source.count(head) == 1 and source.count('{%- elif message.role == "assistant" %}') == 1
    source = source.replace(head, head.replace(' or (message.role == "assistant" and not message.tool_calls)', ""))
    source = source.replace('{%- elif message.role == "assistant" %}',
                            '{%- elif message.role == "assistant" %}{% generation %}')
    return source.replace('{%- elif message.role == "tool" %}', '{% endgeneration %}{%- elif message.role == "tool" %}')


TOOL = {"type": "function", "function": {"name": "get_weather", "description": "Weather of a city.",
                                         "parameters": {"type": "object", "required": ["city"], "properties": {
                                             "city": {"type": "string", "description": "The city."}}}}}
CHATS = {
    "plain": ([{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi there"},
               {"role": "assistant", "content": "Hello! How are you?"}, {"role": "user", "content": "Fine, bye"},
               {"role": "assistant", "content": " spaced reply "}], {}),
    "unicode": ([{"role": "user", "content": "Grüße, 你好 👋🏽"},
                 {"role": "assistant", "content": "héllo 你好👋"}], {}),
    "markers": ([{"role": "user", "content": "what is <|eot_id|> or <|im_end|>?"},
                 {"role": "assistant", "content": "a marker: <|eot_id|> <|im_end|>"}], {}),
    "tools": ([{"role": "user", "content": "Weather in Paris?"},
               {"role": "assistant", "content": "", "tool_calls": [{"type": "function", "function": {
                   "name": "get_weather", "arguments": {"city": "Paris"}}}]},
               {"role": "tool", "name": "get_weather", "content": '{"temp_c": 21}'},
               {"role": "assistant", "content": "It is 21 °C."}], {"tools": [TOOL]}),
}
GENERATION_TEMPLATES = {"headers": HEADERS, "mid_word": MID_WORD, "trimmed": TRIMMED, "in_macro": IN_MACRO,
                        "nested": NESTED, "qwen25": None}


def reference(ref, source, messages, **options):
    return ref.apply_chat_template(copy.deepcopy(messages), chat_template=source, **copy.deepcopy(options))


@pytest.mark.parametrize("fixture", ["llama3", "qwen3", "llama2"])
@pytest.mark.parametrize("name", GENERATION_TEMPLATES)
def test_assistant_masks_equal_transformers(fixture, name):
    tok, ref = pair(fixture)
    source = GENERATION_TEMPLATES[name] or qwen25_with_generation()
    compared = 0
    for chat, (messages, kwargs) in CHATS.items():
        for prompt in (False, True):
            options = dict(kwargs, add_generation_prompt=prompt, tokenize=True, return_dict=True,
                           return_assistant_tokens_mask=True)
            expected = dict(reference(ref, source, messages, **options))
            got = tok.apply_chat_template(copy.deepcopy(messages), template=source, content_special="parse",
                                          **copy.deepcopy(options))
            assert list(got) == list(expected), f"{name}/{chat}: keys"
            assert dict(got) == expected, f"{name}/{chat}/prompt={prompt}"
            compared += sum(expected["assistant_masks"])
    assert compared  # the blocks were found


REAL_GENERATION_TEMPLATES = ("LFM2.5-8B-A1B", "poolside-Laguna-S-2.1", "poolside-Laguna-XS-2.1",
                             "poolside-Laguna-XS.2")


@pytest.mark.parametrize("fixture", ["llama3", "qwen3"])
@pytest.mark.parametrize("template", REAL_GENERATION_TEMPLATES)
def test_assistant_masks_of_llama_cpp_templates_with_generation_blocks(fixture, template):
    tok, ref = pair(fixture)
    source = llama_cpp_template_path(template).read_text(encoding="utf-8")
    assert GENERATION_TAG.search(source)
    conversations = [*CHATS.values(), *((m, SHAPE_OPTIONS.get(shape, {})) for shape, m in SHAPES.items())]
    masked = 0
    for messages, kwargs in conversations:
        for prompt in (False, True):
            options = dict(kwargs, add_generation_prompt=prompt, tokenize=True, return_dict=True,
                           return_assistant_tokens_mask=True, **FIXTURE_VARIABLES.get(fixture, {}))
            try:
                expected = dict(reference(ref, source, messages, **options))
            except Exception:  # the template refuses the conversation: so must polytok
                with pytest.raises(polytok.PolytokError):
                    tok.apply_chat_template(copy.deepcopy(messages), template=source, content_special="parse",
                                            **copy.deepcopy(options))
                continue
            got = tok.apply_chat_template(copy.deepcopy(messages), template=source, content_special="parse",
                                          **copy.deepcopy(options))
            assert dict(got) == expected and list(got) == list(expected)
            masked += sum(expected["assistant_masks"])
    assert masked


def test_a_token_across_a_block_edge_is_in_the_mask():
    tok, ref = pair("llama3")
    messages = [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "lo wor"}]
    options = dict(tokenize=True, return_dict=True, return_assistant_tokens_mask=True)
    got = tok.apply_chat_template(messages, template=MID_WORD, content_special="parse", **options)
    assert dict(got) == dict(reference(ref, MID_WORD, messages, **options))
    tokens = [tok.decode([i]) for i in got["input_ids"]]
    masked = [t for t, m in zip(tokens, got["assistant_masks"]) if m]
    assert masked == [" Hello", " world"]  # across both edges


def test_without_generation_blocks_the_mask_is_zero_with_a_warning(caplog):
    tok, ref = pair("llama3")
    source = llama_cpp_template_path("meta-llama-Llama-3.1-8B-Instruct").read_text(encoding="utf-8")
    messages = CHATS["plain"][0]
    options = dict(tokenize=True, return_dict=True, return_assistant_tokens_mask=True)
    with caplog.at_level(logging.WARNING):
        expected = dict(reference(ref, source, messages, **options))
    with pytest.warns(UserWarning, match=r"no \{% generation %\} block"):
        got = tok.apply_chat_template(messages, template=source, content_special="parse", **options)
    assert dict(got) == expected and not any(got["assistant_masks"])


@pytest.mark.parametrize("sanitize", [True, False])
@pytest.mark.parametrize("fixture", ["llama3", "qwen3"])
def test_return_dict_equals_transformers(fixture, sanitize):
    tok, ref = pair(fixture)
    for template in ("meta-llama-Llama-3.1-8B-Instruct", "Qwen-Qwen3-0.6B"):
        source = llama_cpp_template_path(template).read_text(encoding="utf-8")
        for messages, kwargs in CHATS.values():
            expected = dict(reference(ref, source, messages, tokenize=True, return_dict=True,
                                      sanitize_control_tokens=sanitize, **kwargs))
            got = tok.apply_chat_template(copy.deepcopy(messages), template=source, tokenize=True, return_dict=True,
                                          content_special="text" if sanitize else "parse", **copy.deepcopy(kwargs))
            assert list(got) == list(expected) and dict(got) == expected


def test_defaults_are_unchanged():
    tok, _ = pair("llama3")
    messages = CHATS["plain"][0]
    assert isinstance(tok.apply_chat_template(messages, template=HEADERS), str)
    ids = tok.apply_chat_template(messages, template=HEADERS, tokenize=True)
    assert isinstance(ids, list) and ids == tok.apply_chat_template(messages, template=HEADERS, tokenize=True,
                                                                    return_dict=True)["input_ids"]
    assert tok.apply_chat_template(messages, template=HEADERS, return_dict=True) == \
        tok.apply_chat_template(messages, template=HEADERS)  # return_dict needs tokenize, as in transformers


def test_refusals_follow_transformers():
    tok, ref = pair("llama3")
    messages = CHATS["plain"][0]
    for options in (dict(tokenize=False, return_dict=True, return_assistant_tokens_mask=True),
                    dict(tokenize=True, return_dict=False, return_assistant_tokens_mask=True),
                    dict(tokenize=True, return_dict=True, return_assistant_tokens_mask=True,
                         continue_final_message=True)):
        with pytest.raises(ValueError):
            reference(ref, HEADERS, messages, **options)
        with pytest.raises(ChatTemplateError):
            tok.apply_chat_template(messages, template=HEADERS, content_special="parse", **options)
    with pytest.raises(ChatTemplateError, match="return_dict=True"):
        tok.apply_chat_template(messages, template=HEADERS, tokenize=True, return_role_masks=True)


def test_assistant_masks_with_content_as_text():
    """polytok's own: the mask of a chat whose content markers are read as text (transformers refuses)."""
    tok, _ = pair("llama3")
    messages = CHATS["markers"][0]
    got = tok.apply_chat_template(messages, template=HEADERS, tokenize=True, return_dict=True,
                                  return_assistant_tokens_mask=True)
    assert got["input_ids"] == tok.apply_chat_template(messages, template=HEADERS, tokenize=True)
    masked = [i for i, m in zip(got["input_ids"], got["assistant_masks"]) if m]
    assert tok.decode(masked) == "a marker: <|eot_id|> <|im_end|><|eot_id|>"
    eot = tok.token_to_id("<|eot_id|>")
    assert masked.count(eot) == 1  # the template's own; the content's is text


# -- role masks ---------------------------------------------------------------------------------

# starting with digits, which byte-level pre-tokenizers never join to the punctuation before them
SYSTEM, USER1, ASSISTANT1, USER2, ASSISTANT2, TOOL_RESULT, USER3 = (
    f"{10 + i} Zebra{word} quokka{i}"
    for i, word in enumerate(("alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf")))
SHAPES = {
    "user": [{"role": "user", "content": USER1}],
    "system_user_assistant_user": [{"role": "system", "content": SYSTEM}, {"role": "user", "content": USER1},
                                   {"role": "assistant", "content": ASSISTANT1}, {"role": "user", "content": USER2}],
    "ends_with_assistant": [{"role": "user", "content": USER1}, {"role": "assistant", "content": ASSISTANT1},
                            {"role": "user", "content": USER2}, {"role": "assistant", "content": ASSISTANT2}],
    "tool": [{"role": "user", "content": USER1},
             {"role": "assistant", "content": "", "tool_calls": [{"id": "call00001", "type": "function", "function": {
                 "name": "get_weather", "arguments": {"city": "Paris"}}}]},
             {"role": "tool", "tool_call_id": "call00001", "name": "get_weather", "content": TOOL_RESULT},
             {"role": "assistant", "content": ASSISTANT2}, {"role": "user", "content": USER3}],
}
SHAPE_OPTIONS = {"tool": {"tools": [TOOL]}}
# what some templates need for every conversation: variables, or tools (the tool-use templates iterate over them)
VARIABLES = {"fireworks-ai-llama-3-firefunction-v2": {"functions": '[{"name": "get_weather"}]',
                                                      "datetime": "2026-01-02 03:04"},
             "CohereForAI-c4ai-command-r-plus-tool_use": {"tools": [TOOL]},
             "NousResearch-Hermes-2-Pro-Llama-3-8B-tool_use": {"tools": [TOOL]},
             "NousResearch-Hermes-3-Llama-3.1-8B-tool_use": {"tools": [TOOL]}}


def expected_role_masks(ref, rendered, messages):
    """Each role's mask without polytok: its sentinels found in the text, transformers' offsets."""
    encoding = ref(rendered, add_special_tokens=False, return_offsets_mapping=True)
    offsets = encoding["offset_mapping"]
    masks, occurrences = {}, {}
    for message in messages:
        role, content = message["role"], message.get("content")
        mask = masks.setdefault(role, [0] * len(offsets))
        found = occurrences.setdefault(role, [])
        if not content:
            continue
        for match in re.finditer(re.escape(content), rendered):
            found.append((match.start(), match.group()))
            for i, (start, end) in enumerate(offsets):
                if start < match.end() and end > match.start() or start == end and match.start() < start < match.end():
                    mask[i] = 1
    return encoding["input_ids"], masks, {role: [t for _, t in sorted(f)] for role, f in occurrences.items()}


def masked_runs(ids, mask):
    runs, run = [], []
    for i, m in zip(ids, mask):
        if m:
            run.append(i)
        elif run:
            runs.append(run)
            run = []
    return runs + ([run] if run else [])


def check_role_masks(tok, ref, source, messages, name, content_special="parse", **options):
    """Compare with the sentinel-built masks; None when transformers refuses the conversation."""
    try:
        rendered = ref.apply_chat_template(copy.deepcopy(messages), chat_template=source, tokenize=False,
                                           **copy.deepcopy(options))
    except Exception:  # the template refuses this shape (alternation, a missing system …): polytok must too
        with pytest.raises(polytok.PolytokError):
            tok.apply_chat_template(copy.deepcopy(messages), template=source, tokenize=True, return_dict=True,
                                    return_role_masks=True, content_special=content_special,
                                    **copy.deepcopy(options))
        return None
    ids, expected, occurrences = expected_role_masks(ref, rendered, messages)
    got = tok.apply_chat_template(copy.deepcopy(messages), template=source, tokenize=True, return_dict=True,
                                  return_role_masks=True, content_special=content_special, **copy.deepcopy(options))
    assert got["input_ids"] == ids, name
    assert got["role_masks"] == expected, name
    for role, mask in got["role_masks"].items():  # the masked ids are the sentinels, and nothing else
        decoded = " ".join(tok.decode(run) for run in masked_runs(ids, mask))
        assert decoded.split() == " ".join(occurrences[role]).split(), f"{name}: {role}"
    return got


@pytest.fixture(scope="module")
def all_templates():
    return sorted(p.stem for p in llama_cpp_templates_dir().glob("*.jinja"))


def test_the_sdist_has_70_templates(all_templates):
    assert len(all_templates) == 70  # (71 files under models/templates/: the 70 templates and a README.md)


@pytest.mark.parametrize(("fixture", "content_special"), [("llama3", "parse"), ("qwen3", "parse"), ("llama3", "text")])
def test_role_masks_of_every_llama_cpp_template(fixture, content_special, all_templates):
    """(The sentinels hold no marker, so reading content as text gives transformers' plain ids.)"""
    tok, ref = pair(fixture)
    refused: dict[str, list[str]] = {}
    checked = 0
    for template in all_templates:
        source = llama_cpp_template_path(template).read_text(encoding="utf-8")
        checked_here = 0
        for shape, messages in SHAPES.items():
            for prompt in (False, True):
                options = {**SHAPE_OPTIONS.get(shape, {}), **VARIABLES.get(template, {}),
                           **FIXTURE_VARIABLES.get(fixture, {}), "add_generation_prompt": prompt}
                got = check_role_masks(tok, ref, source, messages, f"{template}/{shape}/{prompt}", content_special,
                                       **options)
                if got is None and shape not in refused.get(template, []):
                    refused.setdefault(template, []).append(shape)
                elif got is not None:
                    checked_here += 1
                    checked += any(got["role_masks"].get("assistant", []))
        assert checked_here, f"{template}: no conversation shape renders"
    assert checked > len(all_templates)  # assistant contents were masked, template after template
    assert refused == REFUSED

# qwen3 has no BOS token; the templates that write one get its end-of-text token
FIXTURE_VARIABLES = {"qwen3": {"bos_token": "<|endoftext|>"}}

# the shapes some templates refuse, and why (transformers refuses them too: checked above)
REFUSED = {
    "Kimi-K2-Instruct": ["tool"],  # the template calls list.append on tool calls, which the sandbox forbids
    "Kimi-K2-Thinking": ["tool"],  # (the same)
    "google-gemma-2-2b-it": ["system_user_assistant_user", "tool"],  # no system role; roles must alternate
    "llama-cpp-deepseek-r1": ["tool"],  # the template passes a generator to tojson
    "meetkai-functionary-medium-v3.2": ["tool"],  # the template wants tool-call arguments as a string
}


# -- role masks: the rules ----------------------------------------------------------------------

PLAIN = "{% for m in messages %}<{{ m.role }}>{{ m.content }}</{{ m.role }}>\n{% endfor %}"
STRIPPED = "{% for m in messages %}{% if m.content %}{{ m.role }}: {{ m.content | trim }}\n{% endif %}{% endfor %}"
THINKING = ("{% for m in messages %}{{ m.role }}:\n{% if m.role == 'assistant' %}{{ m.content.split('</think>')[-1]"
            ".lstrip('\\n') }}{% else %}{{ m.content }}{% endif %}{{ '\\n' }}{% endfor %}")


def role_texts(tok, got):
    return {role: [tok.decode(run) for run in masked_runs(got["input_ids"], mask)]
            for role, mask in got["role_masks"].items()}


def test_role_masks_follow_the_overlap_rule():
    """A token made of template text and content is in the content's role."""
    tok, ref = pair("llama3")
    messages = [{"role": "user", "content": "Hello world"}, {"role": "assistant", "content": "Fine thanks"}]
    source = "{% for m in messages %}{{ m.role }}: {{ m.content }}!\n{% endfor %}"
    got = check_role_masks(tok, ref, source, messages, "colon")
    assert role_texts(tok, got) == {"user": [" Hello world"], "assistant": [" Fine thanks"]}


def test_role_masks_with_stripping_templates():
    tok, ref = pair("llama3")
    messages = [{"role": "system", "content": ""}, {"role": "user", "content": "  padded words \n"},
                {"role": "assistant", "content": "\nreply here"}]
    got = tok.apply_chat_template(messages, template=STRIPPED, tokenize=True, return_dict=True, return_role_masks=True)
    assert tok.decode(got["input_ids"]) == ref.apply_chat_template(messages, chat_template=STRIPPED, tokenize=False)
    assert role_texts(tok, got) == {"system": [], "user": [" padded words"], "assistant": [" reply here"]}


def test_role_masks_when_the_template_cuts_the_content():
    """Only the end mark survives ``split('</think>')[-1]``: the span is the content's tail the text repeats."""
    tok, _ = pair("llama3")
    messages = [{"role": "user", "content": "Question"},
                {"role": "assistant", "content": "<think>\nhmm\n</think>The answer"}]
    got = tok.apply_chat_template(messages, template=THINKING, tokenize=True, return_dict=True, return_role_masks=True)
    assert tok.decode(got["input_ids"]) == "user:\nQuestion\nassistant:\nThe answer\n"
    assert role_texts(tok, got) == {"user": ["Question"], "assistant": ["The answer"]}
    # where the template's text before the tail equals the content's before the cut, the span takes it in
    messages[1]["content"] = "<think>\nhmm\n</think>\n\nThe answer"
    got = tok.apply_chat_template(messages, template=THINKING, tokenize=True, return_dict=True, return_role_masks=True)
    assert role_texts(tok, got) == {"user": ["Question"], "assistant": [":\nThe answer"]}  # the "\n" is the template's


def test_role_masks_of_content_parts_and_reasoning():
    tok, _ = pair("llama3")
    source = ("{% for m in messages %}[{{ m.role }}]{% if m.reasoning_content %}<r>\n{{ m.reasoning_content }}</r>"
              "{% endif %}{% if m.content is string %}{{ m.content }}{% else %}{% for p in m.content %}"
              "{{ p.text }}|{% endfor %}{% endif %}\n{% endfor %}")
    messages = [{"role": "user", "content": [{"type": "text", "text": "part one"}, {"type": "text", "text": "two"}]},
                {"role": "assistant", "content": "done", "thinking": "mull it"}]
    got = tok.apply_chat_template(messages, template=source, tokenize=True, return_dict=True, return_role_masks=True)
    assert role_texts(tok, got) == {"user": ["part one", "two"], "assistant": ["mull it", "done"]}


def test_role_masks_with_markers_read_as_text():
    tok, _ = pair("llama3")
    source = llama_cpp_template_path("meta-llama-Llama-3.1-8B-Instruct").read_text(encoding="utf-8")
    messages = CHATS["markers"][0]
    got = tok.apply_chat_template(messages, template=source, tokenize=True, return_dict=True, return_role_masks=True)
    assert got["input_ids"] == tok.apply_chat_template(messages, template=source, tokenize=True)
    assert role_texts(tok, got) == {"user": [messages[0]["content"]], "assistant": [messages[1]["content"]]}


def test_role_masks_ignore_private_use_characters_of_the_input():
    tok, _ = pair("llama3")
    messages = [{"role": "user", "content": "odd \U00100000\U00100001 chars"},
                {"role": "assistant", "content": "\U00100002"}]
    got = tok.apply_chat_template(messages, template=PLAIN, tokenize=True, return_dict=True, return_role_masks=True,
                                  content_special="parse")
    assert role_texts(tok, got) == {"user": [messages[0]["content"]], "assistant": [messages[1]["content"]]}


def test_role_masks_refuse_a_template_that_reads_marked_text_differently():
    tok, _ = pair("llama3")
    source = "{% for m in messages %}{{ m.content[:3] }}{% endfor %}"
    with pytest.raises(ChatTemplateError, match="return_role_masks"):
        tok.apply_chat_template([{"role": "user", "content": "abcdef"}], template=source, tokenize=True,
                                return_dict=True, return_role_masks=True)


def test_role_masks_with_assistant_masks_and_no_warning_when_blocks_exist():
    tok, ref = pair("qwen3")
    source = qwen25_with_generation()
    messages = CHATS["plain"][0]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = tok.apply_chat_template(messages, template=source, tokenize=True, return_dict=True,
                                      content_special="parse", return_assistant_tokens_mask=True,
                                      return_role_masks=True)
    expected = reference(ref, source, messages, tokenize=True, return_dict=True, return_assistant_tokens_mask=True)
    assert got["assistant_masks"] == expected["assistant_masks"]
    # the content is inside the generated span
    assert all(a >= r for a, r in zip(got["assistant_masks"], got["role_masks"]["assistant"]))


def test_a_token_across_two_messages_is_in_both_roles():
    tok, ref = pair("llama3")
    source = "{% for m in messages %}{{ m.content }}{% endfor %}"
    messages = [{"role": "user", "content": "Hel"}, {"role": "assistant", "content": "lo"}]
    got = tok.apply_chat_template(messages, template=source, tokenize=True, return_dict=True, return_role_masks=True)
    ids, expected, _ = expected_role_masks(ref, "Hello", messages)
    assert got["input_ids"] == ids == [tok.token_to_id("Hello")] and got["role_masks"] == expected
    assert got["role_masks"] == {"user": [1], "assistant": [1]}


def test_role_masks_of_a_continued_final_message():
    tok, ref = pair("llama3")
    source = llama_cpp_template_path("meta-llama-Llama-3.1-8B-Instruct").read_text(encoding="utf-8")
    messages = [{"role": "user", "content": "Count to three"}, {"role": "assistant", "content": "One, two,"}]
    got = tok.apply_chat_template(messages, template=source, tokenize=True, return_dict=True, return_role_masks=True,
                                  continue_final_message=True, content_special="parse")
    assert got["input_ids"] == reference(ref, source, messages, tokenize=True, return_dict=False,
                                         continue_final_message=True)
    assert role_texts(tok, got) == {"user": ["Count to three"], "assistant": ["One, two,"]}


@pytest.mark.parametrize("source", [("gguf", "llama-bpe"), ("gguf", "llama-spm"), ("fixture", "llama3-tiktoken"),
                                    ("fixture", "spm-mistral-v3")], ids=lambda s: s[1])
def test_role_masks_of_other_formats(source):
    """No reference engine has masks here: the masked ids must decode to the sentinels, with the same ids as
    without masks, content read as text or parsed, on templates of llama.cpp's models/templates/."""
    kind, name = source
    tok = polytok.load(gguf_vocab_path(name) if kind == "gguf" else fixture_path(name, "tokenizer.model"))
    for template in ("meta-llama-Llama-3.1-8B-Instruct", "Qwen-Qwen3-0.6B", "mistralai-Mistral-Nemo-Instruct-2407"):
        source_text = llama_cpp_template_path(template).read_text(encoding="utf-8")
        for content_special in ("text", "parse"):
            messages = SHAPES["ends_with_assistant"]
            options = dict(template=source_text, tokenize=True, content_special=content_special, bos_token="<s>",
                           eos_token="</s>")
            got = tok.apply_chat_template(messages, return_dict=True, return_role_masks=True, **options)
            assert got["input_ids"] == tok.apply_chat_template(messages, **options)
            for role, texts in role_texts(tok, got).items():
                assert " ".join(texts).split() == " ".join(m["content"] for m in messages if m["role"] == role).split()


def test_assistant_masks_with_trimmed_offsets(tmp_path):
    """A ByteLevel post-processor with ``trim_offsets`` moves the offsets off the spaces: the masks follow."""
    import json
    import shutil

    folder = fixture_path("llama3", "tokenizer.json").parent
    fixture_path("llama3", "tokenizer_config.json")
    data = json.loads((folder / "tokenizer.json").read_text(encoding="utf-8"))
    data["post_processor"] = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True}
    (tmp_path / "tokenizer.json").write_text(json.dumps(data), encoding="utf-8")
    shutil.copy(folder / "tokenizer_config.json", tmp_path / "tokenizer_config.json")
    tok, ref = polytok.load(tmp_path), transformers.AutoTokenizer.from_pretrained(str(tmp_path))
    messages = [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": " lo wor "}]
    trimmed = 0
    for source in (MID_WORD, HEADERS, TRIMMED):
        options = dict(tokenize=True, return_dict=True, return_assistant_tokens_mask=True)
        expected = dict(reference(ref, source, messages, **options))
        assert dict(tok.apply_chat_template(messages, template=source, content_special="parse", **options)) == expected
        untrimmed = pair("llama3")[0].apply_chat_template(messages, template=source, content_special="parse", **options)
        trimmed += untrimmed["assistant_masks"] != expected["assistant_masks"]
    assert trimmed  # the trimming changed a mask


@pytest.mark.parametrize("fixture", ["llama3", "qwen3", "gpt4o", "llama2", "gemma3"])
def test_offsets_from_bytes_are_the_aligned_offsets(fixture):
    """`token_offsets.byte_offsets` (where it answers) equals `encode_full`'s offsets (the aligned stages)."""
    from polytok.chat.token_offsets import byte_offsets

    fixture_path(fixture, "tokenizer_config.json")
    tok = polytok.load(fixture_path(fixture, "tokenizer.json").parent)
    source = llama_cpp_template_path("Qwen-Qwen3-0.6B").read_text(encoding="utf-8")
    answered = 0
    for messages, kwargs in CHATS.values():
        text = tok.apply_chat_template(messages, template=source, **kwargs)
        for piece in (text, text[5:], " " + text, "Grüße 👋🏽 e\u0301 \r\n\t x"):
            full = tok.encode_full(piece, add_special=False, special="parse", truncation=False, padding=False)
            found = byte_offsets(tok, piece, list(full.ids))
            if found is not None:
                answered += 1
                assert found == list(full.offsets), piece[:60]
    assert answered or fixture in ("llama2", "gemma3")  # (their prefix space and "▁" make it decline)


def test_role_masks_of_a_template_that_refuses_marked_text():
    tok, _ = pair("llama3")
    source = "{% for m in messages %}{% if m.content[-1] != '.' %}{{ raise_exception('end with a dot') }}{% endif %}" \
             "{{ m.content }}{% endfor %}"
    messages = [{"role": "user", "content": "Hi."}]
    assert tok.apply_chat_template(messages, template=source) == "Hi."
    with pytest.raises(ChatTemplateError, match=r"return_role_masks.*it raised: .*end with a dot"):
        tok.apply_chat_template(messages, template=source, tokenize=True, return_dict=True, return_role_masks=True)


def test_an_empty_content_keeps_the_other_texts_whole():
    """An empty text is not marked, so ``if content`` reads it as before and the others keep their white space."""
    tok, ref = pair("llama3")
    source = "{% for m in messages %}{% if m.content %}[{{ m.role }}]{{ m.content }}{% endif %}{% endfor %}"
    messages = [{"role": "user", "content": "  word"}, {"role": "assistant", "content": ""}]
    got = tok.apply_chat_template(messages, template=source, tokenize=True, return_dict=True, return_role_masks=True)
    ids, expected, _ = expected_role_masks(ref, "[user]  word", messages)
    assert got["input_ids"] == ids and got["role_masks"] == expected
    assert role_texts(tok, got) == {"user": ["  word"], "assistant": []}  # (" ", " word": both the user's)
