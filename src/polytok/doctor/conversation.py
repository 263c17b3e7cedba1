"""The short conversation the chat-template checks render: three user turns, two replies."""

from __future__ import annotations

__all__ = ["CONVERSATION"]

CONVERSATION: tuple[dict[str, str], ...] = (
    {"role": "user", "content": "Hello"},
    {"role": "assistant", "content": "Hi there."},
    {"role": "user", "content": "How are you?"},
    {"role": "assistant", "content": "Fine, thanks."},
    {"role": "user", "content": "Good."},
)
