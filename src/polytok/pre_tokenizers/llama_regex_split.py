"""llama.cpp's BPE pre-tokenizer: a regex list run the way ``unicode_regex_split`` runs it.

Pre-tokenization stage for GGUF BPE vocabularies; no tokenizer.json type (the GGUF reader builds
it from ``llama_pre_types``). Reproduces llama.cpp ``src/unicode.cpp`` as vendored by
llama-cpp-python 0.3.36: ``unicode_regex_split``, ``unicode_regex_split_custom*``,
``unicode_regex_split_stl`` and ``unicode_byte_encoding_process``.

The regexes of a list are applied in order; each re-splits every current chunk on its own, so
an earlier cut is a hard boundary for later lookaheads and anchors, and text a regex does not
match still becomes its own piece. Each regex string is run by one of three engines, chosen as
llama.cpp chooses them:

- *hand-written splitters*, for the exact trigger strings of ``unicode_regex_split_custom``.
  GPT-2, Llama-3 (both spellings), Qwen2, Qwen3.5 and newline-runs are, rule for rule, their
  patterns over the collapsed text below (the GPT-2 one with the ``|\\s+`` tail its trigger
  lacks), so they run as such (GPT-2, Llama-3 and Qwen2 through the compiled scanners of
  `polytok._kernels.split` when they are built, with the same pieces); the Kimi-K2 and
  digit-group splitters, which are not regexes, are ported loops;
- *collapsed categories* (a regex naming ``\\p{N|L|P|M|S|Lu|Ll|Lt|Lm|Lo}``): llama.cpp runs
  ``std::regex`` over a one-byte-per-code-point text where every non-ASCII code point is 0x0B if
  its table says whitespace, else 0xD1..0xD5 for number/letter/punctuation/mark/symbol, else
  0xD0, and each ``\\p{X}`` becomes that byte plus its ASCII members; here Python ``re`` with
  ``re.ASCII`` runs the same translated pattern over the same text;
- *code points* (no category): ``std::wregex`` over the code points with non-ASCII whitespace
  turned into 0x0B; here ``re.ASCII`` over the same string, ``$`` as ``\\Z``.

Why ``re.ASCII`` is the C-locale ``std::regex``: both are leftmost-first backtracking engines
with greedy quantifiers, and ``\\s \\d \\w \\b`` are ASCII-only in both (0x1C..0x1F are not
whitespace). Consequences kept on purpose (spec llama_vocab.md 8.9): ``\\p{Lu}`` etc. mean
any letter; a lookahead ``(?=[\\p{L}])([^a-z])`` treats every non-ASCII letter as both cases;
ranges holding non-ASCII whitespace never see it. Unicode data: llama.cpp's own tables
(``llama_unicode_data``, Unicode 15.1), never ``unicodedata``.

Words are the UTF-8 of each chunk; with ``byte_encode`` every byte becomes its GPT-2 alphabet
char (``polytok.text.byte_alphabet``). Lone surrogates keep their 3-byte form, as llama.cpp
re-encodes them. Empty pieces (zero-width matches) give no tokens and are dropped.
"""

from __future__ import annotations

import re
from array import array
from bisect import bisect_right
from collections.abc import Callable, Iterator, Sequence
from functools import lru_cache, partial

from ..errors import FormatError
from ..kernels import kernel
from ..normalized import NormalizedString
from ..text.byte_alphabet import BYTES_TO_CHARS
from .base import PreTokenizerBase
from .llama_unicode_data import LOWERCASE, RANGE_FLAGS, RANGE_STARTS, WHITESPACE

Span = tuple[int, int]
# The chunks between steps are one flat array of bounds (start, end, start, end, ...): a
# list of span tuples took ~120 bytes a piece, twice over while a step ran (10 MB of mixed
# scripts through a GGUF BPE vocabulary peaked at +1.1 GB); the array takes 16.
Bounds = array


def _pairs(bounds: Bounds[int]) -> Iterator[Span]:
    """The ``(start, end)`` spans of flat `bounds`."""
    step = iter(bounds)
    return zip(step, step)
