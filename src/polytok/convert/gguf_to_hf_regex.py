"""llama.cpp's BPE pre-tokenizer regexes rewritten for Oniguruma, the engine of a tokenizer.json ``Split``.

Part of `polytok.convert.gguf_to_hf`. llama.cpp (llama-cpp-python 0.3.36,
``src/unicode.cpp`` ``unicode_regex_split``) runs each regex of a pre type over a
view of the text (`polytok.pre_tokenizers.llama_regex_split` reproduces it):

- a regex naming a Unicode category (``\\p{L}`` and the nine others) runs over the
  *collapsed* text, where every non-ASCII code point is one byte for its category in
  llama.cpp's own table (Unicode 15.1) and every non-ASCII whitespace is ``\\x0b``;
- any other regex runs over the code points, non-ASCII whitespace again turned into
  ``\\x0b``; ECMAScript's ``^``/``$`` anchor the whole chunk;
- a few trigger strings run hand-written splitters instead: those equal to a regex
  (GPT-2, Llama-3 in both spellings, Qwen2, Qwen3.5, newline runs) are written as
  that regex; the Kimi-K2 and digit-group splitters are not regexes at all.

The rewrite gives Oniguruma the same sets: each category becomes the explicit class of
llama.cpp's table (so Oniguruma's newer Unicode data never enters), case categories
(``\\p{Lu}`` ...) are every letter (the collapsed text cannot tell cases apart), a class
is widened or narrowed so a non-ASCII whitespace matches exactly when ``\\x0b`` would,
a literal non-ASCII whitespace outside a class never matches, ``^``/``$`` become
``\\A``/``\\z``, and ``\\d \\w \\b`` (ASCII in llama.cpp's engines, Unicode in Oniguruma)
become ASCII classes and lookarounds. What has no rewrite is returned as a reason.
"""

from __future__ import annotations

from functools import cache

from ..pre_tokenizers.llama_unicode_data import RANGE_FLAGS, RANGE_STARTS, WHITESPACE

__all__ = ["onig_regex"]

_NUMBER, _LETTER, _PUNCTUATION, _MARK, _SYMBOL = 0x02, 0x04, 0x20, 0x10, 0x40
_CATEGORIES = {"N": _NUMBER, "L": _LETTER, "P": _PUNCTUATION, "M": _MARK, "S": _SYMBOL,
               "Lu": _LETTER, "Ll": _LETTER, "Lt": _LETTER, "Lm": _LETTER, "Lo": _LETTER}
_CONTRACTIONS = "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])"
# unicode_regex_split_custom's trigger strings (unicode.cpp): the ones a regex equals, and the rest
_GPT2 = "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)"
_LLAMA3_CASELESS = ("(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+"
                    "[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+")
_SPLITTERS = {_GPT2: _GPT2 + "|\\s+",
              _LLAMA3_CASELESS: _CONTRACTIONS + _LLAMA3_CASELESS[len("(?i:'s|'t|'re|'ve|'m|'ll|'d)"):]}
_NOT_REGEXES = {"\\p{Han}+": "the Kimi-K2 splitter", "\\p{AFMoE_digits}": "the digit-group splitter",
                "\\d{1,3}(?=(?:\\d{3})*\\b)": "the digit-group splitter"}
_WIDE_SPACES = tuple(sorted(c for c in WHITESPACE if c > 0x7F))
# \d \w \b are ASCII in llama.cpp's engines (C-locale std::regex) and Unicode in Oniguruma
_WORD = "[0-9A-Za-z_]"
_ASCII_ONLY = {"d": "[0-9]", "D": "[^0-9]", "w": _WORD, "W": f"[^{_WORD[1:]}",
               "b": f"(?:(?<={_WORD})(?!{_WORD})|(?<!{_WORD})(?={_WORD}))",
               "B": f"(?:(?<={_WORD})(?={_WORD})|(?<!{_WORD})(?!{_WORD}))"}
_ASCII_MEMBERS = {"d": "0-9", "w": "0-9A-Za-z_"}
_SIMPLE_ESCAPES = {"r": 13, "n": 10, "t": 9, "f": 12, "v": 11, "0": 0}


def onig_regex(regex: str) -> tuple[str | None, list[str]]:
    """`regex` of a llama.cpp pre type as an Oniguruma pattern splitting the same text the same way,
    or None and the reasons it cannot be."""
    if regex in _NOT_REGEXES:
        return None, [f"the pre-tokenizer step {regex!r} is {_NOT_REGEXES[regex]}, hand-written code "
                      "with no regex equivalent"]
    regex = _SPLITTERS.get(regex, regex)
    collapsed = any(f"\\p{{{name}}}" in regex for name in _CATEGORIES)
    return _Rewrite(regex, collapsed).run()


def _hex(cpt: int) -> str:
    return f"\\x{{{cpt:X}}}"


def _ranges_text(ranges: list[tuple[int, int]]) -> str:
    return "".join(_hex(lo) if lo == hi else f"{_hex(lo)}-{_hex(hi)}" for lo, hi in ranges)


@cache
def _category_members(flag: int) -> str:
    """Class members (no brackets) of the code points llama.cpp's collapsed view gives category `flag`:
    ASCII by the table, non-ASCII by the table unless whitespace (which collapses to ``\\x0b``)."""
    ranges: list[tuple[int, int]] = []
    for i, start in enumerate(RANGE_STARTS[:-1]):
        if RANGE_FLAGS[i] & 0xFF == flag:
            ranges.append((start, RANGE_STARTS[i + 1] - 1))
    cut: list[tuple[int, int]] = []
    for lo, hi in ranges:
        for space in _WIDE_SPACES:
            if lo <= space <= hi:
                if lo < space:
                    cut.append((lo, space - 1))
                lo = space + 1
        if lo <= hi:
            cut.append((lo, hi))
    return _ranges_text(cut)


