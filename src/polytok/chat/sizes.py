"""What an operation of a chat template will build, bounded from its arguments before it runs.

Each function reads the arguments of one Jinja operation (a binary operator of Jinja 3.1.6's
sandbox, a method of ``str``/``bytes``/``list``/``dict``/``int`` called from a template, a
``%`` or ``str.format`` format) and returns an upper bound of the size of its result, in the
units of `polytok.chat.limits`: characters of a string, items of a container, decimal digits
of an integer. The bounds follow what each operation does: ``+`` adds lengths, ``*``
multiplies them, integer ``*`` adds digits and ``**`` multiplies them; ``replace`` inserts
``new`` once per occurrence of ``old`` (``len(s) + 1`` times for an empty ``old``);
``center``, ``ljust``, ``rjust``, ``zfill`` pad to their width, ``expandtabs`` widens each
tab to ``tabsize``, ``translate`` replaces each character by at most its longest
replacement; and a format field (``%`` directive or ``{}`` field, as ``printf`` and
``string.Formatter`` read them) is at most its width plus its precision plus the widest
value it may show (``repr`` for ``r``, ten times that for ``a``). The sandbox formats
``str.format`` in Python (``SandboxedFormatter``), so each field is also a step.
"""

from __future__ import annotations

import re
import string
from collections import abc
from typing import Any

import jinja2.runtime
import markupsafe

from .limits import MAX_INT_DIGITS, REPR, STR, Budget, LimitExceeded, checked_tree, measure, sized

__all__ = ["binop_size", "percent_size", "format_size", "before_call", "slice_size", "replaced_size", "joined_size",
           "argument", "as_count", "text_size", "int_argument"]

_PERCENT = re.compile(r"%(?:\([^)]*\))?[-#0 +]*(\*|\d+)?(?:\.(\*|\d+))?[hlL]?(.)", re.S)
_NUMBERS = re.compile(r"\d+")
_FIELD = 350  # a number's text beyond its width and precision ('%f' of 1e308: 309 digits)
_SEQUENCES = (str, bytes, list, tuple)


def as_count(value: Any) -> int:
    """`value` as a count, if it is an integer (anything else makes the operation fail on its own)."""
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def argument(args: tuple[Any, ...], kwargs: dict[str, Any], index: int, name: str, default: Any) -> Any:
    return args[index] if len(args) > index else kwargs.get(name, default)


def int_argument(args: tuple[Any, ...], kwargs: dict[str, Any], index: int, name: str, default: int) -> int:
    """The argument at `index` or named `name`, as a count (0 if it is not an integer)."""
    return as_count(argument(args, kwargs, index, name, default))


def text_size(value: Any, budget: Budget) -> int:
    """An upper bound of ``len(str(value))``."""
    return len(value) if type(value) is str else measure(value, STR, budget.limits.max_output_chars, budget)


# -- operators -------------------------------------------------------------------------------


def _int_result(operator: str, bits: int) -> int:
    digits = bits * 30103 // 100000 + 2
    if digits > MAX_INT_DIGITS:
        raise LimitExceeded(f"the operator {operator} would make an integer of about {digits} digits "
                            f"(integers are limited to {MAX_INT_DIGITS})")
    return digits


def binop_size(operator: str, left: Any, right: Any, budget: Budget) -> int:
    """The size of ``left <operator> right`` (Jinja's intercepted binary operators)."""
    if type(left) is str and type(right) is str and operator == "+":
        return len(left) + len(right)
    if isinstance(left, int) and isinstance(right, int):
        bits = max(left.bit_length(), right.bit_length()) + 1
        if operator == "*":
            bits = left.bit_length() + right.bit_length()
        elif operator == "**":
            bits = abs(left).bit_length() * right if right > 0 and abs(left) > 1 else 1
        return _int_result(operator, bits)
    if operator == "+" and isinstance(left, _SEQUENCES) and isinstance(right, _SEQUENCES):
        return len(left) + len(right)
    if operator == "*":
        for seq, count in ((left, right), (right, left)):
            if isinstance(seq, _SEQUENCES) and isinstance(count, int):
                return len(seq) * max(count, 0)
    if operator == "%" and isinstance(left, (str, bytes)):
        return percent_size(left, right if isinstance(right, tuple) else (right,), budget)
    return 0


