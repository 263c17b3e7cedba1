"""Chat-template filters (Jinja 3.1.6 ``filters.py``, transformers' ``tojson``), each refusing a result over
the render's limits before it runs.

`bounded_filter` wraps a filter with an estimate of its result, read from what the filter
does: ``do_batch`` pads the last batch to ``linecount`` items, ``sync_do_slice`` loops
``slices`` times, ``do_indent`` prefixes every line with ``width``, ``do_wordwrap`` joins
the lines with ``wrapstring``, ``do_urlize`` wraps each link (at least 4 characters) in an
``<a>`` tag carrying ``target`` and ``rel``, ``do_center``/``do_truncate`` write at most
``width``/the text plus ``end``, ``sync_do_sum`` with a list ``start`` copies the list at
every item, ``do_pprint`` indents each line by its depth, case changes can triple a
character (``"ΐ".upper()``), escaping writes up to 5 characters per character and URL
quoting 12, and ``tojson`` is measured as ``json.dumps`` writes it (`chat.limits.measure`).
Filters that walk their input in Python (sorting, grouping, ``unique``, ``min``/``max``,
``dictsort``, ``xmlattr``, ``batch``, ``title``, ``wordwrap``, ``urlize``, ``indent``'s
lines) count its items as steps, and the lazy ones (``map``, ``select``, ``reject``,
``selectattr``, ``rejectattr``, ``items``, ``reverse``) count their items as they are taken.
Filters that build nothing and take constant or C-level linear time are left as they are.
"""

from __future__ import annotations

import functools
from collections import abc
from collections.abc import Callable
from typing import Any

from .limits import JSON, REPR, Budget, checked_tree, current, measure, measure_nested, sized
from .sizes import argument, as_count, joined_size, percent_size, replaced_size, text_size

__all__ = ["bounded_filter"]