class _Rewrite:
    """One pass over a regex, class by class (llama.cpp's regexes never nest classes)."""

    def __init__(self, regex: str, collapsed: bool) -> None:
        self.regex, self.collapsed = regex, collapsed
        self.out: list[str] = []
        self.reasons: list[str] = []
        self.i = 0

    def refuse(self, what: str) -> None:
        self.reasons.append(f"the pre-tokenizer regex {self.regex!r} has {what}, which llama.cpp's regex "
                            "engine reads differently from Oniguruma")

    def run(self) -> tuple[str | None, list[str]]:
        regex = self.regex
        while self.i < len(regex):
            c = regex[self.i]
            if c == "\\":
                self.out.append(self.escape_outside())
            elif c == "[":
                self.out.append(self.char_class())
                continue
            elif c == "(" and regex.startswith("(?", self.i):
                head = regex[self.i:self.i + 4]
                if not (head.startswith(("(?:", "(?=", "(?!"))):
                    self.refuse(f"the group {head!r}")
                self.out.append(c)
            elif c == ".":
                self.refuse("'.'")
            elif c == "$":
                if self.collapsed:
                    self.refuse("'$' over the collapsed text")
                self.out.append("\\z")
            elif c == "^":
                self.out.append("\\A")
            elif ord(c) in WHITESPACE and ord(c) > 0x7F:
                self.out.append("(?!)")  # llama.cpp sees \x0b there: the literal never matches
            else:
                self.out.append(c)
            self.i += 1
        if self.reasons:
            return None, self.reasons
        return "".join(self.out), []

    def category(self) -> str | None:
        """The members of the ``\\p{..}`` at ``i`` (``i`` moved past it), or None (refused)."""
        close = self.regex.find("}", self.i)
        name = self.regex[self.i + 3:close] if close > 0 else ""
        self.i = close if close > 0 else len(self.regex)
        if name not in _CATEGORIES:
            self.refuse(f"the property \\p{{{name}}}")
            return None
        return _category_members(_CATEGORIES[name])

    def escape_outside(self) -> str:
        regex = self.regex
        nxt = regex[self.i + 1:self.i + 2]
        if nxt == "p" and regex.startswith("\\p{", self.i):
            members = self.category()
            return "" if members is None else f"[{members}]"
        self.i += 1
        if nxt in _ASCII_ONLY:
            return _ASCII_ONLY[nxt]
        return "\\" + nxt

    def char_class(self) -> str:
        """The class at ``i`` rewritten; ``i`` moves past its ``]``."""
        regex = self.regex
        self.i += 1
        negated = regex.startswith("^", self.i)
        if negated:
            self.i += 1
        items: list[str] = []
        literal: list[tuple[int, int]] = []  # code point ranges written literally
        has_space_class = False
        prev: int | None = None  # the last single code point, for a following '-'
        while self.i < len(regex) and regex[self.i] != "]":
            c = regex[self.i]
            if c == "[":
                self.refuse("a nested class")
                self.i += 1
                continue
            if c == "-" and prev is not None and self.i + 1 < len(regex) and regex[self.i + 1] != "]":
                self.i += 1
                hi = self.class_char()
                if hi is None:
                    self.refuse("a range to a class escape")
                    continue
                literal[-1] = (prev, hi)
                items[-1] = f"{_hex(prev)}-{_hex(hi)}"
                prev = None
                continue
            if c == "\\" and regex.startswith("\\p{", self.i):
                members = self.category()
                self.i += 1
                items.append(members or "")
                prev = None
                continue
            if c == "\\" and regex[self.i + 1:self.i + 2] in _ASCII_MEMBERS:
                items.append(_ASCII_MEMBERS[regex[self.i + 1]])
                self.i += 2
                prev = None
                continue
            if c == "\\" and regex[self.i + 1:self.i + 2] in ("s", "S"):
                has_space_class |= regex[self.i + 1] == "s"
                items.append(regex[self.i:self.i + 2])
                self.i += 2
                prev = None
                continue
            single = self.class_char()
            if single is None:
                prev = None
                continue
            literal.append((single, single))
            items.append(_hex(single))
            prev = single
        self.i += 1  # the ']'
        vertical_tab = has_space_class or any(lo <= 0x0B <= hi for lo, hi in literal)
        wide = "".join(map(_hex, _WIDE_SPACES))
        body = "".join(items)
        if vertical_tab:
            body += wide  # llama.cpp sees every non-ASCII whitespace as \x0b, which the class holds
        elif any(lo <= s <= hi for lo, hi in literal for s in _WIDE_SPACES):
            body = f"{body}&&[^{wide}]"  # ... and \x0b is not in it: they never match
        return f"[{'^' if negated else ''}{body}]"

    def class_char(self) -> int | None:
        """The code point of the class character (or simple escape) at ``i``, ``i`` moved past it;
        None for an escape that is not one character (refused)."""
        regex = self.regex
        c = regex[self.i]
        if c != "\\":
            self.i += 1
            return ord(c)
        nxt = regex[self.i + 1:self.i + 2]
        self.i += 2
        if nxt in _SIMPLE_ESCAPES:
            return _SIMPLE_ESCAPES[nxt]
        if nxt in _ASCII_ONLY or nxt.isalnum():
            self.refuse(f"the class escape \\{nxt}")
            return None
        return ord(nxt)
