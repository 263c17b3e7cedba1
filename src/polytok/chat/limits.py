"""Bounds on one chat-template render: the limits, the budget a render draws on, and the size of a value.

transformers 5.24.0 sets no such bounds (``utils/chat_template_utils.py``
``_cached_compile_jinja_template`` only uses Jinja's sandbox); they are polytok's own,
enforced by `polytok.chat.sandbox` and `polytok.chat.sizes`. Every bound is checked before
the work it guards is done, and each violation is a `LimitExceeded` (a Jinja
``SecurityError``) that names the limit:

- ``max_output_chars``: the rendered output, and the size of any one value an operation
  builds (characters of a string, items of a list or dict, decimal digits of an integer);
- ``max_built_chars``: all the values the operations of one render build together, so
  that a template cannot fill memory with many values each under ``max_output_chars``;
- ``max_loop_iterations``: the Python-level steps of one render together: the items of
  every ``for`` loop, of every filter or call that walks its input item by item, and of
  measuring a container;
- ``max_seconds``: the wall time, read every 256 steps and every 65 536 characters built.

`measure` bounds, without building it, the text ``str(value)`` (`STR`), ``repr(value)``
(`REPR`), ``json.dumps(value, …)`` (`JSON`), or the work of comparing or hashing the value
(`TREE`: its nodes, a value shared by several containers counted once per place, and
strings by 64-character blocks). A container reached twice is measured once per walk, so
a value that doubles itself in a loop is measured in time linear in its distinct parts.
"""

from __future__ import annotations

import contextlib
import contextvars
import json
import time
from collections import abc
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any

import jinja2
import jinja2.runtime
import jinja2.utils
import markupsafe

__all__ = ["Limits", "configure", "limits", "Budget", "LimitExceeded", "current", "using", "measure",
           "Namespace", "sized", "checked_tree", "checked_items", "STR", "REPR", "JSON", "TREE", "MAX_INT_DIGITS",
           "int_digits", "measure_nested"]

STR, REPR, JSON, TREE = "str", "repr", "json", "tree"
#: integers longer than this many decimal digits are refused whatever the limits (arithmetic on
#: them grows quadratic; Python itself prints none longer than 4300 digits by default)
MAX_INT_DIGITS = 100_000
_CHUNK = 1 << 16  # strings too long for a quick bound are measured exactly, this many characters at a time


@dataclass(frozen=True)
class Limits:
    """Bounds on one render (see the module docstring)."""

    max_output_chars: int = 16_000_000
    max_built_chars: int = 256_000_000
    max_loop_iterations: int = 2_000_000
    max_seconds: float = 30.0


_LIMITS = [Limits()]


def configure(**changes: Any) -> Limits:
    """Change the render limits for this process (the fields of `Limits`); returns the previous `Limits`."""
    previous = _LIMITS[0]
    _LIMITS[0] = replace(previous, **changes)
    return previous


def limits() -> Limits:
    """The render limits in force."""
    return _LIMITS[0]


class LimitExceeded(jinja2.exceptions.SecurityError):
    """A render went past one of its `Limits`; the message names the limit."""


class Budget:
    """What one render has used so far of its `Limits`."""

    __slots__ = ("limits", "steps", "built", "deadline")

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self.steps = 0
        self.built = 0
        self.deadline = time.monotonic() + limits.max_seconds

    def step(self, count: int = 1) -> None:
        """Count `count` Python-level steps; the clock is read every 256 of them."""
        before = self.steps
        self.steps = before + count
        if self.steps > self.limits.max_loop_iterations:
            raise LimitExceeded(f"the template took more than max_loop_iterations "
                                f"({self.limits.max_loop_iterations}) steps (loop items, items walked by filters)")
        if (self.steps ^ before) >> 8:
            self.check_time()

    def build(self, size: int, what: str) -> None:
        """Allow an operation to build a value of `size` (an upper bound), or refuse it."""
        if size > self.limits.max_output_chars:
            raise LimitExceeded(f"{what} would build a value of {size} characters or items, "
                                f"over max_output_chars ({self.limits.max_output_chars})")
        before = self.built
        self.built = before + size
        if self.built > self.limits.max_built_chars:
            raise LimitExceeded(f"{what}: the values built by the template exceed max_built_chars "
                                f"({self.limits.max_built_chars})")
        if (self.built ^ before) >> 16:  # the clock is read every 64K characters built
            self.check_time()

    def check_time(self) -> None:
        if time.monotonic() >= self.deadline:
            raise LimitExceeded(f"the template ran longer than max_seconds ({self.limits.max_seconds})")

    def metered(self, iterable: Any) -> Any:
        """The items of `iterable`, each counted as a step."""
        for item in iterable:
            self.step()
            yield item


_BUDGET: contextvars.ContextVar[Budget | None] = contextvars.ContextVar("polytok_chat_budget", default=None)


def current() -> Budget:
    """The budget of the render in progress (outside one, a fresh budget for this operation)."""
    budget = _BUDGET.get()
    return budget if budget is not None else Budget(_LIMITS[0])