NUMBER, LETTER, ACCENT_MARK = 0x02, 0x04, 0x10
WHITESPACE_FLAG = 0x100  # unicode_cpt_flags::WHITESPACE, set from the whitespace table

# unicode_regex_split: category flag -> collapsed byte, and the ASCII members written after it
_CATEGORY_CODES = {0x02: "\xd1", 0x04: "\xd2", 0x20: "\xd3", 0x10: "\xd4", 0x40: "\xd5"}
_CATEGORY_TOKENS = {
    "\\p{N}": "\xd10-9", "\\p{L}": "\xd2A-Za-z", "\\p{P}": "\xd3!-#%-*,-/:-;?-@\\[-\\]_\\{\\}",
    "\\p{M}": "\xd4", "\\p{S}": "\xd5\\$\\+<->^`\\|\\~",
    "\\p{Lu}": "\xd2A-Za-z", "\\p{Ll}": "\xd2A-Za-z", "\\p{Lt}": "\xd2A-Za-z",
    "\\p{Lm}": "\xd2A-Za-z", "\\p{Lo}": "\xd2A-Za-z",
}

_GPT2 = "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)"
_CONTRACTIONS = "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])"
_LLAMA3 = (_CONTRACTIONS + "|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*"
           "|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+")
_LLAMA3_I = "(?i:'s|'t|'re|'ve|'m|'ll|'d)" + _LLAMA3[len(_CONTRACTIONS):]
_QWEN2 = (_CONTRACTIONS + "|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*"
          "|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+")
_QWEN35 = (_CONTRACTIONS + "|[^\\r\\n\\p{L}\\p{N}]?[\\p{L}\\p{M}]+|\\p{N}| ?[^\\s\\p{L}\\p{M}\\p{N}]+[\\r\\n]*"
           "|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+")
_NEWLINES = "[^\\n]+|[\\n]+"
# trigger string -> the collapsed-text regex its hand-written splitter equals. The case-folding
# of the splitters (unicode_tolower) only reaches 's t m d r e v l' from ASCII capitals in the
# 15.1 table, so '[sS]' is exact. The GPT-2 splitter ends with a plain '\s+' its trigger lacks
# (written out to mirror it; it changes no piece, since a lone unmatched whitespace char
# becomes its own piece under the gap rule anyway).
_SPLITTER_REGEXES = {_GPT2: _GPT2 + "|\\s+", _LLAMA3: _LLAMA3, _LLAMA3_I: _LLAMA3,
                     _QWEN2: _QWEN2, _QWEN35: _QWEN35, _NEWLINES: _NEWLINES}
# trigger string -> the compiled scanner (`polytok._kernels.split`) that runs its collapsed regex,
# over a table of the collapsed alphabet read off ``re`` (tools/gen_split_tables.py)
_SCANNERS = {_GPT2: "gpt2", _LLAMA3: "llama3", _LLAMA3_I: "llama3", _QWEN2: "qwen2"}
_KIMI_TRIGGER = "\\p{Han}+"
_DIGITS_TRIGGERS = ("\\p{AFMoE_digits}", "\\d{1,3}(?=(?:\\d{3})*\\b)")

# unicode_cpt_is_han: inclusive ranges
_HAN = ((0x4E00, 0x9FFF), (0x3400, 0x4DBF), (0x20000, 0x2A6DF), (0x2A700, 0x2B73F), (0x2B740, 0x2B81F),
        (0x2B820, 0x2CEAF), (0x2CEB0, 0x2EBEF), (0xF900, 0xFAFF), (0x2F800, 0x2FA1F))


def category_flags(cpt: int) -> int:
    """``unicode_cpt_flags_from_cpt(cpt)`` without the case/NFD bits: category | whitespace."""
    if cpt >= 0x110000:
        return 0x01
    flags = RANGE_FLAGS[bisect_right(RANGE_STARTS, cpt) - 1]
    return flags | WHITESPACE_FLAG if cpt in WHITESPACE else flags


