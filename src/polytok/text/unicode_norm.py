"""Unicode normalization forms and per-character lowercase with HF tokenizers' data.

Reproduces HF tokenizers 0.23.3 ``tokenizers/src/tokenizer/normalizer.rs``
(``NormalizedString::nfd/nfkd/nfc/nfkc`` and ``lowercase``), which feed the
`unicode-normalization-alignments` iterators (``Decompositions``,
``Recompositions``) and Rust's ``char::to_lowercase`` into ``transform``.

Two entry points per operation:
- ``normalize(form, text)`` / ``lowercase(text)``: the fast path, plain text.
- ``normalize_changes(form, text)`` / ``lowercase_changes(text)``: the
  ``(char, change)`` list HF hands to ``transform`` (0 = replaces the source
  character at the cursor, 1 = inserted, -n = replaces and deletes n more),
  for the offsets path.

Unicode versions (reference/hf_tokenizers.md §3.6): HF's normalization data is
older than Python's `unicodedata` (Unicode 14 in Python 3.11). The code points
in ``unicode_tables.NORM_INERT`` are left untouched by HF and act as starters
(combining class 0, no decomposition, no composition), so each one is a hard
boundary: HF's result equals Python's normalization of the text between them.
The fast path therefore returns text that `unicodedata.is_normalized` accepts
(HF knows fewer mappings and blocks more, so it changes nothing there either),
calls `unicodedata.normalize` on the whole text when no inert code point is
present (one regex scan), and piecewise otherwise. Under a
`unicodedata` version other than the one the tables were generated with, the
inert set is recomputed once from HF's absolute data (about a second).

The offsets path re-runs HF's algorithm with its change tags: full recursive
decomposition per source character (first part 0, the rest 1), a stable sort
by combining class of each run of non-starters (tags travel with their
characters, so offsets then follow positions, as in HF), and the
canonical-composition state machine where a composite carries
``starter_tag + mark_tag - 1``.

Lowercase is per character (no final-sigma rule): the fast path turns every
capital sigma into ``σ`` before ``str.lower`` (whose only context rule is final
sigma), then applies ``unicode_tables.LOWER_OVERRIDES`` for characters newer
than Python's data.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Iterable
from operator import itemgetter
from typing import Literal

from . import unicode_tables as tables

FORMS = ("NFC", "NFD", "NFKC", "NFKD")
Changes = list[tuple[str, int]]

_HANGUL_S, _HANGUL_L, _HANGUL_V, _HANGUL_T = 0xAC00, 0x1100, 0x1161, 0x11A7
_HANGUL_T_COUNT, _HANGUL_VT_COUNT, _HANGUL_S_COUNT = 28, 588, 11172


def char_class(ranges: Iterable[tuple[int, int]]) -> str:
    """A regex character class matching the inclusive code point `ranges`."""
    parts = []
    for first, last in ranges:
        a = re.escape(chr(first))
        parts.append(a if first == last else f"{a}-{re.escape(chr(last))}")
    return "[" + "".join(parts) + "]"


def class_pattern(ranges: Iterable[tuple[int, int]]) -> str:
    """A one-character pattern for `ranges` that stays fast on large sets.

    `re` tests astral ranges one by one for every character, so the astral
    part sits behind a one-range guard (measured several times faster for the
    ~250 ranges of combining marks; bench/README.md, 'Measurements behind design
    choices').
    """
    ranges = list(ranges)
    bmp = [(first, min(last, 0xFFFF)) for first, last in ranges if first <= 0xFFFF]
    astral = [(max(first, 0x10000), last) for first, last in ranges if last > 0xFFFF]
    if len(astral) <= 2:
        return char_class(ranges)
    alternatives = [char_class(bmp)] if bmp else []
    alternatives.append(r"(?=[\U00010000-\U0010FFFF])" + char_class(astral))
    return "(?:" + "|".join(alternatives) + ")"


def compile_class(ranges: Iterable[tuple[int, int]]) -> re.Pattern[str]:
    return re.compile(class_pattern(ranges))


def code_points(ranges: Iterable[tuple[int, int]]) -> frozenset[str]:
    return frozenset(chr(c) for first, last in ranges for c in range(first, last + 1))


def _to_ranges(points: Iterable[int]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for c in sorted(points):
        if out and out[-1][1] == c - 1:
            out[-1] = (out[-1][0], c)
        else:
            out.append((c, c))
    return out


def scan_inert() -> list[tuple[int, int]]:
    """NORM_INERT for the running `unicodedata`, from HF's absolute tables."""
    hf_ccc = {c for first, last in tables.HF_NONZERO_CCC for c in range(first, last + 1)}
    hf_decomposable = {c for first, last in tables.HF_DECOMPOSABLE for c in range(first, last + 1)}
    inert: set[int] = set()
    for cp in range(0x80, 0x110000):
        c = chr(cp)
        if unicodedata.combining(c) and cp not in hf_ccc and unicodedata.normalize("NFD", c) == c:
            inert.add(cp)
        mapping = unicodedata.decomposition(c)
        if not mapping or cp in hf_decomposable:
            continue
        inert.add(cp)
        parts = "".join(chr(int(x, 16)) for x in mapping.split() if not x.startswith("<"))
        if not mapping.startswith("<") and len(parts) == 2 and unicodedata.normalize("NFC", parts) == c:
            inert.update(map(ord, parts))
    return _to_ranges(inert)


@functools.cache
def _inert_ranges() -> tuple[tuple[int, int], ...]:
    if unicodedata.unidata_version == tables.UNIDATA_VERSION:
        return tables.NORM_INERT
    return tuple(scan_inert())


@functools.cache
def _inert_regexes() -> tuple[re.Pattern[str], re.Pattern[str]]:
    pattern = class_pattern(_inert_ranges())
    return re.compile(pattern), re.compile(f"({pattern})")


@functools.cache
def _inert_chars() -> frozenset[str]:
    return code_points(_inert_ranges())

Form = Literal["NFC", "NFD", "NFKC", "NFKD"]


# -- fast path ------------------------------------------------------------------------


def normalize(form: Form, text: str) -> str:
    """`text` in normalization `form` ("NFC", "NFD", "NFKC" or "NFKD"), as HF computes it."""
    if text.isascii() or unicodedata.is_normalized(form, text):
        # subtle: HF knows a subset of Python's mappings and classes (and blocks
        # more), so text Python leaves alone is left alone by HF too.
        return text
    search, split = _inert_regexes()
    if search.search(text) is None:
        return unicodedata.normalize(form, text)
    # subtle: an inert code point is a starter that neither decomposes nor composes
    # in HF, so normalization never crosses it; split keeps it at the odd indices.
    parts = split.split(text)
    parts[0::2] = [unicodedata.normalize(form, p) for p in parts[0::2]]
    return "".join(parts)


_LOWER_OVERRIDE = re.compile(char_class(_to_ranges(ord(c) for c in tables.LOWER_OVERRIDES)))


def lowercase(text: str) -> str:
    """Rust ``char::to_lowercase`` applied to each character on its own."""
    if text.isascii():
        return text.lower()
    if "\u03a3" in text:
        # subtle: str.lower() turns a word-final capital sigma into ς; Rust never does.
        text = text.replace("\u03a3", "\u03c3")
    text = text.lower()
    if _LOWER_OVERRIDE.search(text):
        text = _LOWER_OVERRIDE.sub(lambda m: tables.LOWER_OVERRIDES[m.group()], text)
    return text


# -- offsets path -----------------------------------------------------------------------


@functools.lru_cache(maxsize=65536)
def _lower_char(c: str) -> str:
    return tables.LOWER_OVERRIDES.get(c) or c.lower()


def lowercase_changes(text: str) -> Changes:
    """HF ``NormalizedString::lowercase``: the first char of each expansion replaces, the rest are inserted."""
    changes: Changes = []
    for c in text:
        low = _lower_char(c)
        changes.append((low[0], 0))
        changes.extend((x, 1) for x in low[1:])
    return changes


def _ccc(c: str) -> int:
    return 0 if c in _inert_chars() else unicodedata.combining(c)


@functools.lru_cache(maxsize=65536)
def _expand(c: str, compat: bool) -> tuple[str, ...]:
    """Full recursive decomposition of one char, in mapping order (not yet reordered)."""
    cp = ord(c)
    if cp < 0xA0 or c in _inert_chars():  # nothing below U+00A0 decomposes
        return (c,)
    s = cp - _HANGUL_S
    if 0 <= s < _HANGUL_S_COUNT:
        jamo = [chr(_HANGUL_L + s // _HANGUL_VT_COUNT), chr(_HANGUL_V + s % _HANGUL_VT_COUNT // _HANGUL_T_COUNT)]
        if s % _HANGUL_T_COUNT:
            jamo.append(chr(_HANGUL_T + s % _HANGUL_T_COUNT))
        return tuple(jamo)
    mapping = unicodedata.decomposition(c)
    if not mapping or (mapping.startswith("<") and not compat):
        return (c,)
    out: list[str] = []
    for part in mapping.split():
        if not part.startswith("<"):
            out.extend(_expand(chr(int(part, 16)), compat))
    return tuple(out)


def _decompose(text: str, compat: bool) -> list[tuple[int, str, int]]:
    """HF ``Decompositions``: (combining class, char, change), canonically ordered."""
    items: list[tuple[int, str, int]] = []
    pending = 0  # start of the run that is not sorted yet
    key = itemgetter(0)
    for c in text:
        tag = 0
        for d in _expand(c, compat):
            ccc = _ccc(d)
            if ccc == 0:
                if len(items) - pending > 1:
                    items[pending:] = sorted(items[pending:], key=key)
                pending = len(items)
            items.append((ccc, d, tag))
            tag = 1
    if len(items) - pending > 1:
        items[pending:] = sorted(items[pending:], key=key)
    return items


@functools.lru_cache(maxsize=65536)
def _compose(a: str, b: str) -> str | None:
    """The primary composite of the pair, if any (canonical composition)."""
    inert = _inert_chars()
    if a in inert or b in inert:
        return None
    composed = unicodedata.normalize("NFC", a + b)
    return composed if len(composed) == 1 and composed not in inert else None


def _recompose(items: list[tuple[int, str, int]]) -> Changes:
    """HF ``Recompositions`` over tagged decomposed chars."""
    out: Changes = []
    starter: tuple[str, int] | None = None
    blocked: Changes = []
    last_ccc = -1  # combining class of the last blocked mark; -1 when none
    for ccc, c, tag in items:
        if starter is None:
            if ccc == 0:
                starter = (c, tag)
            else:
                out.append((c, tag))
            continue
        if last_ccc >= ccc:  # blocked from the starter
            if ccc == 0:
                out.append(starter)
                out.extend(blocked)
                blocked, last_ccc, starter = [], -1, (c, tag)
            else:
                blocked.append((c, tag))
                last_ccc = ccc
            continue
        composite = _compose(starter[0], c)
        if composite is not None:
            starter = (composite, starter[1] + tag - 1)
        elif ccc == 0 and last_ccc < 0:
            out.append(starter)
            starter = (c, tag)
        else:
            blocked.append((c, tag))
            last_ccc = ccc
    if starter is not None:
        out.append(starter)
    out.extend(blocked)
    return out


def normalize_changes(form: str, text: str) -> Changes:
    """The ``(char, change)`` list HF's normalization iterator yields for `text`."""
    items = _decompose(text, form in ("NFKC", "NFKD"))
    if form in ("NFC", "NFKC"):
        return _recompose(items)
    return [(c, tag) for _, c, tag in items]
