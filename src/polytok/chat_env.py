"""The Jinja environment chat templates run in, as transformers 5.24.0 sets it up.

transformers ``utils/chat_template_utils.py`` ``_cached_compile_jinja_template``:
an ``ImmutableSandboxedEnvironment`` with ``trim_blocks`` and ``lstrip_blocks``,
the ``loopcontrols`` extension (``break``/``continue``) and a ``{% generation %}``
block tag (rendered as its body; transformers also records its span for the
assistant mask, which polytok does not offer); globals ``raise_exception``,
``strftime_now``, a ``dict`` whose only attribute is ``fromkeys``, a
``namespace`` that refuses underscore-prefixed attributes; and a ``tojson``
filter that is ``json.dumps`` with its options (``ensure_ascii=False``, no HTML
escaping — unlike Jinja's own ``tojson``).

Limits of the sandbox (Jinja 3.1.6, the version transformers also requires):
templates cannot reach attributes that start with ``_``, cannot call methods that
mutate lists, dicts or sets (``append``, ``update``, …; ``namespace`` attributes
are the way to keep state), and cannot make ranges longer than 100 000 items.

polytok adds bounds that transformers does not have (`Limits`, configurable with
`configure`), each a `ChatTemplateError` naming the limit: the rendered output
(``max_output_chars``, counted as it streams), the items all ``range`` loops of
one render may take together (``max_loop_iterations``; nested ranges multiply),
the wall time (``max_seconds``, checked at each range step and output chunk), and
the size of what one operation may build: ``*`` of a string or list, ``**``, a
``%`` format width, and any integer argument to a filter or method call
(``center(10**9)``, ``batch``, ``slice``) above ``max_output_chars``. Real chat
templates stay far below the defaults (the tests render every fixture template).
No template can read files or import: Jinja has no such statement and the
sandbox hides ``__class__``, ``__globals__`` and every other underscore name.
"""

from __future__ import annotations

import contextvars
import functools
import json
import re
import time
from dataclasses import dataclass, replace
from datetime import datetime
from types import TracebackType
from typing import Any

import jinja2
import jinja2.ext
import jinja2.nodes
import jinja2.parser
import jinja2.utils
from jinja2.sandbox import ImmutableSandboxedEnvironment

from .errors import ChatTemplateError

__all__ = ["compile_template", "literal_text", "render", "Limits", "configure", "limits"]


@dataclass(frozen=True)
class Limits:
    """Bounds on one render (see the module docstring)."""

    max_output_chars: int = 16_000_000
    max_loop_iterations: int = 2_000_000
    max_seconds: float = 30.0


_LIMITS = [Limits()]


def configure(**changes: Any) -> Limits:
    """Change the render limits for this process (``max_output_chars=``, ``max_loop_iterations=``,
    ``max_seconds=``); returns the previous `Limits`."""
    previous = _LIMITS[0]
    _LIMITS[0] = replace(previous, **changes)
    return previous


def limits() -> Limits:
    """The render limits in force."""
    return _LIMITS[0]


class _Budget:
    """What one render has used so far."""

    __slots__ = ("limits", "steps", "deadline")

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self.steps = 0
        self.deadline = time.monotonic() + limits.max_seconds

    def step(self) -> None:
        self.steps += 1
        if self.steps > self.limits.max_loop_iterations:
            raise jinja2.exceptions.SecurityError(
                f"the template looped more than max_loop_iterations ({self.limits.max_loop_iterations}) times")
        if not self.steps & 1023:
            self.check_time()

    def check_time(self) -> None:
        if time.monotonic() > self.deadline:
            raise jinja2.exceptions.SecurityError(f"the template ran longer than max_seconds ({self.limits.max_seconds})")


_BUDGET: contextvars.ContextVar[_Budget | None] = contextvars.ContextVar("polytok_chat_budget", default=None)
_FORMAT_WIDTH = re.compile(r"%[-#0 +]*(\d+)|%[-#0 +]*\d*\.(\d+)")