def to_lower(cpt: int) -> int:
    """``unicode_tolower``: the 1:1 lowercase of llama.cpp's table, or `cpt` itself."""
    return LOWERCASE.get(cpt, cpt)


def is_han(cpt: int) -> bool:
    return any(lo <= cpt <= hi for lo, hi in _HAN)


class _Collapse(dict[int, str]):
    """str.translate table to the collapsed text, filled on a miss (ASCII maps to itself)."""

    def __missing__(self, cpt: int) -> str:
        if cpt < 128:
            code = chr(cpt)
        else:
            flags = category_flags(cpt)
            code = "\x0b" if flags & WHITESPACE_FLAG else _CATEGORY_CODES.get(flags & 0xFF, "\xd0")
        self[cpt] = code
        return code


_COLLAPSE = _Collapse()
_WIDE_SPACES = {cpt: "\x0b" for cpt in WHITESPACE if cpt > 0x7F}


def collapse(text: str) -> str:
    """The text ``unicode_regex_split`` matches category regexes against."""
    return text if text.isascii() else text.translate(_COLLAPSE)


def collapse_regex(regex: str) -> str:
    """The category-collapsing rewrite of `regex`, bug for bug: ``[``/``]`` count as class
    brackets unless the previous character is a backslash, and only the ten category names
    are replaced (wrapped in ``[...]`` outside a class)."""
    out: list[str] = []
    inside = False
    i = 0
    while i < len(regex):
        c = regex[i]
        if c == "[" and (i == 0 or regex[i - 1] != "\\"):
            inside = True
        elif inside and c == "]" and regex[i - 1] != "\\":
            inside = False
        elif regex.startswith("\\p{", i) and i + 3 < len(regex):
            close = regex.find("}", i + 3)
            members = _CATEGORY_TOKENS.get(regex[i:close + 1]) if 0 <= close <= i + 10 else None
            if members is not None:
                out.append(members if inside else "[" + members + "]")
                i = close + 1
                continue
        out.append(c)
        i += 1
    return "".join(out)


def _uses_categories(regex: str) -> bool:
    return any(token in regex for token in _CATEGORY_TOKENS)


def _code_point_regex(regex: str) -> str:
    """The wregex path: only ``$`` outside a class needs a rewrite (ECMAScript ``$`` is the end
    of input only; Python's also matches before a final newline)."""
    out: list[str] = []
    inside = escaped = False
    for c in regex:
        if escaped:
            escaped = False
        elif c == "\\":
            escaped = True
        elif c == "[":
            inside = True
        elif c == "]":
            inside = False
        elif c == "$" and not inside:
            c = "\\Z"
        out.append(c)
    return "".join(out)


def _piece_bounds(start: int, ends: list[int], out: Bounds[int], offset: int = 0) -> None:
    """Append the non-empty pieces from `start` to each of `ends` in turn, moved by `offset`."""
    for end in ends:
        if end > start:
            out.append(offset + start)
            out.append(offset + end)
            start = end


def _regex_chunks(pattern: re.Pattern[str], view: str, chunks: Bounds[int]) -> Bounds[int]:
    """``unicode_regex_split_stl``: per chunk, the gap before each match, the match, the tail."""
    out = array("q")
    for start, end in _pairs(chunks):
        sub = view if (start, end) == (0, len(view)) else view[start:end]
        pos = 0
        for match in pattern.finditer(sub):
            a, b = match.span()
            if a > pos:
                out.append(start + pos)
                out.append(start + a)
            if b > a:
                out.append(start + a)
                out.append(start + b)
            pos = b
        if pos < len(sub):
            out.append(start + pos)
            out.append(end)
    return out


def _scanned_chunks(scan: Callable[[int, str, int, int], bytes], scanner: int, view: str,
                    chunks: Bounds[int]) -> Bounds[int]:
    """`_regex_chunks` of a splitter regex through its compiled scanner (its matches tile every chunk)."""
    out = array("q")
    for start, end in _pairs(chunks):
        out.frombytes(scan(scanner, view, start, end))
    return out


