"""The JSON endpoints of `polytok serve`: request checks, then `views`.

Each handler takes the decoded JSON object and returns a JSON-ready dict, or
raises `ApiError` with the HTTP status. Limits per request: the text is at most
`MAX_TEXT` characters (413 beyond); the stage search of a comparison
(`polytok.parity.stages`) runs only on texts up to `MAX_STAGE_TEXT` characters.
"""

from __future__ import annotations

import time
from dataclasses import asdict
from typing import Any

from ..errors import PolytokError
from ..parity.compare import compare
from ..parity.engines import PolytokSide
from ..special import SpecialTokens
from ..tokenizer import Tokenizer
from .models import ApiError, Entry, Registry
from .views import chat_view, diff_regions, explain_view, token_view

__all__ = ["MAX_TEXT", "MAX_STAGE_TEXT", "encode", "compare_view", "explain", "load_model", "chat",
           "MAX_MESSAGES"]

MAX_TEXT = 262_144
MAX_STAGE_TEXT = 20_000
MAX_MESSAGES = 200
_MODES = {None: None, "parse": "parse", "text": "text"}


def _text(body: dict[str, Any]) -> str:
    text = body.get("text")
    if not isinstance(text, str):
        raise ApiError(400, "'text' must be a string")
    if len(text) > MAX_TEXT:
        raise ApiError(413, f"the text has {len(text):,} characters; this server takes at most {MAX_TEXT:,}")
    return text


def _special(obj: dict[str, Any], key: str = "special") -> str | None:
    value = obj.get(key)
    if value not in _MODES:
        raise ApiError(400, f"'{key}' must be \"parse\", \"text\" or null (the format's default), not {value!r:.40}")
    return _MODES[value]


def _add_special(body: dict[str, Any]) -> bool:
    value = body.get("add_special", True)
    if not isinstance(value, bool):
        raise ApiError(400, "'add_special' must be true or false")
    return value


def _run(what: str, fn: Any, *args: Any, **kwargs: Any) -> Any:
    """Call the library; a polytok error about the input becomes a 400 naming it."""
    try:
        return fn(*args, **kwargs)
    except PolytokError as exc:
        raise ApiError(400, f"{what}: {exc}") from None


def _side_view(entry: Entry, text: str, special: str | None, add_special: bool) -> dict[str, Any]:
    tok = entry.tokenizer
    view: dict[str, Any] = _run(entry.name, token_view, tok, text, special=special, add_special=add_special)
    mode = SpecialTokens(tok.default_special if special is None else special).value
    view.update(model=entry.describe(), special=mode)
    return view


def load_model(registry: Registry, body: dict[str, Any]) -> dict[str, Any]:
    """``POST /api/load {"path"}``: read a tokenizer under a root; returns its description."""
    return {"model": registry.get(body.get("path")).describe(), "models": registry.listing()}


def encode(registry: Registry, body: dict[str, Any]) -> dict[str, Any]:
    """``POST /api/encode {"model", "text", "special"?, "add_special"?}``."""
    text = _text(body)
    entry = registry.get(body.get("model"))
    started = time.perf_counter()
    view = _side_view(entry, text, _special(body), _add_special(body))
    view["elapsed_ms"] = round((time.perf_counter() - started) * 1000, 1)
    return view


def explain(registry: Registry, body: dict[str, Any]) -> dict[str, Any]:
    """``POST /api/explain {"model", "text", "special"?, "add_special"?}``: `polytok.parity.explain` as JSON."""
    text = _text(body)
    entry = registry.get(body.get("model"))
    out: dict[str, Any] = _run(entry.name, explain_view, entry.tokenizer, text, special=_special(body),
                               add_special=_add_special(body))
    out["model"] = entry.describe()
    return out


def _messages(body: dict[str, Any]) -> list[dict[str, str]]:
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise ApiError(400, "'messages' must be a non-empty list of {\"role\": …, \"content\": …}")
    if len(messages) > MAX_MESSAGES:
        raise ApiError(413, f"{len(messages)} messages; this server takes at most {MAX_MESSAGES}")
    out, total = [], 0
    for k, m in enumerate(messages):
        if not isinstance(m, dict) or not isinstance(m.get("role"), str) or not isinstance(m.get("content"), str):
            raise ApiError(400, f"messages[{k}] must be {{\"role\": string, \"content\": string}}")
        total += len(m["content"])
        out.append({"role": m["role"], "content": m["content"]})
    if total > MAX_TEXT:
        raise ApiError(413, f"the messages have {total:,} characters; this server takes at most {MAX_TEXT:,}")
    return out


