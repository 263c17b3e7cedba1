"""`polytok serve`'s chat view (``POST /api/chat``) and the short names the page shows.

The ids of a conversation are transformers' ``apply_chat_template`` run live on the
same folder (llama3's tokenizer.json and tokenizer_config.json); each token's text
span and role are checked against HF tokenizers' decoding of the same ids and the
messages' own text.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import fixtures
import pytest

from formats.serve_support import Client, hf_file, start_server
from polytok.serve.models import short_names

transformers = pytest.importorskip("transformers")

MESSAGES = [{"role": "system", "content": "Answer in one line."},
            {"role": "user", "content": "What is a token? caf\u00e9 \U0001f999"},
            {"role": "assistant", "content": "A piece of text read as one unit."}]


@pytest.fixture(scope="module")
def client() -> Iterator[Client]:
    server = start_server([str(fixtures.cache_root())])
    yield Client(server)
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def folder() -> str:
    return str(fixtures.fixture_path("llama3", "tokenizer.json").parent)


def _chat(client: Client, **body: Any) -> Any:
    status, view = client.post("/api/chat", {"model": "llama3", **body})
    assert status == 200, view
    return view


@pytest.mark.parametrize("prompt", [False, True])
def test_chat_ids_match_transformers(client: Client, folder: str, prompt: bool) -> None:
    ref = transformers.AutoTokenizer.from_pretrained(folder)
    expected = list(ref.apply_chat_template(MESSAGES, tokenize=True, return_dict=True,
                                            add_generation_prompt=prompt)["input_ids"])
    view = _chat(client, messages=MESSAGES, add_generation_prompt=prompt)
    assert view["ids"] == expected and view["count"] == len(expected)
    assert view["text"] == ref.apply_chat_template(MESSAGES, tokenize=False, add_generation_prompt=prompt)


def test_chat_spans_and_roles(client: Client, folder: str) -> None:
    hf = hf_file(fixtures.fixture_path("llama3", "tokenizer.json"))
    view = _chat(client, messages=MESSAGES)
    text, ids = view["text"], view["ids"]
    assert view["aligned"]
    for k, (s, e) in enumerate(view["offsets"]):  # each whole-character token's span is what HF decodes it to
        if e > s and not view["flags"][k] & 4:
            assert text[s:e] == hf.decode([ids[k]], skip_special_tokens=False), k
    for m in MESSAGES:  # a role's tokens are its message's text, the template's in no role
        mask = view["role_masks"][m["role"]]
        assert hf.decode([i for i, on in zip(ids, mask) if on]) == m["content"]
    template = [i for k, i in enumerate(ids) if not any(mask[k] for mask in view["role_masks"].values())]
    assert "<|start_header_id|>" in hf.decode(template, skip_special_tokens=False)


def test_chat_marker_in_content_read_as_text_keeps_spans(client: Client) -> None:
    hf = hf_file(fixtures.fixture_path("llama3", "tokenizer.json"))
    messages = [{"role": "user", "content": "say <|eot_id|> now"}]
    as_text = _chat(client, messages=messages)
    parsed = _chat(client, messages=messages, content_special="parse")
    eot = hf.token_to_id("<|eot_id|>")
    assert as_text["ids"].count(eot) == parsed["ids"].count(eot) - 1  # the typed marker is text, not the token
    assert as_text["aligned"]
    joined = "".join(as_text["text"][s:e] for s, e in as_text["offsets"])
    assert joined == as_text["text"] == parsed["text"]
    assert hf.decode([i for i, on in zip(as_text["ids"], as_text["role_masks"]["user"]) if on]) == "say <|eot_id|> now"


@pytest.mark.parametrize("body, status, says", [
    ({"messages": []}, 400, "non-empty list"),
    ({"messages": [{"role": "user"}]}, 400, "messages[0]"),
    ({"messages": [{"role": "user", "content": 3}]}, 400, "messages[0]"),
    ({"messages": MESSAGES, "add_generation_prompt": "yes"}, 400, "add_generation_prompt"),
    ({"messages": MESSAGES, "content_special": "maybe"}, 400, "content_special"),
    ({"messages": MESSAGES, "model": "gpt2"}, 400, "no chat template"),
])
def test_chat_bad_requests(client: Client, body: dict[str, Any], status: int, says: str) -> None:
    got, obj = client.post("/api/chat", {"model": "llama3", **body})
    assert got == status and says in obj["error"], obj


def test_short_names() -> None:
    names = ["gpt2", "/m/llama3", "/m/Llama-3.gguf", "/a/llama3/tokenizer.json", "/b/qwen/tokenizer.model"]
    assert short_names(names) == ["gpt2", "llama3", "Llama-3.gguf", "llama3/tokenizer.json", "qwen/tokenizer.model"]
    # two that collide take parent folders until they differ; the others keep theirs
    assert short_names(["/x/a/llama3", "/y/b/llama3", "/z/a/tokenizer.json", "/w/a/tokenizer.json", "/m/gpt"]) \
        == ["a/llama3", "b/llama3", "z/a/tokenizer.json", "w/a/tokenizer.json", "gpt"]


def test_models_listing_has_labels(client: Client) -> None:
    status, obj, _ = client.request("GET", "/api/models")
    assert status == 200
    labels = {m["name"]: m["label"] for m in obj["models"]}
    assert labels["gpt2"] == "gpt2" and labels["llama3/tokenizer.json"] == "llama3/tokenizer.json"