def _digit_group_chunks(view: str, chunks: Bounds[int]) -> Bounds[int]:
    """``unicode_regex_split_custom_afmoe``: every number run of length L is cut after its first
    L mod 3 code points, then every 3; the text before a run stays glued to its first group."""
    out = array("q")
    for start, end in _pairs(chunks):
        ends: list[int] = []
        for run in _NUMBER_RUN.finditer(view, start, end):
            a, b = run.span()
            first = (b - a) % 3 or 3
            ends.extend(range(a + first, b + 1, 3))
        ends.append(end)
        _piece_bounds(start, ends, out)
    return out


_NUMBER_RUN = re.compile("[0-9\xd1]+")


def _kimi_chunks(text: str, chunks: Bounds[int]) -> Bounds[int]:
    out = array("q")
    for start, end in _pairs(chunks):
        cpts = [ord(c) for c in text[start:end]]
        _piece_bounds(0, _kimi_ends(cpts), out, start)
    return out


def _kimi_ends(cpts: list[int]) -> list[int]:
    """``unicode_regex_split_custom_kimi_k2`` over one chunk: the end of every piece, in order.
    Han runs, then an optional lead + non-Han letters + optional contraction, numbers by three,
    punctuation runs, and the Llama-3 whitespace rules; out of the chunk, flags are 0."""
    n = len(cpts)
    flags = [category_flags(c) for c in cpts] + [0, 0]
    ends: list[int] = []
    pos = 0
    while pos < n:
        cpt, f = cpts[pos], flags[pos]
        if is_han(cpt):
            while pos < n and is_han(cpts[pos]):
                pos += 1
        elif _kimi_starts_word(cpts, flags, pos):
            pos += 1
            while pos < n and flags[pos] & LETTER and not is_han(cpts[pos]):
                pos += 1
            pos += _contraction_length(cpts, pos)
        elif f & NUMBER:
            ini = pos
            while flags[pos] & NUMBER:
                pos += 1
                if pos - ini >= 3:
                    ends.append(pos)
                    ini = pos
        else:
            pos = _kimi_other_end(cpts, flags, pos)
        ends.append(pos)
    return ends


def _kimi_starts_word(cpts: list[int], flags: list[int], pos: int) -> bool:
    if flags[pos] & LETTER:
        return True  # a Han letter was taken before
    lead = cpts[pos] not in (0x0A, 0x0D) and not flags[pos] & NUMBER
    return lead and pos + 1 < len(cpts) and bool(flags[pos + 1] & LETTER) and not is_han(cpts[pos + 1])


def _contraction_length(cpts: list[int], pos: int) -> int:
    n = len(cpts)
    if pos + 1 >= n or cpts[pos] != 0x27:
        return 0
    nxt = to_lower(cpts[pos + 1])
    if nxt in (0x73, 0x74, 0x6D, 0x64):  # s t m d
        return 2
    if pos + 2 < n and (chr(nxt) + chr(to_lower(cpts[pos + 2]))) in ("re", "ve", "ll"):
        return 3
    return 0


def _kimi_other_end(cpts: list[int], flags: list[int], pos: int) -> int:
    """Punctuation run (`` ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*``), else the whitespace rules, else 1 cpt."""
    n = len(cpts)
    stop = WHITESPACE_FLAG | LETTER | NUMBER
    is_space = cpts[pos] == 0x20
    flags2 = flags[pos + 1] if is_space else flags[pos]
    if flags2 and not flags2 & stop:
        pos += is_space
        while flags[pos] and not flags[pos] & stop:
            pos += 1
        while pos < n and cpts[pos] in (0x0A, 0x0D):
            pos += 1
        return pos
    run = 0
    last_newline = 0
    while flags[pos + run] & WHITESPACE_FLAG:
        if cpts[pos + run] in (0x0A, 0x0D):
            last_newline = pos + run + 1
        run += 1
    if last_newline:
        return last_newline
    if run > 1 and pos + run < n:
        return pos + run - 1
    return pos + max(run, 1)


