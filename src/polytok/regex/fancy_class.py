"""Character classes and escapes of tiktoken's patterns (fancy-regex over regex-syntax), for `regex` V1.

tiktoken 0.14.0 compiles ``pat_str`` with fancy-regex 0.19.0, which reads a
class in two steps, reproduced here in the same two steps:

1. fancy-regex src/parse.rs, ``Parser::parse_class``: the class ends at the
   ``]`` that closes as many brackets as were opened (a ``]`` right after ``[``
   or ``[^`` is a member, not a close); each escape is rewritten
   (``Parser::parse_escape`` with ``in_class``, ``parse_hex``,
   ``remap_unicode_property_if_necessary``): a literal is re-escaped with
   regex-syntax's ``escape_into``, ``\\h`` becomes ``[0-9A-Fa-f]``, the
   Oniguruma names ``alnum``, ``blank``, ``cntrl``, ``word``, ``graph``,
   ``print``, ``cs`` become classes, and a second class of the shape
   ``[^…\\p{…}…]`` among them is joined to the first with ``&&`` (fancy-regex's
   own rule, kept as it is: ``[\\p{graph}\\p{print}]`` is an intersection).
2. regex-syntax 0.8 parses that text as a whole pattern (fancy-regex
   src/to_hir.rs, ``parse_fragment``; regex-syntax src/ast/parse.rs,
   ``parse_set_class``, ``parse_set_class_open``, ``parse_set_class_range``,
   ``maybe_parse_ascii_class``, ``push_class_op`` / ``pop_class_op``; meaning
   from src/hir/translate.rs): items side by side are a union; ``[…]`` inside a
   class nests, ``[^…]`` is its complement; ``[:name:]`` / ``[:^name:]`` inside
   a class is an ASCII class; ``&&``, ``--`` and ``~~`` (intersection,
   difference, symmetric difference) join the unions on either side, a union
   binding tighter than any operator and the operators, of one rank, grouping
   from the left (``[a&&b--c]`` is ``(a∩b)−c``); an empty side is the empty
   set; ``-`` is a member first in a class (any number of them), before ``]``
   or before another ``-``; a single ``&`` or ``~`` is a member; under ``(?i)``
   every part is case-folded before it is negated or combined.

The result is written for the `regex` module's version 1 sets, where every
operand is bracketed so that their own precedence (``||`` < ``~~`` < ``&&`` <
``--``) never applies: ``[\\p{L}&&[^\\p{Han}]]`` becomes
``[[\\p{L}]&&[[^\\p{Han}]]]``. Members are written as ``\\U`` escapes (ASCII
letters and digits as they are), so no character is read as syntax by `regex`.
A class whose text regex-syntax would read as a class followed by more pattern
(``[!-[]]]``: the brackets fancy-regex counts and those regex-syntax closes
differ) raises `FormatError` rather than guessing.
"""

from __future__ import annotations

from ..errors import FormatError

__all__ = ["read_escape", "translate_class", "translate_class_text", "class_text", "literal", "unsupported",
           "FOLDING_DIFFERS"]

