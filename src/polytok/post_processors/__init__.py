"""Post-processors: the stage that adds special tokens and sets type ids.

``process_ids(a, b, add_special) -> list[int]`` is the fast path;
``process(a, b, add_special) -> Encoding`` is the full path (HF
``PostProcessor::process``: sets sequence ids and type ids, then
``process_encodings``, then concatenates, overflows included).
``added_tokens(is_pair)`` is the count truncation reserves.
"""

from __future__ import annotations

from typing import Any, Protocol

from .._config import as_object, join
from ..encoding import Encoding
from ..errors import FormatError


class PostProcessor(Protocol):
    def added_tokens(self, is_pair: bool) -> int: ...

    def process_ids(self, a: list[int], b: list[int] | None, add_special: bool) -> list[int]: ...

    def process(self, a: Encoding, b: Encoding | None, add_special: bool) -> Encoding: ...


REGISTRY: dict[str, Any] = {}


def from_config(d: Any, path: str = "post_processor") -> PostProcessor:
    d = as_object(d, path)
    kind = d.get("type")
    cls = REGISTRY.get(kind) if kind is not None else None
    if cls is None:
        raise FormatError(f"unknown post-processor type {kind!r}", key=join(path, "type"))
    return cls.from_config(d, path)  # type: ignore[no-any-return]