def _budget() -> Limits:
    budget = _BUDGET.get()
    return budget.limits if budget is not None else _LIMITS[0]


def _too_big(what: str) -> jinja2.exceptions.SecurityError:
    return jinja2.exceptions.SecurityError(f"{what} exceeds max_output_chars ({_budget().max_output_chars})")


def _check_ints(args: tuple[Any, ...], kwargs: dict[str, Any], name: str) -> None:
    cap = _budget().max_output_chars
    for value in (*args, *kwargs.values()):
        if isinstance(value, int) and not isinstance(value, bool) and abs(value) > cap:
            raise _too_big(f"the argument {value} to {name}")


def _bounded_range(*args: int) -> Any:
    """``range`` for templates: Jinja's sandbox size rule, and each item counted against the budget."""
    items = range(*args)
    if len(items) > jinja2.sandbox.MAX_RANGE:
        raise OverflowError(f"range too big (at most {jinja2.sandbox.MAX_RANGE} items)")
    budget = _BUDGET.get()
    for item in items:
        if budget is not None:
            budget.step()
        yield item


def _checked_filter(name: str, function: Any) -> Any:
    @functools.wraps(function)
    def checked(*args: Any, **kwargs: Any) -> Any:
        _check_ints(args[1:], kwargs, f"the filter {name}")
        return function(*args, **kwargs)

    return checked


class _BoundedEnvironment(ImmutableSandboxedEnvironment):
    """transformers' sandbox, with the size checks of `Limits` on operators and calls."""

    intercepted_binops = frozenset(["*", "**", "%"])

    def call_binop(self, context: Any, operator: str, left: Any, right: Any) -> Any:
        cap = _budget().max_output_chars
        if operator == "*":
            for seq, count in ((left, right), (right, left)):
                if isinstance(seq, (str, list, tuple)) and isinstance(count, int) and len(seq) * count > cap:
                    raise _too_big(f"a {type(seq).__name__} of {len(seq)} times {count}")
        elif operator == "**":
            if isinstance(left, int) and isinstance(right, int) and abs(left) > 1 and right * abs(left).bit_length() > 4 * cap:
                raise _too_big(f"{left} ** {right}")
        elif operator == "%" and isinstance(left, str):
            widths = [int(w) for m in _FORMAT_WIDTH.finditer(left) for w in m.groups() if w]
            if widths and max(widths) > cap:
                raise _too_big(f"the format width {max(widths)}")
        return super().call_binop(context, operator, left, right)

    def call(__self, __context: Any, __obj: Any, *args: Any, **kwargs: Any) -> Any:  # noqa: N805
        _check_ints(args, kwargs, "a call")
        return super().call(__context, __obj, *args, **kwargs)


class _GenerationBlock(jinja2.ext.Extension):
    """``{% generation %} … {% endgeneration %}``: the body, as it is."""

    tags = {"generation"}

    def parse(self, parser: jinja2.parser.Parser) -> list[jinja2.nodes.Node]:
        next(parser.stream)
        return parser.parse_statements(("name:endgeneration",), drop_needle=True)


def _raise_exception(message: str) -> None:
    raise jinja2.TemplateError(message)


def _tojson(value: Any, ensure_ascii: bool = False, indent: int | str | None = None,
            separators: tuple[str, str] | None = None, sort_keys: bool = False) -> str:
    return json.dumps(value, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)


def _strftime_now(format: str) -> str:
    return datetime.now().strftime(format)


class _Dict:
    """``dict(...)`` for templates, with ``dict.fromkeys`` and nothing else to reach through."""

    def __call__(self, *args: Any, **kwargs: Any) -> dict[Any, Any]:
        return dict(*args, **kwargs)

    def fromkeys(self, *args: Any, **kwargs: Any) -> dict[Any, Any]:
        return dict.fromkeys(*args, **kwargs)