# regex-syntax's meta characters: ``escape_into`` puts a backslash before each of them
_META = frozenset("\\.+*?()|[]{}^$#&-~")
# one-letter escapes that name a character (fancy-regex parse_escape; ``\b`` is BS only in a class)
_NAMED = {"a": "\x07", "b": "\x08", "f": "\x0c", "n": "\n", "r": "\r", "t": "\t", "v": "\x0b", "e": "\x1b"}
# letters fancy-regex lets stand for themselves in a class (its assertions, meaningless there)
_SELF_IN_CLASS = frozenset("kAzBKGR")
_HEX_DIGITS = {"x": 2, "u": 4, "U": 8}
# regex-syntax hir/translate.rs ascii_class
_ASCII = {
    "alnum": ("09", "AZ", "az"), "alpha": ("AZ", "az"), "ascii": ("\x00\x7f",), "blank": ("\t\t", "  "),
    "cntrl": ("\x00\x1f", "\x7f\x7f"), "digit": ("09",), "graph": ("!~",), "lower": ("az",), "print": (" ~",),
    "punct": ("!/", ":@", "[`", "{~"), "space": ("\t\r", "  "), "upper": ("AZ",), "word": ("09", "AZ", "__", "az"),
    "xdigit": ("09", "AF", "af"),
}
# fancy-regex remap_unicode_property_if_necessary (Unicode mode): name -> (members, or a whole class;
# the class when negated); members are wrapped as [..] / [^..] where the text needs a class
_REMAP: dict[str, tuple[str, str | None]] = {
    "alnum": (r"\p{alpha}\p{digit}", None),
    "blank": (r"\p{Zs}\x09", None),
    "cntrl": (r"\x00-\x1F\x7F-\x9F", None),
    "word": (r"\w", r"\W"),
    "graph": (r"[^\p{White_Space}\p{C}]", r"[\p{White_Space}\p{C}]"),
    "print": (r"[^\p{C}\t\n\v\f\r]", r"[\p{C}\t\n\v\f\r]"),
    "cs": (r"\P{any}", r"\p{any}"),
}
_EMPTY = r"[^\U00000000-\U0010ffff]"
# CASE_FOLDING: under (?i) Rust matches the closure of a set under Unicode simple case folding
# (regex-syntax ``try_case_fold_simple``), `regex` the characters one of whose case variants is in
# the set. Measured through tiktoken on every code point: for single characters the two agree
# except on these four (`regex` also pairs İ with i and ı with I); a Unicode property differs on
# hundreds (`regex` reads ``(?i)\p{Lu}`` as any cased letter). Outside a class `regex.fancy`
# writes these four exactly; a class under (?i) that holds one of them, or a property, is refused.
FOLDING_DIFFERS = "Ii\u0130\u0131"


def unsupported(what: str, pattern: str, pos: int) -> FormatError:
    """The error for a construct polytok does not read as tiktoken does (or that tiktoken refuses)."""
    return FormatError(f"{what} at position {pos} of the pattern {pattern!r}")


def literal(char: str) -> str:
    """`char` as a `regex` pattern (in or out of a set) that matches it and nothing else."""
    if char.isascii() and char.isprintable():
        return char if char.isalnum() else "\\" + char
    return f"\\U{ord(char):08x}"


def read_escape(pattern: str, ix: int, in_class: bool) -> tuple[str | None, str | None, int]:
    """fancy-regex ``parse_escape`` for the escapes that mean a character or a class:
    ``(character, None, end)`` or ``(None, class text for regex-syntax, end)``."""
    n = len(pattern)
    if ix + 1 >= n:
        raise unsupported("a trailing backslash", pattern, ix)
    b, end = pattern[ix + 1], ix + 2
    if b in "dswDSW":
        return None, "\\" + b, end
    if b in "hH":
        return None, "[0-9A-Fa-f]" if b == "h" else "[^0-9A-Fa-f]", end
    if b in _HEX_DIGITS:
        char, end = _read_hex(pattern, end, _HEX_DIGITS[b], ix)
        return char, None, end
    if b in "pP" and end < n:
        if pattern[end] == "{":
            close = pattern.find("}", end)
            if close < 0:
                raise unsupported("an unclosed \\p{", pattern, ix)
            end = close + 1
        else:
            end += 1
        return None, _property(pattern[ix:end], in_class), end
    if b in _NAMED:
        return _NAMED[b], None, end
    if b.isascii() and b.isalpha() and not (in_class and b in _SELF_IN_CLASS):
        raise unsupported(f"the escape \\{b} (fancy-regex rejects it{' in a class' if in_class else ''})",
                          pattern, ix)
    return b, None, end


