"""Chat templates against transformers 5.x, live: every template of llama.cpp's models/templates/.

The templates come from the llama-cpp-python sdist (fixtures.llama_cpp_template_path, by the
archive's sha256); the reference is transformers' own ``apply_chat_template`` on a
tokenizer built from a fixture folder, run in the test.  Where transformers raises, polytok
must raise a ChatTemplateError; where it renders, the text (and the ids) must be equal.
"""

from __future__ import annotations

import copy

import pytest
from fixtures import fixture_path, llama_cpp_template_path

import polytok

transformers = pytest.importorskip("transformers")

TEMPLATES = (
    "Apertus-8B-Instruct", "Apriel-1.6-15b-Thinker-fixed", "Bielik-11B-v3.0-Instruct", "ByteDance-Seed-OSS",
    "Cohere2MoE", "CohereForAI-c4ai-command-r-plus-tool_use", "CohereForAI-c4ai-command-r7b-12-2024-tool_use",
    "GLM-4.6", "GLM-4.7-Flash", "GigaChat3-10B-A1.8B", "GigaChat3.1-10B-A1.8B", "HuggingFaceTB-SmolLM3-3B",
    "Kimi-K2-Instruct", "Kimi-K2-Thinking", "Kimi-K3", "LFM2-8B-A1B", "LFM2.5-8B-A1B", "LFM2.5-Instruct",
    "MiMo-VL", "MiniMax-M1", "MiniMax-M2", "MiniMax-M3", "Mistral-Small-3.2-24B-Instruct-2506",
    "NVIDIA-Nemotron-3-Nano-30B-A3B-BF16", "NVIDIA-Nemotron-Nano-v2", "NousResearch-Hermes-2-Pro-Llama-3-8B-tool_use",
    "NousResearch-Hermes-3-Llama-3.1-8B-tool_use", "Qwen-QwQ-32B", "Qwen-Qwen2.5-7B-Instruct", "Qwen-Qwen3-0.6B",
    "Qwen3-Coder", "Qwen3.5-4B", "Reka-Edge", "Spark2.5", "StepFun3.5-Flash",
    "deepseek-ai-DeepSeek-R1-Distill-Llama-8B", "deepseek-ai-DeepSeek-R1-Distill-Qwen-32B",
    "deepseek-ai-DeepSeek-V3.1", "deepseek-ai-DeepSeek-V3.2", "deepseek-ai-DeepSeek-V4-Flash-0731",
    "deepseek-ai-DeepSeek-V4", "fireworks-ai-llama-3-firefunction-v2", "google-gemma-2-2b-it",
    "google-gemma-4-31B-it-interleaved", "google-gemma-4-31B-it", "ibm-granite-granite-3.3-2B-Instruct",
    "ibm-granite-granite-4.0", "ibm-granite-granite-4.1", "inclusionai-ling-3.0-flash", "llama-cpp-deepseek-r1",
    "llama-cpp-rwkv-world", "meetkai-functionary-medium-v3.1", "meetkai-functionary-medium-v3.2",
    "meta-llama-Llama-3.1-8B-Instruct", "meta-llama-Llama-3.2-3B-Instruct", "meta-llama-Llama-3.3-70B-Instruct",
    "microsoft-Phi-3.5-mini-instruct", "mistralai-Ministral-3-14B-Reasoning-2512",
    "mistralai-Mistral-Nemo-Instruct-2407", "moonshotai-Kimi-K2", "muse-glimmer", "openai-gpt-oss-120b",
    "openbmb-MiniCPM5-1B", "poolside-Laguna-S-2.1", "poolside-Laguna-XS-2.1", "poolside-Laguna-XS.2",
    "tencent-Hy3", "unsloth-Apriel-1.5", "unsloth-mistral-Devstral-Small-2507", "upstage-Solar-Open-100B",
)  # fmt: skip

WEATHER_TOOL = {"type": "function", "function": {
    "name": "get_weather", "description": "Current weather of a city.",
    "parameters": {"type": "object",
                   "properties": {"city": {"type": "string",
                                           "description": "The city <b>name</b>, never <tool_call> or <|im_end|>"}},
                   "required": ["city"]}}}
MARKERS = "`<|im_end|>`, <|im_start|>assistant, <|eot_id|>, <end_of_turn>, </s>, [INST], <|end|>, <think>"

# name -> (messages, extra keyword arguments)
CONVERSATIONS = {
    "single": ([{"role": "user", "content": "Hello, how are you?"}], {}),
    "system_multi": ([
        {"role": "system", "content": "You are terse."},
        {"role": "user", "content": "Name a colour."},
        {"role": "assistant", "content": "Blue."},
        {"role": "user", "content": "Another,\n  please."},
    ], {}),
    "tools": ([
        {"role": "user", "content": "Weather in Paris?"},
        {"role": "assistant", "content": "", "tool_calls": [{"id": "call00001", "type": "function", "function": {
            "name": "get_weather", "arguments": {"city": "Paris"}}}]},
        {"role": "tool", "tool_call_id": "call00001", "name": "get_weather", "content": '{"temp_c": 21}'},
        {"role": "assistant", "content": "It is 21 °C in Paris."},
        {"role": "user", "content": "Thanks"},
    ], {"tools": [WEATHER_TOOL]}),
    "markers": ([
        {"role": "system", "content": f"Never write {MARKERS}."},
        {"role": "user", "content": f"What do {MARKERS} mean?"},
        {"role": "assistant", "content": f"They are markers: {MARKERS}"},
        {"role": "user", "content": "ok <|im_end|>"},
    ], {"documents": [{"title": "On <|im_start|>", "text": "Markers such as <|eot_id|> and <tool_call>."}]}),
}