_Step = tuple[str, Callable[[str, "Bounds[int]"], "Bounds[int]"]]  # (view kind, chunk splitter)


def compile_step(regex: str) -> _Step:
    """How ``unicode_regex_split`` runs `regex`: which view of the text, which splitter."""
    if regex == _KIMI_TRIGGER:
        return "text", _kimi_chunks
    if regex in _DIGITS_TRIGGERS:
        return "collapsed", _digit_group_chunks
    if regex in _SPLITTER_REGEXES:
        module = kernel("split") if regex in _SCANNERS else None
        if module is not None:
            return "collapsed", partial(_scanned_chunks, module.scan_collapsed, module.SCANNERS[_SCANNERS[regex]])
        return "collapsed", _regex_splitter(collapse_regex(_SPLITTER_REGEXES[regex]), regex)
    if _uses_categories(regex):
        if not regex.isascii():
            raise FormatError(f"regex {regex!r} mixes Unicode categories and non-ASCII characters "
                              "(llama.cpp refuses it)", key="regex")
        return "collapsed", _regex_splitter(collapse_regex(regex), regex)
    return "wide", _regex_splitter(_code_point_regex(regex), regex)


def _regex_splitter(pattern: str, original: str) -> Callable[[str, Bounds[int]], Bounds[int]]:
    try:
        compiled = re.compile(pattern, re.ASCII)
    except re.error as exc:
        raise FormatError(f"regex {original!r} cannot be compiled: {exc}", key="regex") from None
    return partial(_regex_chunks, compiled)  # a partial of a module function pickles; a lambda would not


_BYTE_TABLE = tuple(BYTES_TO_CHARS)  # str.translate table over latin-1 chars


@lru_cache(maxsize=1 << 16)
def _byte_encode(word: str) -> str:
    """``unicode_byte_encoding_process`` of one word (lone surrogates as their 3 bytes)."""
    return word.encode("utf-8", "surrogatepass").decode("latin-1").translate(_BYTE_TABLE)


class LlamaRegexSplit(PreTokenizerBase):
    """llama.cpp's BPE pre-tokenizer for one regex list (see the module docstring).

    Args:
        regexes: the list, spelt as in llama-vocab.cpp (``llama_pre_types.PreType.regexes``).
        byte_encode: map each word's UTF-8 bytes to the GPT-2 alphabet (llama.cpp's default;
            false for GEMMA4, SARVAM_MOE and WHITESPACE, whose vocabularies hold raw UTF-8).
    """

    def __init__(self, regexes: Sequence[str], *, byte_encode: bool = True) -> None:
        self.regexes = tuple(regexes)
        self.byte_encode = byte_encode
        self._steps = [compile_step(regex) for regex in self.regexes]

    def spans(self, text: str) -> list[Span]:
        """The code-point spans of the words of `text`, empty ones left out."""
        return list(_pairs(self._bounds(text)))

    def _bounds(self, text: str) -> Bounds[int]:
        chunks = array("q", [0, len(text)] if text else [])
        views: dict[str, str] = {"text": text}
        for kind, split in self._steps:
            view = views.get(kind)
            if view is None:
                view = views[kind] = collapse(text) if kind == "collapsed" else text.translate(_WIDE_SPACES)
            chunks = split(view, chunks)
        return chunks

    def pre_tokenize(self, text: str, at_origin: bool = True) -> list[str]:
        pairs = _pairs(self._bounds(text))
        if self.byte_encode:
            return [_byte_encode(text[a:b]) for a, b in pairs]
        return [text[a:b] for a, b in pairs]

    def pre_tokenize_aligned(self, ns: NormalizedString) -> list[NormalizedString]:
        pieces = ns.slices(self.spans(ns.text))
        if self.byte_encode:
            for piece in pieces:
                piece.transform([(mapped[i], int(i > 0)) for char in piece.text
                                 for mapped in (_byte_encode(char),) for i in range(len(mapped))])
        return pieces