def _read_hex(pattern: str, ix: int, digits: int, at: int) -> tuple[str, int]:
    """fancy-regex ``parse_hex``: `digits` hex digits, or 1-8 of them in braces."""
    fixed = pattern[ix:ix + digits]
    if len(fixed) == digits and all(c in "0123456789abcdefABCDEF" for c in fixed):
        text, end = fixed, ix + digits
    elif pattern.startswith("{", ix) and (close := pattern.find("}", ix)) > ix + 1 \
            and close - ix - 1 <= 8 and all(c in "0123456789abcdefABCDEF" for c in pattern[ix + 1:close]):
        text, end = pattern[ix + 1:close], close + 1
    else:
        raise unsupported("a bad hex escape", pattern, at)
    code = int(text, 16)
    if code > 0x10FFFF or 0xD800 <= code < 0xE000:
        raise unsupported(f"the escape of U+{code:X}, not a Unicode scalar value", pattern, at)
    return chr(code), end


def _property(text: str, in_class: bool) -> str:
    """fancy-regex ``remap_unicode_property_if_necessary`` (Unicode mode)."""
    if not text.startswith(("\\p{", "\\P{")):
        return text  # \pL: one letter, no braces
    negated, name = text[1] == "P", text[3:-1]
    if name.startswith("^"):
        negated, name = not negated, name[1:]
    remap = _REMAP.get(name.lower())
    if remap is None:
        return ("\\P{" if negated else "\\p{") + name + "}"
    members, other = remap
    if other is not None:
        return other if negated else members
    if negated:
        return f"[^{members}]"
    return members if in_class else f"[{members}]"


def class_text(pattern: str, start: int) -> tuple[str, int]:
    """fancy-regex ``parse_class``: the class text it hands to regex-syntax, and where the class ends."""
    n, ix, nest, seen_negated = len(pattern), start + 1, 1, False
    out = ["["]
    for opener in ("^", "]"):
        if pattern.startswith(opener, ix):
            out.append(opener)
            ix += 1
    while True:
        if ix >= n:
            raise unsupported("an unclosed [", pattern, start)
        c = pattern[ix]
        if c == "\\":
            if pattern[ix + 1:ix + 2] in tuple("0123456789"):
                raise unsupported("a back-reference in a class (fancy-regex rejects it)", pattern, ix)
            char, inner, ix = read_escape(pattern, ix, in_class=True)
            if char is not None:
                out.append("\\" + char if char in _META else char)
            elif inner is not None:
                if inner.startswith("[^") and ("\\p{" in inner or "\\P{" in inner or "[:" in inner):
                    if seen_negated:
                        out.append("&&")
                    seen_negated = True
                out.append(inner)
            continue
        out.append(c)
        ix += 1
        if c == "[":
            nest += 1
            for opener in ("^", "]"):
                if pattern.startswith(opener, ix):
                    out.append(opener)
                    ix += 1
        elif c == "]":
            nest -= 1
            if nest == 0:
                return "".join(out), ix


def translate_class(pattern: str, start: int, casei: bool = False) -> tuple[str, int]:
    """The `regex` V1 set for the class at ``pattern[start] == "["``, and where the class ends;
    `casei`: the class stands in a case-insensitive part of the pattern (see `CASE_FOLDING`)."""
    text, end = class_text(pattern, start)
    return translate_class_text(text, pattern, start, casei), end


def translate_class_text(text: str, pattern: str, start: int, casei: bool = False) -> str:
    """The `regex` V1 set for a class text as fancy-regex hands it to regex-syntax."""
    parser = _SetParser(text, pattern, start, casei)
    result = parser.bracket()
    if parser.i != len(text):
        raise unsupported(f"a class that regex-syntax reads as {text[:parser.i]!r} followed by "
                          f"{text[parser.i:]!r}", pattern, start)
    return result


