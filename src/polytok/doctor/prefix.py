"""``template-not-prefix-preserving`` (and ``template-failed``): a chat template whose
rendering of a conversation's first k messages is not the start of its rendering of k+1.

Incremental chat (a server keeping the KV cache of the turns so far) and multi-turn
training both assume that each rendering extends the last. The built-in conversation
(`polytok.doctor.conversation`) is rendered one message more at a time, as transformers
5.24 ``apply_chat_template`` renders it (`polytok.chat`), in two ways:

- ``history``: messages[:k] ending with a reply is a prefix of messages[:k+1], both
  without the generation prompt (a template that drops or rewrites earlier turns, e.g. reasoning removed from
  replies once a new user turn follows, or that always ends with an EOS or an assistant
  header, breaks it);
- ``generation``: messages[:k] ending with a user turn, rendered with
  ``add_generation_prompt=True``, is a prefix of messages[:k+1] (the prompt the model
  was given is where its reply is written). A user turn rendered without the prompt is
  a state no caller keeps, so it is not checked.

Each is checked as text and then as ids (``apply_chat_template(tokenize=True)``): a text
prefix can still tokenize differently where the next turn starts. The first break is
reported with the message number (1-based) whose rendering broke it.
"""

from __future__ import annotations

from typing import Any

from ..errors import PolytokError
from ..tokenizer import Tokenizer
from .conversation import CONVERSATION
from .finding import Finding

__all__ = ["template_prefix"]

_SNIPPET = 60


def _render(tok: Tokenizer, k: int, generation: bool, tokenize: bool) -> Any:
    return tok.apply_chat_template(list(CONVERSATION[:k]), add_generation_prompt=generation, tokenize=tokenize)


def _break(tok: Tokenizer) -> dict[str, Any] | None:
    """The first break, as text then as ids, over both ways (None: none)."""
    for tokenize in (False, True):
        for k in range(1, len(CONVERSATION)):
            generation = CONVERSATION[k - 1]["role"] == "user"
            before, after = _render(tok, k, generation, tokenize), _render(tok, k + 1, False, tokenize)
            if after[:len(before)] != before:
                at = next((i for i, (x, y) in enumerate(zip(before, after)) if x != y), min(len(before), len(after)))
                return {"way": "generation" if generation else "history", "as": "ids" if tokenize else "text",
                        "message": k + 1, "role": CONVERSATION[k]["role"], "at": at,
                        "before": before[max(0, at - 10):at + _SNIPPET], "after": after[max(0, at - 10):at + _SNIPPET]}
    return None


def template_prefix(tok: Tokenizer, files: tuple[str, ...]) -> list[Finding]:
    """The finding for `tok`'s default chat template, if one rendering does not extend the last."""
    if not tok.facts.chat.templates:
        return []
    try:
        found = _break(tok)
    except PolytokError as exc:
        message = f"the chat template fails on a plain user/assistant conversation: {exc}"
        return [Finding("template-failed", "error", message, files, {"error": str(exc)})]
    if found is None:
        return []
    k, place = found["message"], "id" if found["as"] == "ids" else "character"
    prompt = " with the generation prompt" if found["way"] == "generation" else ""
    message = (f"the chat template is not prefix-preserving as {found['as']}: messages[:{k - 1}]{prompt} is not "
               f"the start of messages[:{k}] (message {k}, {found['role']}); at {place} {found['at']} "
               f"{found['before']!r} becomes {found['after']!r}")
    return [Finding("template-not-prefix-preserving", "warning", message, files, found)]
