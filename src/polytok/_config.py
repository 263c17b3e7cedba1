"""Typed access to the JSON objects of a tokenizer file, raising `FormatError` with the key path.

Component classes call these from their ``from_config(d, path)``; `path` is the
dotted key path of `d` inside the file (``normalizer.normalizers[2]``), so every
error names where it is.
"""

from __future__ import annotations

import math
from typing import Any, TypeVar

from .errors import FormatError

T = TypeVar("T")

# serde_json's recursion limit, with which HF tokenizers parses tokenizer.json: no JSON
# polytok reads may nest deeper (Python's json would raise RecursionError near 1000, and the
# component builders recurse once per nested Sequence)
MAX_JSON_DEPTH = 128

_MISSING: Any = object()

_TYPE_NAMES = {bool: "a boolean", int: "an integer", float: "a number", str: "a string",
               list: "a list", dict: "an object", type(None): "null"}


def _describe(types: tuple[type, ...]) -> str:
    return " or ".join(_TYPE_NAMES.get(t, t.__name__) for t in types)


def _check(value: Any, types: tuple[type, ...], path: str) -> Any:
    # subtle: bool is an int in Python; a JSON true is never an integer here.
    if isinstance(value, bool) and bool not in types:
        raise FormatError(f"expected {_describe(types)}, found {value!r}", key=path)
    if float in types and isinstance(value, (int, float)) and not isinstance(value, bool):
        try:
            number = float(value)
        except OverflowError:
            number = math.inf
        if not math.isfinite(number):
            # HF's serde_json refuses NaN / Infinity and numbers beyond an f64 ("number out of range")
            raise FormatError(f"expected a finite number, found {value!r:.60}", key=path)
        return number
    if not isinstance(value, types):
        raise FormatError(f"expected {_describe(types)}, found {type(value).__name__} {value!r:.60}", key=path)
    return value


def as_object(d: Any, path: str) -> dict[str, Any]:
    return _check(d, (dict,), path)  # type: ignore[no-any-return]


def required(d: dict[str, Any], key: str, types: type | tuple[type, ...], path: str) -> Any:
    """`d[key]`, which must exist and be of `types`."""
    if not isinstance(types, tuple):
        types = (types,)
    if key not in d:
        raise FormatError(f"missing required key {key!r}", key=path)
    return _check(d[key], types, join(path, key))


def optional(d: dict[str, Any], key: str, types: type | tuple[type, ...], path: str, default: Any = None) -> Any:
    """`d[key]` when present (and not null unless null is allowed), else `default`."""
    if not isinstance(types, tuple):
        types = (types,)
    if key not in d or (d[key] is None and type(None) not in types):
        return default
    return _check(d[key], types, join(path, key))


def join(path: str, key: str | int) -> str:
    if isinstance(key, int):
        return f"{path}[{key}]"
    return f"{path}.{key}" if path else key


def single_char(d: dict[str, Any], key: str, path: str) -> str:
    value: str = required(d, key, str, path)
    if len(value) != 1:
        raise FormatError(f"expected a single character, found {value!r}", key=join(path, key))
    return value


def check_depth(value: Any, path: str, limit: int = MAX_JSON_DEPTH) -> None:
    """Refuse a JSON tree nested more than `limit` containers deep (`value` itself is one),
    naming the key path of the first container too deep; it is walked without recursion."""
    stack: list[tuple[Any, str, int]] = [(value, path, 1)]
    while stack:
        node, where, depth = stack.pop()
        if not isinstance(node, (dict, list)):
            continue
        if depth > limit:
            raise FormatError(f"nested more than {limit} deep (HF tokenizers' serde_json refuses it too: "
                              "recursion limit exceeded)", key=where)
        items = node.items() if isinstance(node, dict) else enumerate(node)
        stack.extend((child, join(where, key), depth + 1) for key, child in items
                     if isinstance(child, (dict, list)))