class _SetParser:
    """regex-syntax's class parser over one class text, writing `regex` V1 sets as it goes."""

    def __init__(self, text: str, pattern: str, start: int, casei: bool) -> None:
        self.t, self.i, self.pattern, self.start, self.casei = text, 0, pattern, start, casei

    def _fail(self, what: str) -> FormatError:
        return unsupported(f"{what} in the class {self.t!r}", self.pattern, self.start)

    def _char(self) -> str:
        if self.i >= len(self.t):
            raise self._fail("an unclosed [")
        return self.t[self.i]

    def bracket(self) -> str:
        self.i += 1
        negated = self._char() == "^"
        if negated:
            self.i += 1
        union: list[str] = []
        while self._char() == "-":
            union.append(literal("-"))
            self.i += 1
        if not union and self._char() == "]":
            union.append(literal("]"))
            self.i += 1
        left: str | None = None
        operator = ""
        while True:
            c = self._char()
            if c == "[":
                union.append(self._ascii_class() or self.bracket())
            elif c == "]":
                self.i += 1
                body = _combine(left, operator, union)
                if negated and left is not None:
                    body = f"[{body}]"  # the complement of the whole expression, never of its first operand
                return f"[{'^' if negated else ''}{body}]"
            elif c in "&-~" and self.t[self.i + 1:self.i + 2] == c:
                self.i += 2
                left, operator, union = _combine(left, operator, union), c * 2, []
            else:
                union.append(self._range())

    def _range(self) -> str:
        first, first_text = self._item()
        after = self.t[self.i + 1:self.i + 2]
        if self._char() != "-" or after in ("]", "-"):
            return first_text
        self.i += 1
        self._char()
        last, _ = self._item()
        if first is None or last is None:
            raise self._fail("a range with a class at one end")
        if first > last:
            raise self._fail(f"the range {first!r}-{last!r}, out of order")
        self._check_folding(first, last)
        return f"{literal(first)}-{literal(last)}"

    def _item(self) -> tuple[str | None, str]:
        """One member: ``(character, its text)`` or ``(None, a class's text)``."""
        c = self._char()
        self.i += 1
        if c != "\\":
            self._check_folding(c, c)
            return c, literal(c)
        e = self._char()
        self.i += 1
        if e in _META:
            self._check_folding(e, e)
            return e, literal(e)
        if e in "dswDSW":
            return None, "\\" + e
        if e in "pP":
            begin = self.i - 2
            if self._char() == "{":
                end = self.t.find("}", self.i) + 1
                if end == 0:
                    raise self._fail("an unclosed \\p{")
            else:
                end = self.i + 1
            self.i = end
            if self.casei:
                raise self._fail(f"the Unicode property {self.t[begin:end]} under (?i) (`regex` reads it as "
                                 "any cased letter of it, Rust folds the set)")
            return None, self.t[begin:end]
        digits = self.t[self.i:self.i + 2]
        if e == "x" and len(digits) == 2 and all(c in "0123456789abcdefABCDEF" for c in digits):
            self.i += 2
            return chr(int(digits, 16)), literal(chr(int(digits, 16)))
        if e in "tnvfra":
            return _NAMED[e], literal(_NAMED[e])
        raise self._fail(f"the escape \\{e}")

    def _ascii_class(self) -> str | None:
        """regex-syntax ``maybe_parse_ascii_class``: ``[:name:]`` / ``[:^name:]``, else None (a nested class)."""
        t, i = self.t, self.i
        if not t.startswith(":", i + 1):
            return None
        j = i + 2 + t.startswith("^", i + 2)
        close = t.find(":", j)
        name = t[j:close]
        if close < 0 or not t.startswith(":]", close) or name not in _ASCII:
            return None
        self.i = close + 2
        for pair in _ASCII[name]:
            self._check_folding(pair[0], pair[1])
        members = "".join(f"{literal(pair[0])}-{literal(pair[1])}" for pair in _ASCII[name])
        return f"[{'^' if t[i + 2] == '^' else ''}{members}]"


    def _check_folding(self, first: str, last: str) -> None:
        if self.casei and any(first <= c <= last for c in FOLDING_DIFFERS):
            raise self._fail(f"a member {first!r}-{last!r} covering one of {''.join(FOLDING_DIFFERS)!r} under (?i)")


def _combine(left: str | None, operator: str, union: list[str]) -> str:
    """The set body for ``left operator union`` (just the union when there is no left side)."""
    members = "".join(union) or _EMPTY
    return members if left is None else f"[{left}]{operator}[{members}]"