def chat(registry: Registry, body: dict[str, Any]) -> dict[str, Any]:
    """``POST /api/chat {"model", "messages", "add_generation_prompt"?, "content_special"?}``: the conversation
    through the model's chat template, its tokens and per-role masks (`views.chat_view`)."""
    messages = _messages(body)
    entry = registry.get(body.get("model"))
    prompt = body.get("add_generation_prompt", False)
    if not isinstance(prompt, bool):
        raise ApiError(400, "'add_generation_prompt' must be true or false")
    content_special = body.get("content_special", "text")
    if content_special not in ("text", "parse"):
        raise ApiError(400, "'content_special' must be \"text\" or \"parse\"")
    started = time.perf_counter()
    view: dict[str, Any] = _run(entry.name, chat_view, entry.tokenizer, messages, add_generation_prompt=prompt,
                                content_special=content_special)
    view.update(model=entry.describe(), elapsed_ms=round((time.perf_counter() - started) * 1000, 1))
    return view


def _sides(registry: Registry, body: dict[str, Any]) -> list[tuple[Entry, str | None]]:
    sides = []
    for key in ("a", "b"):
        side = body.get(key)
        if not isinstance(side, dict):
            raise ApiError(400, f"'{key}' must be an object: {{\"model\": …, \"special\": …}}")
        sides.append((registry.get(side.get("model")), _special(side, "special")))
    return sides


def compare_view(registry: Registry, body: dict[str, Any]) -> dict[str, Any]:
    """``POST /api/compare {"a": {"model", "special"?}, "b": {…}, "text", "add_special"?, "match"?}``.

    ``match``: ``"ids"`` (the default), ``"bytes"`` (the text spans each token covers), or ``"auto"``
    (ids for one tokenizer in two modes, bytes for two tokenizers).
    """
    text = _text(body)
    (entry_a, mode_a), (entry_b, mode_b) = _sides(registry, body)
    add_special = _add_special(body)
    match = body.get("match", "ids")
    if match not in ("ids", "bytes", "auto"):
        raise ApiError(400, "'match' must be \"ids\", \"bytes\" or \"auto\"")
    if match == "auto":  # two vocabularies: ids mean nothing across them, the text each token covers does
        match = "ids" if entry_a.tokenizer is entry_b.tokenizer else "bytes"
    started = time.perf_counter()
    view_a = _side_view(entry_a, text, mode_a, add_special)
    view_b = _side_view(entry_b, text, mode_b, add_special)
    keys = "ids" if match == "ids" else "bytes"
    regions = diff_regions(view_a[keys], view_a["offsets"], view_b[keys], view_b["offsets"])
    first = _first(entry_a, mode_a, entry_b, mode_b, text, add_special)
    return {"a": view_a, "b": view_b, "match": match, "regions": [list(r) for r in regions],
            "identical": view_a["ids"] == view_b["ids"], "first": first,
            "elapsed_ms": round((time.perf_counter() - started) * 1000, 1)}


class _ModeSide(PolytokSide):
    """A polytok side that always encodes in its own special-token mode (one tokenizer, two modes)."""

    def __init__(self, tok: Tokenizer, label: str, special: str | None) -> None:
        super().__init__(tok, label)
        self.mode = special

    def encode(self, text: str, add_special: bool, special: str | None) -> list[int]:
        return super().encode(text, add_special, self.mode)


def _first(entry_a: Entry, mode_a: str | None, entry_b: Entry, mode_b: str | None, text: str,
           add_special: bool) -> dict[str, Any] | None:
    """`polytok.parity.compare`'s first divergence: its region, kind, reason names and stage."""
    tok_a, tok_b = entry_a.tokenizer, entry_b.tokenizer
    same_mode = SpecialTokens(tok_a.default_special if mode_a is None else mode_a) is \
        SpecialTokens(tok_b.default_special if mode_b is None else mode_b)
    if same_mode:
        sides = PolytokSide(tok_a, "A"), PolytokSide(tok_b, "B")
        mode = mode_a if mode_a is not None else mode_b
        report = _run("compare", compare, *sides, [text], explain=len(text) <= MAX_STAGE_TEXT,
                      add_special=add_special, special=mode)
    else:
        sides = _ModeSide(tok_a, "A", mode_a), _ModeSide(tok_b, "B", mode_b)
        report = _run("compare", compare, *sides, [text], add_special=add_special)
    result = report.results[0]
    if result.identical:
        return None
    out = asdict(result)
    del out["text"]
    if not same_mode and tok_a is tok_b and result.stage is None:
        out["stage"] = "special split"
        out["stage_detail"] = "one tokenizer in two modes: special-token markers parsed on one side, text on the other"
    return out