@contextlib.contextmanager
def using(budget: Budget) -> Iterator[Budget]:
    """Make `budget` the current one inside the ``with`` block."""
    token = _BUDGET.set(budget)
    try:
        yield budget
    finally:
        _BUDGET.reset(token)


def _check_attribute(name: object) -> None:
    if isinstance(name, str) and name.startswith("_"):
        raise jinja2.exceptions.SecurityError(
            f"chat templates cannot store underscore-prefixed attributes on a namespace ({name!r})")


class Namespace(jinja2.utils.Namespace):
    """Jinja's ``namespace`` that refuses names starting with ``_`` (transformers' rule), and
    keeps its own view of its attributes so that `measure` can see into it."""

    def __init__(*args: Any, **kwargs: Any) -> None:
        self, rest = args[0], args[1:]  # Jinja's own signature trick: namespace(self=…) stays possible
        attrs = dict(*checked_items(rest, len(kwargs), current(), "namespace()"), **kwargs)
        for name in attrs:
            _check_attribute(name)
        jinja2.utils.Namespace.__init__(self, attrs)
        object.__setattr__(self, "_polytok_view", dict(attrs))

    def __setitem__(self, name: str, value: Any) -> None:
        _check_attribute(name)
        jinja2.utils.Namespace.__setitem__(self, name, value)
        object.__getattribute__(self, "_polytok_view")[name] = value

    @staticmethod
    def attributes(space: Namespace) -> dict[str, Any]:
        """The attributes of `space` (templates cannot reach this: a namespace answers every name itself)."""
        view: dict[str, Any] = object.__getattribute__(space, "_polytok_view")
        return view


def sized(value: Any) -> tuple[Any, int]:
    """(`value`, its length); an iterable without one is read into a list (its producer counts the items)."""
    try:
        return value, len(value)
    except TypeError:
        if not isinstance(value, abc.Iterable):
            return value, 0
        items = list(value)
        return items, len(items)


def checked_tree(value: Any, budget: Budget, what: str) -> Any:
    """`value`, once the work of comparing or hashing it is known to be within max_output_chars."""
    cap = budget.limits.max_output_chars
    if measure(value, TREE, cap, budget) > cap:
        raise LimitExceeded(f"{what} a value of more than max_output_chars ({cap}) parts")
    return value


def checked_items(args: tuple[Any, ...], extra: int, budget: Budget, what: str) -> tuple[Any, ...]:
    """The positional arguments of ``dict(…)``, ``namespace(…)`` or ``dict.fromkeys(…)``: each read into a list
    if it has no length and its keys measured for hashing (a dict's keys are hashed already), and the new
    dict's size (plus `extra` keyword entries) charged."""
    out, size = [], extra
    for arg in args:
        if not isinstance(arg, dict):
            arg = checked_tree(sized(arg)[0], budget, f"{what} hashes")
        size += len(arg) if isinstance(arg, abc.Sized) else 0
        out.append(arg)
    budget.build(size, what)
    return tuple(out)


class _Over(Exception):
    """Raised inside a walk once the size passes its limit."""


def int_digits(value: int) -> int:
    """An upper bound of the decimal digits (and sign) of `value`."""
    return value.bit_length() * 30103 // 100000 + 2


def measure(value: Any, mode: str, limit: int, budget: Budget, *, ensure_ascii: bool = False,
            indent: int | str | None = None, separators: tuple[str, str] | None = None) -> int:
    """An upper bound of the size of `value` in `mode` (see the module docstring), or ``limit + 1`` once
    it passes `limit`. The JSON options are ``json.dumps``'s."""
    if type(value) is str and mode in (STR, TREE):
        return len(value) if mode == STR else 1 + len(value) // 64
    walk = _Walk(mode, limit, budget, ensure_ascii, indent, separators)
    try:
        return walk.size(value, 0, limit)
    except _Over:
        return limit + 1


def measure_nested(value: Any, limit: int, budget: Budget) -> tuple[int, int]:
    """(`measure` of ``repr(value)``, the deepest nesting of `value`)."""
    walk = _Walk(REPR, limit, budget, False, None, None)
    try:
        return walk.size(value, 0, limit), walk.depth
    except _Over:
        return limit + 1, walk.depth