def _check_attribute(name: object) -> None:
    if isinstance(name, str) and name.startswith("_"):
        raise jinja2.exceptions.SecurityError(
            f"chat templates cannot store underscore-prefixed attributes on a namespace ({name!r})")


class _Namespace(jinja2.utils.Namespace):
    """Jinja's ``namespace`` that refuses names starting with ``_``."""

    def __init__(*args: Any, **kwargs: Any) -> None:
        self, rest = args[0], args[1:]  # Jinja's own signature trick: namespace(self=…) stays possible
        attrs = dict(*rest, **kwargs)
        for name in attrs:
            _check_attribute(name)
        jinja2.utils.Namespace.__init__(self, attrs)

    def __setitem__(self, name: str, value: Any) -> None:
        _check_attribute(name)
        jinja2.utils.Namespace.__setitem__(self, name, value)


@functools.cache
def _environment() -> ImmutableSandboxedEnvironment:
    env = _BoundedEnvironment(trim_blocks=True, lstrip_blocks=True,
                              extensions=[_GenerationBlock, jinja2.ext.loopcontrols])
    env.filters["tojson"] = _tojson
    env.filters = {name: _checked_filter(name, f) for name, f in env.filters.items()}
    env.globals["range"] = _bounded_range
    env.globals["raise_exception"] = _raise_exception
    env.globals["strftime_now"] = _strftime_now
    env.globals["dict"] = _Dict()
    env.globals["namespace"] = _Namespace
    return env


@functools.lru_cache(maxsize=64)
def compile_template(source: str, name: str = "<given>") -> jinja2.Template:
    """The compiled template; a syntax error is a `ChatTemplateError` with its line."""
    try:
        return _environment().from_string(source)
    except jinja2.TemplateSyntaxError as exc:
        raise ChatTemplateError(f"syntax error: {exc.message}", template=name, line=exc.lineno) from None


@functools.lru_cache(maxsize=64)
def literal_text(source: str) -> str:
    """The template's own text and string constants, joined by NULs (no match spans two of them)."""
    tree = _environment().parse(source)
    found = {node.data for node in tree.find_all(jinja2.nodes.TemplateData)}
    found |= {node.value for node in tree.find_all(jinja2.nodes.Const) if isinstance(node.value, str)}
    return "\0".join(found)


def _template_line(tb: TracebackType | None) -> int | None:
    """The template line of the innermost template frame (Jinja rewrites tracebacks to show it)."""
    line = None
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == "<template>":
            line = tb.tb_lineno
        tb = tb.tb_next
    return line


def render(template: jinja2.Template, name: str, context: dict[str, Any]) -> str:
    """`template` rendered with `context`; whatever it raises becomes a `ChatTemplateError`."""
    budget = _Budget(_LIMITS[0])
    token = _BUDGET.set(budget)
    try:
        return _bounded_output(template, context, budget)
    except jinja2.TemplateError as exc:
        # raise_exception's message, an undefined value, a sandbox refusal …
        message = exc.message if exc.message is not None else str(exc)
        raise ChatTemplateError(message, template=name, line=_template_line(exc.__traceback__)) from None
    except (TypeError, ValueError, KeyError, IndexError, AttributeError, ZeroDivisionError,
            OverflowError, RecursionError) as exc:
        raise ChatTemplateError(f"{type(exc).__name__}: {exc}", template=name,
                                line=_template_line(exc.__traceback__)) from None
    finally:
        _BUDGET.reset(token)


def _bounded_output(template: jinja2.Template, context: dict[str, Any], budget: _Budget) -> str:
    """``template.render(**context)``, stopped once the output passes ``max_output_chars``."""
    parts, size, cap = [], 0, budget.limits.max_output_chars
    for chunk in template.generate(**context):
        size += len(chunk)
        if size > cap:
            raise jinja2.exceptions.SecurityError(f"the output exceeds max_output_chars ({cap})")
        parts.append(chunk)
        budget.check_time()
    return "".join(parts)