def _widest(values: Any, conversion: str | None, budget: Budget) -> int:
    """The widest text one of `values` (or any part of one) may show in a field converted with
    ``str`` (`conversion` None or ``s``), ``repr`` (``r``) or ``ascii`` (``a``)."""
    cap, widest = budget.limits.max_output_chars, 0
    mode = REPR if conversion in ("r", "a") else STR
    for value in values:
        widest = max(widest, measure(value, mode, cap, budget))
    return 10 * widest if conversion == "a" else widest


def _star(values: Any) -> int:
    """The largest integer among `values`: a ``*`` or nested width takes one of them."""
    return max((abs(v) for v in values if isinstance(v, int) and not isinstance(v, bool)), default=0)


def percent_size(fmt: str | bytes, values: tuple[Any, ...], budget: Budget) -> int:
    """The size of ``fmt % values`` (``%`` formatting and the ``format`` filter)."""
    text = fmt.decode("latin-1") if isinstance(fmt, bytes) else fmt
    fields = [m.groups() for m in _PERCENT.finditer(text)]
    if not fields:
        return len(text)
    widest = {c: _widest(values, c, budget) for c in {"r", "a", "s"} & {f[2] for f in fields}}
    plain, star, total = _widest(values, None, budget), _star(values), len(text)
    for width, precision, conversion in fields:
        if conversion != "%":
            total += _FIELD + widest.get(conversion, plain)
            total += sum(star if w == "*" else _number(w) for w in (width, precision) if w)
    return total


def _number(digits: str) -> int:
    return int(digits) if len(digits) < 12 else 10**12


def format_size(fmt: str, args: tuple[Any, ...], kwargs: dict[str, Any], budget: Budget) -> int:
    """The size of ``fmt.format(*args, **kwargs)``; each field is a Python-level step of the sandbox's formatter."""
    values = (*args, *kwargs.values())
    widest: dict[str | None, int] = {}
    total = 0
    for literal, field, spec, conversion in string.Formatter().parse(fmt):
        total += len(literal)
        if field is None:
            continue
        budget.step()
        if conversion not in widest:
            widest[conversion] = _widest(values, conversion, budget)
        spec = spec or ""
        total += _FIELD + 2 * widest[conversion] + sum(map(_number, _NUMBERS.findall(spec)))
        total += _star(values) if "{" in spec else 0
        if total > budget.limits.max_output_chars:
            break
    return total * (5 if isinstance(fmt, markupsafe.Markup) else 1)


def slice_size(obj: Any, argument: slice) -> int:
    """The length of ``obj[argument]``."""
    try:
        return len(range(*argument.indices(len(obj))))
    except (TypeError, ValueError):
        return 0


def replaced_size(value: Any, old: Any, new: Any, count: Any, budget: Budget) -> int:
    """The size of ``str(value).replace(str(old), str(new), count)``."""
    size = text_size(value, budget)
    if isinstance(value, str) and isinstance(old, str):  # noqa: SIM114 (each branch narrows the types)
        hits = value.count(old)
    elif isinstance(value, bytes) and isinstance(old, bytes):
        hits = value.count(old)
    else:
        hits = size + 1
    if isinstance(count, int) and count >= 0:
        hits = min(hits, count)
    return size + hits * max(text_size(new, budget) - (len(old) if isinstance(old, (str, bytes)) else 0), 0)


def joined_size(items: Any, budget: Budget) -> int:
    """The length of ``"".join(map(str, items))``."""
    if isinstance(items, (str, bytes)):
        return len(items)
    if isinstance(items, (list, tuple)) and set(map(type, items)) <= {str}:
        return sum(map(len, items))
    cap, total = budget.limits.max_output_chars, 0
    for item in items:
        budget.step()
        total += measure(item, STR, cap - total, budget)
        if total > cap:
            break
    return total


# -- method calls ----------------------------------------------------------------------------

_READ_ONLY = {"count", "find", "rfind", "index", "rindex", "startswith", "endswith", "isalnum", "isalpha",
              "isascii", "isdecimal", "isdigit", "isidentifier", "islower", "isnumeric", "isprintable",
              "isspace", "istitle", "isupper", "get", "keys", "values", "items", "bit_length"}
