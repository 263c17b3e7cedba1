"""The Jinja environment chat templates run in, as transformers 5.24.0 sets it up.

transformers ``utils/chat_template_utils.py`` ``_cached_compile_jinja_template``:
an ``ImmutableSandboxedEnvironment`` with ``trim_blocks`` and ``lstrip_blocks``,
the ``loopcontrols`` extension (``break``/``continue``) and a ``{% generation %}``
block tag (a call block: its body, its span recorded for the assistant mask,
`render`'s ``generation_spans``); globals ``raise_exception``,
``strftime_now``, a ``dict`` whose only attribute is ``fromkeys``, a
``namespace`` that refuses underscore-prefixed attributes; and a ``tojson``
filter that is ``json.dumps`` with its options (``ensure_ascii=False``, no HTML
escaping — unlike Jinja's own ``tojson``).

Limits of the sandbox (Jinja 3.1.6, the version transformers also requires):
templates cannot reach attributes that start with ``_``, cannot call methods that
mutate lists, dicts or sets (``append``, ``update``, …; ``namespace`` attributes
are the way to keep state), and cannot make ranges longer than 100 000 items.

polytok adds bounds that transformers does not have (`polytok.chat.limits.Limits`,
set with `configure`; each violation a `ChatTemplateError` naming the limit and the
template line). They hold whatever construct a template uses, because the environment
sees every operation before it runs: a code generator (a subclass of Jinja's, set as
``code_generator_class``) counts every ``for`` loop's items, and hands every ``~``,
comparison, dict-literal key and slice to the environment; the sandbox's own hooks
(``call_binop`` for ``+ * // % **``, ``call``, ``getitem``), ``finalize`` (before a value
is printed), ``concat`` (the output of a macro, block or ``{% set %}`` block) and a
wrapper around every filter (`polytok.chat.filters`) estimate the size of each result
from its arguments (`polytok.chat.sizes`) and refuse it before it is built. A
``MemoryError`` or ``RecursionError`` that still happens is a ``ChatTemplateError`` too.
Every fixture template renders byte for byte as transformers renders it (tests/chat/).
No template can read files or import: Jinja has no such statement and the
sandbox hides ``__class__``, ``__globals__`` and every other underscore name.
"""

from __future__ import annotations

import contextvars
import functools
import json
from datetime import datetime
from types import TracebackType
from typing import Any

import jinja2
import jinja2.compiler
import jinja2.ext
import jinja2.nodes
import jinja2.parser
import jinja2.runtime
import jinja2.utils
import markupsafe
from jinja2.sandbox import ImmutableSandboxedEnvironment

from ..errors import ChatTemplateError
from . import filters as chat_filters
from . import sizes as chat_sizes
from .limits import (
    STR,
    Budget,
    LimitExceeded,
    Limits,
    Namespace,
    checked_items,
    checked_tree,
    configure,
    current,
    limits,
    measure,
    using,
)

__all__ = ["compile_template", "literal_text", "render", "Limits", "configure", "limits"]


