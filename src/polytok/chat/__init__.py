"""Chat templates: rendering (transformers' ``apply_chat_template``), the Jinja sandbox and its
bounds, the marking of content as text, assistant and role masks, and per-turn state tokens.

`Tokenizer.apply_chat_template` is the entry point; `render`, `sandbox`, `limits`, `sizes`,
`filters`, `marking`, `masks`, `token_offsets` and `state_tokens` hold the parts. The names
below are imported on first use, so ``import polytok`` does not import Jinja.
"""

from typing import Any

_EXPORTS = {"apply_chat_template": "render", "chat_templates": "render", "select_template": "render",
            "STATE_MARKERS": "render", "insert_state_tokens": "state_tokens"}


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        from importlib import import_module

        return getattr(import_module(f"{__name__}.{_EXPORTS[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