_CASE = {"upper", "lower", "title", "capitalize", "swapcase", "casefold"}


def before_call(obj: Any, args: tuple[Any, ...], kwargs: dict[str, Any], budget: Budget) -> tuple[Any, ...]:
    """Check a call the template makes (a method, a recursive ``loop(…)``); returns its arguments, with an
    iterable that has no length read into a list or counted."""
    if type(obj) is jinja2.runtime.Macro:  # its output is checked as it is joined
        return args
    if isinstance(obj, jinja2.runtime.LoopContext) and args:
        return (budget.metered(args[0]), *args[1:])  # a recursive loop's next level
    inner = getattr(obj, "__wrapped__", obj)  # the sandbox wraps str.format
    owner, name = getattr(inner, "__self__", None), getattr(inner, "__name__", "")
    if isinstance(owner, (str, bytes)):
        args, size = _text_method(owner, name, args, kwargs, budget)
    elif isinstance(owner, (list, tuple)) and name in ("count", "index"):
        size = 0
        checked_tree(owner, budget, f"the method {name} compares")
    elif isinstance(owner, jinja2.runtime.LoopContext) and name == "changed":
        size = 0
        checked_tree(args, budget, "loop.changed compares")
    elif owner is dict and name == "fromkeys" and args:
        first, n = sized(args[0])
        args, size = (first, *args[1:]), n
        checked_tree(first, budget, "dict.fromkeys hashes")
    elif isinstance(owner, abc.Mapping) and name == "get" and args:
        checked_tree(args[0], budget, "a dict lookup hashes")
        return args
    elif isinstance(owner, int) and name == "to_bytes":
        size = 4 * as_count(argument(args, kwargs, 0, "length", 1))
    elif owner is int and name == "from_bytes" and args:
        size = _int_result("int.from_bytes", 8 * len(args[0]) if isinstance(args[0], abc.Sized) else 0)
    elif name in _READ_ONLY or owner is None:
        return args
    else:
        size = len(owner) if isinstance(owner, abc.Sized) else 0
    budget.build(size, f"the method {name}")
    return args


def _text_method(text: str | bytes, name: str, args: tuple[Any, ...], kwargs: dict[str, Any],
                 budget: Budget) -> tuple[tuple[Any, ...], int]:
    n = len(text)
    if name in ("center", "ljust", "rjust", "zfill"):
        return args, max(n, as_count(argument(args, kwargs, 0, "width", 0)))
    if name == "expandtabs":
        tab = "\t" if isinstance(text, str) else b"\t"
        tabs = text.count(tab)  # type: ignore[arg-type]
        return args, n + tabs * max(as_count(argument(args, kwargs, 0, "tabsize", 8)), 0)
    if name == "replace":
        return args, replaced_size(text, argument(args, kwargs, 0, "old", ""), argument(args, kwargs, 1, "new", ""),
                                   argument(args, kwargs, 2, "count", -1), budget)
    if name == "join" and args:
        items, count = sized(args[0])
        return (items, *args[1:]), joined_size(items, budget) + count * n
    if name in ("format", "format_map") and isinstance(text, str):
        if name == "format_map":
            mapping = args[0] if args and isinstance(args[0], abc.Mapping) else {}
            return args, format_size(text, tuple(mapping.values()), {}, budget)
        return args, format_size(text, args, kwargs, budget)
    if name == "translate" and args:
        return args, n * _longest_value(args[0], budget)
    if name in _CASE:
        return args, 3 * n
    if name in ("encode", "decode", "hex"):
        return args, 10 * n  # backslashreplace / xmlcharrefreplace escapes, hex separators
    if name in _READ_ONLY or name in ("split", "rsplit", "splitlines", "partition", "rpartition"):
        return args, 0 if name in _READ_ONLY else n + 1
    return args, n


def _longest_value(table: Any, budget: Budget) -> int:
    """The longest replacement a ``translate`` table holds (at least 1)."""
    values = table.values() if isinstance(table, abc.Mapping) else table if isinstance(table, (list, tuple)) else ()
    longest = 1
    for value in values:
        budget.step()
        if isinstance(value, (str, bytes)):
            longest = max(longest, len(value))
    return longest
