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
A template can still loop for a long time or build large strings: render
templates you trust, or run polytok under a time and memory limit.
"""

from __future__ import annotations

import functools
import json
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

__all__ = ["compile_template", "literal_text", "render"]


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
    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                        extensions=[_GenerationBlock, jinja2.ext.loopcontrols])
    env.filters["tojson"] = _tojson
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
    try:
        return template.render(**context)
    except jinja2.TemplateError as exc:
        # raise_exception's message, an undefined value, a sandbox refusal …
        message = exc.message if exc.message is not None else str(exc)
        raise ChatTemplateError(message, template=name, line=_template_line(exc.__traceback__)) from None
    except (TypeError, ValueError, KeyError, IndexError, AttributeError, ZeroDivisionError,
            OverflowError, RecursionError) as exc:
        raise ChatTemplateError(f"{type(exc).__name__}: {exc}", template=name,
                                line=_template_line(exc.__traceback__)) from None
