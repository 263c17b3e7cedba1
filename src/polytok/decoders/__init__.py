"""Decoders: the stage that turns token strings back into text.

``decode_chain(tokens) -> list[str]`` transforms the list (HF's name and
contract); the tokenizer joins the result.
"""

from __future__ import annotations

from typing import Any, Protocol

from .._config import as_object, join
from ..errors import FormatError


class Decoder(Protocol):
    def decode_chain(self, tokens: list[str]) -> list[str]: ...


REGISTRY: dict[str, Any] = {}


def from_config(d: Any, path: str = "decoder") -> Decoder:
    d = as_object(d, path)
    kind = d.get("type")
    cls = REGISTRY.get(kind) if kind is not None else None
    if cls is None:
        raise FormatError(f"unknown decoder type {kind!r}", key=join(path, "type"))
    return cls.from_config(d, path)  # type: ignore[no-any-return]