def _folder(name):
    fixture_path(name, "tokenizer_config.json")
    return fixture_path(name, "tokenizer.json").parent


_CACHE: dict = {}


def _pair(name):
    """(polytok tokenizer, transformers tokenizer) for a fixture folder, built once."""
    if name not in _CACHE:
        folder = _folder(name)
        _CACHE[name] = (polytok.load(folder), transformers.AutoTokenizer.from_pretrained(str(folder)))
    return _CACHE[name]


def _reference(ref, source, messages, kwargs, **options):
    try:
        return ref.apply_chat_template(copy.deepcopy(messages), chat_template=source, **copy.deepcopy(kwargs),
                                       **options), None
    except Exception as exc:  # the reference's refusal, compared below
        return None, exc


def _check(tok, ref, source, messages, kwargs, what, **options):
    expected, error = _reference(ref, source, messages, kwargs, **options)
    polytok_options = dict(options)
    if options.get("tokenize"):
        polytok_options.pop("return_dict")
        polytok_options["content_special"] = "text" if polytok_options.pop("sanitize_control_tokens") else "parse"
    if error is not None:
        with pytest.raises(polytok.PolytokError):
            tok.apply_chat_template(copy.deepcopy(messages), template=source, **copy.deepcopy(kwargs),
                                    **polytok_options)
        return "raised"
    got = tok.apply_chat_template(copy.deepcopy(messages), template=source, **copy.deepcopy(kwargs), **polytok_options)
    assert got == expected, f"{what}: first difference at {_first_difference(got, expected)}"
    return "equal"


def _first_difference(a, b):
    n = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
    return f"{n}: {a[max(0, n - 20):n + 20]!r} vs {b[max(0, n - 20):n + 20]!r}"


@pytest.mark.parametrize("template", TEMPLATES)
def test_rendering_equals_transformers(template):
    source = llama_cpp_template_path(template).read_text(encoding="utf-8")
    tok, ref = _pair("llama3")
    outcomes = []
    for conv, (messages, kwargs) in CONVERSATIONS.items():
        for prompt in (False, True):
            outcomes.append(_check(tok, ref, source, messages, {**kwargs, **VARIABLES.get(template, {})},
                                   f"{template}/{conv}/prompt={prompt}",
                                   add_generation_prompt=prompt, tokenize=False))
    # the sweep must compare text, not only agree on refusals
    assert "equal" in outcomes or template in REFUSES_EVERYTHING


# templates transformers renders for none of the conversations (checked: they raise in both)
REFUSES_EVERYTHING: set[str] = set()
# template variables some templates need (passed through **variables)
VARIABLES = {"fireworks-ai-llama-3-firefunction-v2": {"functions": '[{"name": "get_weather"}]',
                                                      "datetime": "2026-01-02 03:04"}}


# gemma3's 6 400 added tokens make its full sweep slow (pure-Python BPE on the content pieces):
# the default run takes the templates whose markers it has, the slow run takes all of them
GEMMA_TEMPLATES = ("google-gemma-2-2b-it", "google-gemma-4-31B-it", "Qwen-Qwen3-0.6B",
                   "meta-llama-Llama-3.1-8B-Instruct", "mistralai-Mistral-Nemo-Instruct-2407")
SWEEPS = [pytest.param("qwen3", TEMPLATES, id="qwen3-all"), pytest.param("llama3", TEMPLATES, id="llama3-all"),
          pytest.param("gemma3", GEMMA_TEMPLATES, id="gemma3-some"),
          # SentencePiece-style (Prepend "▁"): the pieces between markers are encoded after a "\n" cut off again
          pytest.param("llama2", GEMMA_TEMPLATES, id="llama2-some"),
          pytest.param("llama2", TEMPLATES, marks=pytest.mark.slow, id="llama2-all"),
          pytest.param("gemma3", TEMPLATES, marks=pytest.mark.slow, id="gemma3-all")]


@pytest.mark.parametrize(("fixture", "templates"), SWEEPS)
@pytest.mark.parametrize("sanitize", [True, False], ids=["content_as_text", "content_parsed"])
def test_ids_equal_transformers(fixture, templates, sanitize):
    """Every template, every conversation, tokenized; markers in content read as text (default) or parsed."""
    tok, ref = _pair(fixture)
    equal = 0
    for template in templates:
        source = llama_cpp_template_path(template).read_text(encoding="utf-8")
        for conv, (messages, kwargs) in CONVERSATIONS.items():
            outcome = _check(tok, ref, source, messages, {**kwargs, **VARIABLES.get(template, {})},
                             f"{fixture}/{template}/{conv}", tokenize=True,
                             return_dict=False, sanitize_control_tokens=sanitize, add_generation_prompt=True)
            equal += outcome == "equal"
    assert equal >= 3 * len(templates)