class _Walk:
    """One measuring walk; see `measure`."""

    def __init__(self, mode: str, limit: int, budget: Budget, ensure_ascii: bool, indent: int | str | None,
                 separators: tuple[str, str] | None) -> None:
        self.mode, self.limit, self.budget, self.ensure_ascii = mode, limit, budget, ensure_ascii
        self.indent = " " * indent if isinstance(indent, int) else indent
        if separators is None:
            separators = (", ", ": ") if indent is None or mode != JSON else (",", ": ")
        self.item_sep, self.key_sep = len(separators[0]), len(separators[1])
        self.memo: dict[int, int] = {}
        self.depth = 0  # the deepest nesting seen
        self.per_char = 12 if mode == JSON and ensure_ascii else 6 if mode == JSON else 10
        self.fixed: dict[type, int] = {bool: 5, type(None): 5, float: 24} if mode != TREE else \
            {bool: 1, type(None): 1, float: 1, int: 1}

    def size(self, value: Any, depth: int, room: int) -> int:
        kind = type(value)
        if kind is not dict and kind is not list:
            if isinstance(value, str):
                return self.text(value, depth, room)
            fixed = self.fixed.get(kind)
            if fixed is not None:
                return fixed
            if isinstance(value, (int, float)):  # bool, int, float and their subclasses
                return 1 if self.mode == TREE else int_digits(int(value)) if isinstance(value, int) else 24
            if isinstance(value, jinja2.runtime.Undefined):
                return 9 if self.mode == REPR or depth else 1
            if isinstance(value, (bytes, bytearray)):
                return 1 + len(value) // 64 if self.mode == TREE else 4 * len(value) + 3
        key = id(value)
        if key in self.memo:
            return self.memo[key]
        self.memo[key] = 5  # a container reached again inside itself prints as "[...]"
        found = self.container(value, depth, room)
        self.memo[key] = found
        return found

    def text(self, value: str, depth: int, room: int) -> int:
        n = len(value)
        if self.mode == TREE:
            return 1 + n // 64
        if self.mode == STR and not depth:
            return n
        extra = 10 if isinstance(value, markupsafe.Markup) and self.mode != JSON else 0
        if self.mode == JSON:
            quick = (12 if self.ensure_ascii else 6) * n + 2
        else:
            quick = (4 if value.isascii() else 10) * n + 2
        if quick + extra <= room:
            return quick + extra
        self.budget.step(n // _CHUNK + 1)
        if self.mode == JSON:
            return 2 + extra + sum(len(json.dumps(value[i:i + _CHUNK], ensure_ascii=self.ensure_ascii)) - 2
                                   for i in range(0, n, _CHUNK))
        # repr picks its quote for the whole string: a chunk may escape one quote less
        return 2 + extra + value.count("'") + sum(len(repr(value[i:i + _CHUNK])) - 2 for i in range(0, n, _CHUNK))

    def container(self, value: Any, depth: int, room: int) -> int:
        depth += 1
        self.depth = max(self.depth, depth)
        if type(value) is dict:
            return 2 + self.items(value.items(), depth, room, pairs=True)
        if isinstance(value, Namespace):
            if self.mode == TREE:  # a namespace compares and hashes by identity
                return 1
            return 12 + self.items(Namespace.attributes(value).items(), depth, room, pairs=True)
        if isinstance(value, abc.Mapping):
            return 2 + self.items(value.items(), depth, room, pairs=True)
        if isinstance(value, abc.ItemsView):  # dict_items([(k, v), …]): each pair is a tuple
            return 14 + self.items(value, depth, room, pairs=True, pair_extra=4)
        if isinstance(value, (abc.KeysView, abc.ValuesView)):
            return 14 + self.items(value, depth, room, pairs=False)
        if isinstance(value, (list, tuple, set, frozenset)):
            named = 40 if isinstance(value, tuple) and type(value) is not tuple else 0
            return 12 + named + self.items(value, depth, room, pairs=False)
        if isinstance(value, jinja2.runtime.Macro):
            return 20 + len(value.name)
        return 200  # generators, functions, loop and cycler objects: a fixed-size repr

    def items(self, items: Any, depth: int, room: int, pairs: bool, pair_extra: int = 0) -> int:
        """The entries of a container: each entry, its separator and (JSON with indent) its new line."""
        newline = self.mode == JSON and self.indent is not None
        per_item = self.item_sep + (1 + len(self.indent or "") * depth if newline else 0)
        total = per_item
        if not pairs and isinstance(items, (list, tuple)) and _all_str(items) and self.mode != JSON:
            quick = len(items) * (per_item + 2) + (1 if self.mode == TREE else 10) * sum(map(len, items))
            if quick <= room:
                return total + quick
        self.budget.step(len(items))
        for item in items:
            if pairs:
                key, item = item
                quoted = 2 if self.mode == JSON and not isinstance(key, str) else 0
                total += pair_extra + quoted + self.key_sep + self.leaf(key, depth, room - total)
            total += per_item + self.leaf(item, depth, room - total)
            if total > room:
                raise _Over
        return total

    def leaf(self, value: Any, depth: int, room: int) -> int:
        """`size`, with a quick answer for the strings and numbers most containers hold."""
        kind = type(value)
        if kind is str:
            quick = self.per_char * len(value) + 2
            return quick if quick <= room and self.mode != TREE else self.text(value, depth, room)
        fixed = self.fixed.get(kind)
        return fixed if fixed is not None else self.size(value, depth, room)


def _all_str(items: list[Any] | tuple[Any, ...]) -> bool:
    return not items or set(map(type, items)) == {str}