_LINE_BREAKS = ("\n", "\r", "\v", "\f", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029")

_Estimate = Callable[[Any, tuple[Any, ...], dict[str, Any], Budget], tuple[Any, int]]
_TEXT_FILTERS = {"capitalize": 3, "lower": 3, "upper": 3, "title": 3, "trim": 1, "striptags": 1, "string": 1,
                 "safe": 1, "e": 5, "escape": 5, "forceescape": 5, "wordcount": 1, "urlencode": 12}
_WALKED_TEXT = {"title", "urlencode"}  # Python-level work per character or word
_WALKING_FILTERS = {"dictsort", "groupby", "sort", "unique", "min", "max"}
#: filters that return a lazy iterator: its items are counted as they are taken
_LAZY_FILTERS = {"map", "select", "reject", "selectattr", "rejectattr", "items", "reverse"}


def _text_filter(factor: int, walks: bool) -> _Estimate:
    def estimate(value: Any, args: tuple[Any, ...], kwargs: dict[str, Any], budget: Budget) -> tuple[Any, int]:
        size = text_size(value, budget)
        if walks:
            budget.step(size)
        elif isinstance(value, str) and "&" in value:  # striptags unescapes each entity in Python
            budget.step(value.count("&"))
        return value, factor * size

    return estimate


def _walking(value: Any, args: tuple[Any, ...], kwargs: dict[str, Any], budget: Budget) -> tuple[Any, int]:
    value, n = sized(value)
    budget.step(n)
    checked_tree(value, budget, "sorting or comparing")
    return value, n


def _xmlattr(value: Any, args: tuple[Any, ...], kwargs: dict[str, Any], budget: Budget) -> tuple[Any, int]:
    value, n = sized(value)
    budget.step(n)
    return value, 5 * measure(value, REPR, budget.limits.max_output_chars, budget) + 4 * n  # key="value", escaped


def _batch(value: Any, args: tuple[Any, ...], kwargs: dict[str, Any], budget: Budget) -> tuple[Any, int]:
    value, n = sized(value)
    budget.step(n)
    fill = argument(args, kwargs, 1, "fill_with", None) is not None
    return value, n + (max(as_count(argument(args, kwargs, 0, "linecount", 0)), 0) if fill else 0)


def _slice(value: Any, args: tuple[Any, ...], kwargs: dict[str, Any], budget: Budget) -> tuple[Any, int]:
    value, n = sized(value)
    slices = max(as_count(argument(args, kwargs, 0, "slices", 0)), 0)
    budget.step(slices)
    return value, n + slices


def _center(value: Any, args: tuple[Any, ...], kwargs: dict[str, Any], budget: Budget) -> tuple[Any, int]:
    return value, max(text_size(value, budget), as_count(argument(args, kwargs, 0, "width", 80)))


def _truncate(value: Any, args: tuple[Any, ...], kwargs: dict[str, Any], budget: Budget) -> tuple[Any, int]:
    return value, text_size(value, budget) + text_size(argument(args, kwargs, 2, "end", "..."), budget)


def _lines(value: Any, budget: Budget) -> int:
    """An upper bound of the lines of ``str(value)`` (``str.splitlines`` breaks)."""
    if isinstance(value, str):
        return 1 + sum(map(value.count, _LINE_BREAKS))
    return text_size(value, budget) + 1


def _indent(value: Any, args: tuple[Any, ...], kwargs: dict[str, Any], budget: Budget) -> tuple[Any, int]:
    width = argument(args, kwargs, 0, "width", 4)
    prefix = len(width) if isinstance(width, str) else max(as_count(width), 0)
    lines = _lines(value, budget)
    budget.step(lines)
    return value, text_size(value, budget) + prefix * (lines + 1)


def _wordwrap(value: Any, args: tuple[Any, ...], kwargs: dict[str, Any], budget: Budget) -> tuple[Any, int]:
    size = text_size(value, budget)
    budget.step(size)
    wrapstring = argument(args, kwargs, 3, "wrapstring", None)
    return value, size + (size + 1) * (text_size(wrapstring, budget) if wrapstring is not None else 1)


def _urlize(value: Any, args: tuple[Any, ...], kwargs: dict[str, Any], budget: Budget) -> tuple[Any, int]:
    size = text_size(value, budget)
    budget.step(size)
    attributes = sum(text_size(argument(args, kwargs, i, name, "") or "", budget)
                     for i, name in ((2, "target"), (3, "rel")))
    return value, 10 * size + (size // 4 + 1) * (64 + attributes)  # a link is at least 4 characters


def _replace(value: Any, args: tuple[Any, ...], kwargs: dict[str, Any], budget: Budget) -> tuple[Any, int]:
    old, new = argument(args, kwargs, 0, "old", ""), argument(args, kwargs, 1, "new", "")
    return value, replaced_size(value, old, new, argument(args, kwargs, 2, "count", None), budget)


def _join(value: Any, args: tuple[Any, ...], kwargs: dict[str, Any], budget: Budget) -> tuple[Any, int]:
    value, n = sized(value)
    separator = text_size(argument(args, kwargs, 0, "d", ""), budget)
    if argument(args, kwargs, 1, "attribute", None) is not None:
        budget.step(n)
        return value, measure(value, REPR, budget.limits.max_output_chars, budget) + n * separator
    return value, joined_size(value, budget) + n * separator


def _format(value: Any, args: tuple[Any, ...], kwargs: dict[str, Any], budget: Budget) -> tuple[Any, int]:
    if not isinstance(value, str):
        budget.build(text_size(value, budget), "the filter format")
    return value, percent_size(str(value), tuple(kwargs.values()) if kwargs else args, budget)


def _sum(value: Any, args: tuple[Any, ...], kwargs: dict[str, Any], budget: Budget) -> tuple[Any, int]:
    value, n = sized(value)
    budget.step(n)
    start = argument(args, kwargs, 1, "start", 0)
    if not isinstance(start, (list, tuple)) or argument(args, kwargs, 0, "attribute", None) is not None:
        return value, 0
    total = len(start) + sum(len(item) for item in value if isinstance(item, (list, tuple)))
    return value, total * n  # every step of sum() copies the list built so far


def _pprint(value: Any, args: tuple[Any, ...], kwargs: dict[str, Any], budget: Budget) -> tuple[Any, int]:
    size, depth = measure_nested(value, budget.limits.max_output_chars, budget)
    budget.step(size // 2 + 1)
    return value, size * (depth + 2)  # each line indented by its depth


def _tojson(value: Any, args: tuple[Any, ...], kwargs: dict[str, Any], budget: Budget) -> tuple[Any, int]:
    ensure_ascii = bool(argument(args, kwargs, 0, "ensure_ascii", False))
    indent = argument(args, kwargs, 1, "indent", None)
    separators = argument(args, kwargs, 2, "separators", None)
    if not (isinstance(separators, (tuple, list)) and len(separators) == 2
            and all(isinstance(s, str) for s in separators)):
        separators = None
    if not isinstance(indent, (int, str)):
        indent = None
    return value, measure(value, JSON, budget.limits.max_output_chars, budget, ensure_ascii=ensure_ascii, indent=indent,
                          separators=tuple(separators) if separators else None)


_FILTERS: dict[str, _Estimate] = {
    **{name: _text_filter(factor, name in _WALKED_TEXT) for name, factor in _TEXT_FILTERS.items()},
    **{name: _walking for name in _WALKING_FILTERS},
    "batch": _batch, "slice": _slice, "center": _center, "truncate": _truncate, "indent": _indent,
    "wordwrap": _wordwrap, "urlize": _urlize, "replace": _replace, "join": _join, "format": _format,
    "sum": _sum, "pprint": _pprint, "tojson": _tojson, "xmlattr": _xmlattr, "list": lambda v, a, k, b: sized(v),
    "reverse": lambda v, a, k, b: (v, len(v) if isinstance(v, str) else 0),
}
#: filters that build nothing and take O(1) or C-level linear time
_CHEAP_FILTERS = {"abs", "attr", "count", "d", "default", "filesizeformat", "first", "float", "int", "last",
                  "length", "random", "round"}


def _generic(value: Any, args: tuple[Any, ...], kwargs: dict[str, Any], budget: Budget) -> tuple[Any, int]:
    """A filter this module does not know: its text, and no integer argument above the limit."""
    return value, max([text_size(value, budget), *(as_count(a) for a in (*args, *kwargs.values()))])


def bounded_filter(name: str, function: Any) -> Any:
    """`function` (the filter `name`), refusing results over the limits before it runs."""
    if name in _CHEAP_FILTERS:
        return function
    estimate = _FILTERS.get(name, None if name in _LAZY_FILTERS else _generic)
    skip = 1 if getattr(function, "jinja_pass_arg", None) is not None else 0
    lazy = name in _LAZY_FILTERS
    what = f"the filter {name}"

    @functools.wraps(function)
    def bounded(*args: Any, **kwargs: Any) -> Any:
        budget = current()
        if estimate is not None and len(args) > skip:
            value, size = estimate(args[skip], args[skip + 1:], kwargs, budget)
            budget.build(size, what)
            if value is not args[skip]:  # an iterator read into a list
                args = (*args[:skip], value, *args[skip + 1:])
        result = function(*args, **kwargs)
        if lazy and isinstance(result, abc.Iterator):
            return budget.metered(result)
        return result

    return bounded