class _CodeGenerator(jinja2.compiler.CodeGenerator):
    """Jinja's code generator, with every loop's items counted and every ``~``, comparison and dict key
    measured by the environment (Jinja 3.1.6 ``compiler.py``: ``visit_For``, ``visit_Concat``,
    ``visit_Compare``, ``visit_Dict`` write the same code around these calls)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.around: dict[int, tuple[jinja2.nodes.Node, str]] = {}

    def call_around(self, node: jinja2.nodes.Node, function: str) -> None:
        """Write `node` as ``environment.<function>(<node>)`` when it is visited."""
        if not isinstance(node, jinja2.nodes.Const):
            self.around[id(node)] = (node, function)

    def visit(self, node: jinja2.nodes.Node, *args: Any, **kwargs: Any) -> Any:
        entry = self.around.get(id(node))
        if entry is None or entry[0] is not node:
            return super().visit(node, *args, **kwargs)
        self.write(f"environment.{entry[1]}(")
        super().visit(node, *args, **kwargs)
        self.write(")")

    def visit_For(self, node: jinja2.nodes.For, frame: jinja2.compiler.Frame) -> None:
        self.call_around(node.iter, "metered_loop")
        super().visit_For(node, frame)

    @jinja2.compiler.optimizeconst
    def visit_Compare(self, node: jinja2.nodes.Compare, frame: jinja2.compiler.Frame) -> None:
        # a < b < c: each operand is kept in a temporary so that its neighbour's check sees it once
        left = self.temporary_identifier()
        self.write(f"(({left} := ")
        self.visit(node.expr, frame)
        self.write(")")
        for op in node.ops:
            right = self.temporary_identifier()
            self.write(f" {jinja2.compiler.operators[op.op]} environment.compared({left}, ({right} := ")
            self.visit(op.expr, frame)
            self.write("))")
            left = right
        self.write(")")

    def visit_Getitem(self, node: jinja2.nodes.Getitem, frame: jinja2.compiler.Frame) -> None:
        if isinstance(node.arg, jinja2.nodes.Slice):  # Jinja writes a slice as Python's obj[a:b:c]
            self.call_around(node.node, "sliceable")
        super().visit_Getitem(node, frame)

    def visit_Dict(self, node: jinja2.nodes.Dict, frame: jinja2.compiler.Frame) -> None:
        for pair in node.items:
            self.call_around(pair.key, "hashed")
        super().visit_Dict(node, frame)

    @jinja2.compiler.optimizeconst
    def visit_Concat(self, node: jinja2.nodes.Concat, frame: jinja2.compiler.Frame) -> None:
        if frame.eval_ctx.volatile:
            join = "(markup_join if context.eval_ctx.volatile else str_join)"
        else:
            join = "markup_join" if frame.eval_ctx.autoescape else "str_join"
        self.write(f"environment.metered_join({join}, (")
        for part in node.nodes:
            self.visit(part, frame)
            self.write(", ")
        self.write("))")


class _BoundedEnvironment(ImmutableSandboxedEnvironment):
    """transformers' sandbox, with every operation checked against the render's `Limits`."""

    code_generator_class = _CodeGenerator
    # "-" and "/" cannot make a value longer than their operands; "//" is quadratic on long integers
    intercepted_binops = frozenset(["+", "*", "//", "%", "**"])

    def call_binop(self, context: Any, operator: str, left: Any, right: Any) -> Any:
        budget = current()
        budget.build(chat_sizes.binop_size(operator, left, right, budget), _OPERATORS[operator])
        return self.binop_table[operator](left, right)

    def call(__self, __context: Any, __obj: Any, *args: Any, **kwargs: Any) -> Any:
        args = chat_sizes.before_call(__obj, args, kwargs, current())
        return super().call(__context, __obj, *args, **kwargs)

    def getitem(self, obj: Any, argument: Any) -> Any:
        if type(argument) is str:
            pass
        elif isinstance(argument, slice):  # a constant slice Jinja folds while compiling
            current().build(chat_sizes.slice_size(obj, argument), "a slice")
        elif isinstance(argument, tuple):
            checked_tree(argument, current(), "a lookup hashing")
        return super().getitem(obj, argument)

    def concat(self, parts: Any) -> str:
        """``"".join(parts)`` for the output of a macro, a block or a ``{% set %}`` block."""
        if type(parts) is not list:
            parts = list(parts)
        current().build(sum(map(len, parts)), "a macro or block's output")
        return "".join(parts)

    def sliceable(self, obj: Any) -> Any:
        return _Sliceable(obj)

    def metered_loop(self, iterable: Any) -> Any:
        return _Metered(iterable, current())

    def metered_join(self, join: Any, parts: tuple[Any, ...]) -> Any:
        """``a ~ b ~ …``: `join` (Jinja's ``str_join`` or ``markup_join``) once the parts' text is known."""
        budget = current()
        size = sum(len(p) if type(p) is str else measure(p, STR, budget.limits.max_output_chars, budget)
                   for p in parts)
        budget.build(size if join is jinja2.runtime.str_join else 5 * size, "the operator ~")
        return join(parts)

    def compared(self, left: Any, right: Any) -> Any:
        """`right`, once comparing it with `left` is known to be bounded work: a comparison of two containers
        walks both (``==``, ``<``, ``in``); with a string, number or undefined on either side it does not."""
        if type(left) in _SCALARS or type(right) in _SCALARS:
            return right
        budget = current()
        checked_tree(left, budget, "comparing")
        return checked_tree(right, budget, "comparing")

    def hashed(self, key: Any) -> Any:
        """`key`, once hashing it is known to be bounded work (only tuples hash their items)."""
        return checked_tree(key, current(), "hashing") if isinstance(key, tuple) else key


_OPERATORS = {op: f"the operator {op}" for op in _BoundedEnvironment.intercepted_binops}
_SCALARS = frozenset([str, int, float, bool, type(None), jinja2.runtime.Undefined, markupsafe.Markup])


class _Sliceable:
    """``obj`` about to be sliced: the slice's length is charged before it is taken."""

    __slots__ = ("obj",)

    def __init__(self, obj: Any) -> None:
        self.obj = obj

    def __getitem__(self, argument: Any) -> Any:
        if isinstance(argument, slice):
            current().build(chat_sizes.slice_size(self.obj, argument), "a slice")
        return self.obj[argument]


class _Metered:
    """A loop's iterable; its length is the iterable's own (``loop.length``, ``loop.last``)."""

    __slots__ = ("iterable", "budget")

    def __init__(self, iterable: Any, budget: Budget) -> None:
        self.iterable, self.budget = iterable, budget

    def __iter__(self) -> Any:
        return self.budget.metered(self.iterable)

    def __len__(self) -> int:
        return len(self.iterable)


def _finalize(value: Any) -> Any:
    """What ``{{ value }}`` shows: refused before ``str(value)`` if that text would pass the limits."""
    if type(value) is not str:
        budget = current()
        budget.build(measure(value, STR, budget.limits.max_output_chars, budget), "printing a value")
    return value


class _Tracker:
    """Where a render stands: the characters already written, and the generation blocks' spans."""

    __slots__ = ("written", "spans")

    def __init__(self, spans: list[tuple[int, int]] | None) -> None:
        self.written, self.spans = 0, spans


_TRACKER: contextvars.ContextVar[_Tracker | None] = contextvars.ContextVar("polytok_chat_tracker", default=None)


class _GenerationBlock(jinja2.ext.Extension):
    """``{% generation %} … {% endgeneration %}``: the body, rendered as a call block (so ``{% set %}``
    inside it stays inside, as in transformers), its span recorded when the render asks for spans.

    The span starts at the number of characters the render had written when the block's body
    was rendered, and is as long as the body (transformers' ``AssistantTracker``): a block inside a
    macro or a ``{% set %}`` block is placed where that output began, not where it ends up."""

    tags = {"generation"}

    def parse(self, parser: jinja2.parser.Parser) -> jinja2.nodes.Node:
        lineno = next(parser.stream).lineno
        body = parser.parse_statements(("name:endgeneration",), drop_needle=True)
        return jinja2.nodes.CallBlock(self.call_method("_generated"), [], [], body).set_lineno(lineno)

    def _generated(self, caller: Any) -> str:
        text = caller()
        tracker = _TRACKER.get()
        if tracker is not None and tracker.spans is not None:
            tracker.spans.append((tracker.written, tracker.written + len(text)))
        return str(text)


def _raise_exception(message: str) -> None:
    raise jinja2.TemplateError(message)


def _tojson(value: Any, ensure_ascii: bool = False, indent: int | str | None = None,
            separators: tuple[str, str] | None = None, sort_keys: bool = False) -> str:
    return json.dumps(value, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)


def _strftime_now(format: str) -> str:
    if isinstance(format, str):
        current().build(16 * len(format), "strftime_now")  # no directive writes more than 16 characters per character
    return datetime.now().strftime(format)


@functools.wraps(jinja2.utils.generate_lorem_ipsum)
def _lipsum(*args: Any, **kwargs: Any) -> str:
    """Jinja's ``lipsum(n, html, min, max)``: n paragraphs of at most max words, each word under 18 characters."""
    n, low, high = (chat_sizes.int_argument(args, kwargs, i, name, default)
                    for i, name, default in ((0, "n", 5), (2, "min", 20), (3, "max", 100)))
    words = max(n, 0) * max(low, high, 0)
    budget = current()
    budget.step(words)
    budget.build(18 * words + 20 * max(n, 0), "lipsum")
    return jinja2.utils.generate_lorem_ipsum(*args, **kwargs)


class _Dict:
    """``dict(...)`` for templates, with ``dict.fromkeys`` and nothing else to reach through."""

    def __call__(self, *args: Any, **kwargs: Any) -> dict[Any, Any]:
        return dict(*checked_items(args, len(kwargs), current(), "dict()"), **kwargs)

    def fromkeys(self, *args: Any, **kwargs: Any) -> dict[Any, Any]:
        keys = checked_items(args[:1], 0, current(), "dict.fromkeys")
        return dict.fromkeys(*keys, *args[1:], **kwargs)


_COMPARING_TESTS = ("==", "eq", "equalto", "!=", "ne", "<", "lt", "lessthan", "<=", "le", ">", "gt", "greaterthan",
                    ">=", "ge", "in")


def _compared_test(env: _BoundedEnvironment, test: Any) -> Any:
    """A test that compares its value with its argument (``x is eq(y)``, ``select('in', seq)``), checked as
    the operator is."""
    @functools.wraps(test)
    def compared(value: Any, other: Any) -> Any:
        return test(value, env.compared(value, other))

    return compared


@functools.cache
def _environment() -> ImmutableSandboxedEnvironment:
    env = _BoundedEnvironment(trim_blocks=True, lstrip_blocks=True, finalize=_finalize,
                              extensions=[_GenerationBlock, jinja2.ext.loopcontrols])
    env.filters["tojson"] = _tojson
    env.filters = {name: chat_filters.bounded_filter(name, f) for name, f in env.filters.items()}
    for name in _COMPARING_TESTS:
        env.tests[name] = _compared_test(env, env.tests[name])
    env.globals["raise_exception"] = _raise_exception
    env.globals["strftime_now"] = _strftime_now
    env.globals["dict"] = _Dict()
    env.globals["namespace"] = Namespace
    env.globals["lipsum"] = _lipsum
    return env


@functools.lru_cache(maxsize=64)
def compile_template(source: str, name: str = "<given>") -> jinja2.Template:
    """The compiled template; a syntax error is a `ChatTemplateError` with its line."""
    try:
        with using(Budget(limits())):  # Jinja folds constant filters while compiling
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


def render(template: jinja2.Template, name: str, context: dict[str, Any],
           generation_spans: list[tuple[int, int]] | None = None) -> str:
    """`template` rendered with `context`; whatever it raises becomes a `ChatTemplateError`.

    `generation_spans`, when given, receives the ``(start, end)`` character span of each
    ``{% generation %}`` block as it is rendered (see `_GenerationBlock`)."""
    budget = Budget(limits())
    tracker = _Tracker(generation_spans)
    reset = _TRACKER.set(tracker)
    try:
        with using(budget):
            return _bounded_output(template, context, budget, tracker)
    except jinja2.TemplateError as exc:
        # raise_exception's message, an undefined value, a sandbox refusal …
        message = exc.message if exc.message is not None else str(exc)
        raise ChatTemplateError(message, template=name, line=_template_line(exc.__traceback__)) from None
    except (TypeError, ValueError, KeyError, IndexError, AttributeError, ZeroDivisionError,
            OverflowError, RecursionError, MemoryError, AssertionError) as exc:
        raise ChatTemplateError(f"{type(exc).__name__}: {exc}", template=name,
                                line=_template_line(exc.__traceback__)) from None
    finally:
        _TRACKER.reset(reset)


def _bounded_output(template: jinja2.Template, context: dict[str, Any], budget: Budget, tracker: _Tracker) -> str:
    """``template.render(**context)``, stopped once the output passes ``max_output_chars``."""
    parts, cap = [], budget.limits.max_output_chars
    for chunk in template.generate(**context):
        tracker.written += len(chunk)
        if tracker.written > cap:
            raise LimitExceeded(f"the output exceeds max_output_chars ({cap})")
        parts.append(chunk)
        budget.check_time()
    return "".join(parts)
