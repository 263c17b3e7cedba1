"""Chat templates: render a conversation with the model's Jinja template, and tokenize it.

Reproduces transformers 5.24.0 ``apply_chat_template`` for one conversation:
``tokenization_utils_base.py`` (``PreTrainedTokenizerBase.apply_chat_template``,
``get_chat_template``, ``_get_control_tokens``, ``_mark_chat_inputs``) and
``utils/chat_template_utils.py`` (``_cached_compile_jinja_template``: the
environment; ``_normalize_chat_messages``, ``_plain_template_data``,
``_alias_reasoning_fields``, ``render_jinja_template``: message handling and
``continue_final_message``'s trimming).  The Jinja environment is in
`polytok.chat.sandbox`, the marking of content in `polytok.chat.marking`.

Where the template comes from is the reader's business (`polytok.formats.chat_templates`:
in transformers' order of precedence, ``chat_template.jinja`` (+
``additional_chat_templates/*.jinja``) in the model folder, else
``tokenizer_config.json``'s ``chat_template``; for GGUF, ``tokenizer.chat_template``
and every ``tokenizer.chat_template.<name>``). This module reads only the typed
facts the reader filled (`polytok.facts.ChatFacts`): it knows no format.

Content is text, markers are markup: with ``tokenize=True`` a special-token
marker the template writes is parsed, while the same marker inside a message,
a tool schema, a document or a caller's template variable is encoded as text
(transformers' ``sanitize_control_tokens=True``; `polytok.chat.marking`).
``content_special="parse"`` reads them as tokens instead (transformers' default,
``tokenize`` of the rendered string).

With ``return_dict=True`` the ids come as transformers' ``BatchEncoding`` keys, with
``assistant_masks`` (``{% generation %}`` spans, transformers' rule) and ``role_masks``
(polytok's own, any template) on request (`polytok.chat.masks`).

Deliberate differences from transformers: one conversation per call (no
batches, no ``return_tensors``, padding or truncation); the assistant mask also
works with content read as text; tools must be JSON-schema dicts (transformers also turns Python
functions into schemas); a ``template`` that looks like a name (no spaces, no
braces) but is not one of the file's names raises instead of rendering as
literal text; errors are `ChatTemplateError` naming the template and line.
"""

from __future__ import annotations

import dataclasses
import re
import warnings
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..errors import ChatTemplateError, PolytokError
from ..special import SpecialTokens
from ..tokenizer.batch_encoding import BatchEncoding
from ..tokenizer.call_settings import call_settings
from .marking import MARKERS, control_tokens, encode_marked, marker
from .masks import GENERATION_TAG, ContentMarks, overlap_mask, role_masks
from .sandbox import compile_template, render
from .state_tokens import insert_state_tokens
from .token_offsets import byte_offsets

if TYPE_CHECKING:
    from ..tokenizer import Tokenizer

__all__ = ["apply_chat_template", "chat_templates", "select_template", "STATE_MARKERS"]

_REASONING_FIELDS = ("reasoning_content", "thinking", "reasoning")
_CONTINUE_TAG = "CONTINUE_FINAL_MESSAGE_TAG "
_LOOKS_LIKE_NAME = re.compile(r"[\w.\-]+")
#: the default role markers of the state-token rule: (user, assistant, eot)
STATE_MARKERS = ("<user>", "<assistant>", "<eot>")


# -- where templates live ---------------------------------------------------------------


def chat_templates(tok: Tokenizer) -> Mapping[str, str]:
    """The tokenizer's chat templates by name; a single template is named ``"default"``.

    The reader found them (`polytok.formats.chat_templates`) and keeps them in
    ``tok.facts.chat.templates``.
    """
    return tok.facts.chat.templates


def select_template(templates: Mapping[str, str], template: str | None, has_tools: bool) -> tuple[str, str]:
    """(name, source) of the template to render (transformers' ``get_chat_template`` rules)."""
    if template is not None:
        if template in templates:
            return template, templates[template]
        if _LOOKS_LIKE_NAME.fullmatch(template):
            known = sorted(templates) or "none: the tokenizer has no chat template"
            raise ChatTemplateError(f"unknown template name {template!r}; the file's templates: {known} "
                                    "(pass Jinja source to render a template of your own)")
        return "<given>", template
    if not templates:
        raise ChatTemplateError("this tokenizer has no chat template (no chat_template.jinja, no chat_template in "
                                "tokenizer_config.json, no tokenizer.chat_template in the GGUF); pass template=")
    if len(templates) == 1 and "default" in templates:
        return "default", templates["default"]
    if has_tools and "tool_use" in templates:
        return "tool_use", templates["tool_use"]
    if "default" in templates:
        return "default", templates["default"]
    raise ChatTemplateError(f"the file has several chat templates and none is named 'default'; "
                            f"pass template= one of {sorted(templates)}")


# -- template variables ---------------------------------------------------------------------


def special_token_variables(tok: Tokenizer) -> dict[str, str]:
    """``bos_token``, ``eos_token``, … as the template sees them (transformers' ``special_tokens_map``)."""
    return dict(tok.facts.chat.variables)


def _to_dicts(value: Any) -> Any:
    """Message objects (dataclasses, pydantic models) as dicts, recursively."""
    if isinstance(value, Mapping):
        return {k: _to_dicts(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_to_dicts(v) for v in value]
    if isinstance(value, tuple):
        return tuple(_to_dicts(v) for v in value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _to_dicts(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if callable(getattr(value, "model_dump", None)):
        return _to_dicts(value.model_dump())
    return value


def plain(value: Any) -> Any:
    """What the sandbox may see: JSON-like types only; anything else becomes ``"<TypeName>"``."""
    if value is None or type(value) in (str, int, float, bool):
        return value
    if isinstance(value, str):  # subclasses (enums, numpy scalars …) lose their extra methods
        return str.__str__(value)
    if isinstance(value, int):
        return int.__int__(value)
    if isinstance(value, float):
        return float.__float__(value)
    if isinstance(value, Mapping):
        return {plain(k): plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain(v) for v in value]
    if isinstance(value, tuple):
        return tuple(plain(v) for v in value)
    if type(value).__module__ == "numpy" and callable(getattr(value, "item", None)):
        return plain(value.item())
    is_dataclass_instance = dataclasses.is_dataclass(value) and not isinstance(value, type)
    if is_dataclass_instance or callable(getattr(value, "model_dump", None)):
        return plain(_to_dicts(value))
    return f"<{type(value).__name__}>"


def _normalize_messages(messages: Any) -> list[dict[str, Any]]:
    out = []
    for i, message in enumerate(_to_dicts(getattr(messages, "messages", messages))):
        if not isinstance(message, dict):
            raise ChatTemplateError(f"message {i} must be a dict (or a dataclass / pydantic model), not {message!r}")
        # keys set to None are dropped: templates handle a missing key better than a literal None
        out.append({k: v for k, v in message.items() if v is not None})
    return out


def _alias_reasoning(chat: list[Any]) -> list[Any]:
    out = []
    for message in chat:
        if isinstance(message, dict):
            reasoning = next((message[k] for k in _REASONING_FIELDS if message.get(k) is not None), None)
            if reasoning is not None:
                message = {"thinking": reasoning, **message, "reasoning_content": reasoning}
        out.append(message)
    return out


def _tag_final_message(chat: list[dict[str, Any]], field: str, source: str) -> str:
    """Append the continue tag to the final message's `field`; return the text being continued."""
    final = chat[-1].get(field)
    if final is None:
        raise ChatTemplateError(f"continue_final_message is set but the final message has no {field!r} to continue")
    fields = [field]
    if field in _REASONING_FIELDS:  # reasoning is copied under several names: tag each copy
        fields = [f for f in _REASONING_FIELDS if chat[-1].get(f) == final]
    if not any(f in source for f in fields):
        raise ChatTemplateError(f"continue_final_message is set to {field!r}, which the template never reads")
    if isinstance(final, (list, tuple)):
        for block in reversed(final):
            if isinstance(block, dict) and "text" in block:
                text = block["text"]
                block["text"] = text + _CONTINUE_TAG
                return str(text)
        raise ChatTemplateError("continue_final_message is set but the final message has no text block to continue")
    for f in fields:
        chat[-1][f] = chat[-1][f] + _CONTINUE_TAG
    return str(final)


def _trim_at_tag(rendered: str, final: str) -> str:
    tag = _CONTINUE_TAG.strip()
    if final.strip() not in rendered or tag not in rendered:
        raise ChatTemplateError("continue_final_message is set but the template drops part of the final message, "
                                "so it cannot be continued")
    at = rendered.rindex(tag)
    if rendered[at:at + len(_CONTINUE_TAG)] == _CONTINUE_TAG:
        return rendered[:at]
    return rendered[:at].rstrip()  # the template trimmed the message's trailing space


def _tool_schemas(tools: Sequence[Any] | None) -> list[Any] | None:
    if tools is None:
        return None
    for i, tool in enumerate(tools):
        if not isinstance(tool, Mapping):
            raise ChatTemplateError(f"tools[{i}] must be a JSON-schema dict, not {type(tool).__name__} "
                                    "(polytok does not turn Python functions into schemas)")
    return list(tools)


# -- rendering ------------------------------------------------------------------------------


def render_chat(source: str, name: str, messages: Any, *, tools: Sequence[Any] | None, documents: Any,
                add_generation_prompt: bool, continue_final_message: bool | str,
                variables: Mapping[str, Any], generation_spans: list[tuple[int, int]] | None = None) -> str:
    """The rendered conversation (transformers' ``render_jinja_template`` for one chat).

    `generation_spans`, when given, receives the character spans of the ``{% generation %}`` blocks."""
    compiled = compile_template(source, name)
    if documents is not None and not all(isinstance(d, Mapping) for d in documents):
        raise ChatTemplateError("documents must be a list of dicts (with 'title' and 'text' keys)")
    chat = _alias_reasoning(plain(messages))
    final = None
    if continue_final_message:
        field = continue_final_message if isinstance(continue_final_message, str) else "content"
        final = _tag_final_message(chat, field, source)
    context = dict(plain(dict(variables)))
    for reserved in ("messages", "tools", "documents", "add_generation_prompt"):
        if reserved in context:
            raise ChatTemplateError(f"{reserved!r} cannot be passed as a template variable")
    context.update(messages=chat, tools=plain(_tool_schemas(tools)), documents=plain(documents),
                   add_generation_prompt=add_generation_prompt)
    rendered = render(compiled, name, context, generation_spans)
    return _trim_at_tag(rendered, final) if final is not None else rendered


def apply_chat_template(tok: Tokenizer, messages: Any, *, add_generation_prompt: bool = False,
                        tools: Sequence[Any] | None = None, documents: Sequence[Any] | None = None,
                        continue_final_message: bool | str = False, tokenize: bool = False,
                        template: str | None = None, content_special: SpecialTokens | str = SpecialTokens.AS_TEXT,
                        state_tokens: int | None = None,
                        state_markers: tuple[str | int, str | int, str | int] = STATE_MARKERS,
                        return_dict: bool = False, return_assistant_tokens_mask: bool = False,
                        return_role_masks: bool = False, **variables: Any) -> str | list[int] | BatchEncoding:
    """`Tokenizer.apply_chat_template` (documented there)."""
    name, source = select_template(chat_templates(tok), template, tools is not None)
    chat = _normalize_messages(messages)
    if not chat:
        raise ChatTemplateError("cannot apply a chat template to an empty conversation")
    if continue_final_message and add_generation_prompt:
        raise ChatTemplateError("continue_final_message and add_generation_prompt exclude each other")
    _check_mask_options(tok, source, tokenize, return_dict, return_assistant_tokens_mask, return_role_masks,
                        continue_final_message, state_tokens)
    as_text = tokenize and SpecialTokens(content_special) is SpecialTokens.AS_TEXT
    mark = marker(control_tokens(tok, source)) if as_text else _unchanged
    generation: list[tuple[int, int]] | None = [] if return_assistant_tokens_mask else None

    def rendered_from(conversation: list[dict[str, Any]], spans: list[tuple[int, int]] | None) -> str:
        return render_chat(source, name, mark(conversation), tools=mark(tools), documents=mark(documents),
                           add_generation_prompt=add_generation_prompt,
                           continue_final_message=continue_final_message,
                           variables={**special_token_variables(tok), **mark(variables)},
                           generation_spans=spans)

    rendered = rendered_from(chat, generation)
    content_spans = _content_spans(chat, rendered, rendered_from,
                                   (chat, tools, documents, variables, special_token_variables(tok), source)) \
        if return_role_masks else None
    if not tokenize:
        return rendered
    if not return_dict:
        ids = encode_marked(tok, rendered) if as_text else tok.encode(rendered, add_special=False,
                                                                      special=SpecialTokens.PARSE)
        return _with_state_tokens(tok, ids, state_tokens, state_markers)
    if as_text:
        out = _call_arrays(tok, encode_marked(tok, rendered))
    else:
        out = dict(tok(rendered, add_special=False, special=SpecialTokens.PARSE))
    offsets: list[tuple[int, int]] = []
    if generation is not None or content_spans is not None:
        offsets = _offsets(tok, rendered, out["input_ids"], as_text)
    if generation is not None:
        out["assistant_masks"] = overlap_mask(offsets, generation)
    if content_spans is not None:
        out["role_masks"] = role_masks(chat, content_spans, offsets)
    return BatchEncoding(out)


def _offsets(tok: Tokenizer, rendered: str, ids: list[int], as_text: bool) -> list[tuple[int, int]]:
    """The character offsets of `ids` in `rendered`: from the tokens' bytes where they are the text's
    (`polytok.chat.token_offsets`), else from the aligned stages (`Tokenizer.encode_full`)."""
    found = byte_offsets(tok, rendered, ids, MARKERS if as_text else "")
    if found is not None:
        return found
    offsets: list[tuple[int, int]] = []
    if as_text:
        again = encode_marked(tok, rendered, offsets)
    else:
        full = tok.encode_full(rendered, add_special=False, special=SpecialTokens.PARSE, truncation=False,
                               padding=False)
        again, offsets = list(full.ids), list(full.offsets)
    if again != ids:
        raise PolytokError("the aligned stages give other ids than the encoder; no offsets for the masks")
    return offsets


def _unchanged(value: Any) -> Any:
    return value


def _check_mask_options(tok: Tokenizer, source: str, tokenize: bool, return_dict: bool, assistant_mask: bool,
                        role_masks_: bool, continue_final_message: bool | str, state_tokens: int | None) -> None:
    """transformers' checks of ``return_assistant_tokens_mask`` (and the same rules for role masks)."""
    if (assistant_mask or role_masks_) and not (tokenize and return_dict):
        raise ChatTemplateError("return_assistant_tokens_mask and return_role_masks need tokenize=True and "
                                "return_dict=True")
    if assistant_mask and continue_final_message:
        raise ChatTemplateError("continue_final_message cannot be combined with return_assistant_tokens_mask")
    k = state_token_count(tok) if state_tokens is None else state_tokens
    if return_dict and tokenize and k:
        raise ChatTemplateError("return_dict=True cannot insert state tokens (their ids have no characters); "
                                "pass state_tokens=0, or return_dict=False")
    if assistant_mask and not GENERATION_TAG.search(source):
        warnings.warn("return_assistant_tokens_mask=True, but the chat template has no {% generation %} block: "
                      "the mask is all 0 (return_role_masks=True marks message contents with any template)",
                      stacklevel=4)


def _content_spans(chat: list[dict[str, Any]], rendered: str, rendered_from: Any,
                   inputs: tuple[Any, ...]) -> list[list[tuple[int, int]]]:
    """Each message's character spans in `rendered` (`polytok.chat.masks`: marks around its texts)."""
    marks = ContentMarks(chat, inputs)
    refusal = None
    for whole in (True, False):
        try:
            clean, spans = marks.spans(rendered_from(marks.mark(chat, whole), None))
        except ChatTemplateError as exc:
            refusal = exc
            continue
        if clean == rendered:
            return spans
    because = f" (it raised: {refusal})" if refusal is not None else ""
    raise ChatTemplateError("return_role_masks: the template renders marked messages differently from the "
                            f"messages themselves, so where their texts land cannot be told{because}")


def _call_arrays(tok: Tokenizer, ids: list[int]) -> dict[str, Any]:
    """``input_ids`` and, where the model takes them, ``token_type_ids`` and ``attention_mask`` (as
    `Tokenizer.__call__` returns them for one text)."""
    names = call_settings(tok).model_input_names
    out: dict[str, Any] = {"input_ids": ids}
    if "token_type_ids" in names:
        out["token_type_ids"] = [0] * len(ids)
    if "attention_mask" in names:
        out["attention_mask"] = [1] * len(ids)
    return out


# -- state tokens ----------------------------------------------------------------------------


def state_token_count(tok: Tokenizer) -> int:
    """The file's k (GGUF ``paperkiln.state_tokens.k``), else 0."""
    return tok.facts.chat.state_tokens_k


def _with_state_tokens(tok: Tokenizer, ids: list[int], k: int | None,
                       markers: tuple[str | int, str | int, str | int]) -> list[int]:
    k = state_token_count(tok) if k is None else k
    if not k:
        return ids
    user, assistant, eot = (_marker_id(tok, m, role) for m, role in zip(markers, ("user", "assistant", "eot")))
    return insert_state_tokens(ids, vocab_size=len(tok), k=k, eot=eot, user=user, assistant=assistant)


def _marker_id(tok: Tokenizer, marker: str | int, role: str) -> int:
    if isinstance(marker, int):
        return marker
    found = tok.token_to_id(marker)
    if found is None and role == "eot":
        found = tok.special_ids.get("eot")
    if found is None:
        raise PolytokError(f"state tokens: the {role} marker {marker!r} is not a token of this vocabulary "
                           "(pass state_markers=(user, assistant, eot))")
    return found
