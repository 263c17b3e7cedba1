"""Replace normalizer: replace every match of a literal or an Oniguruma regex.

Stage: normalizer. JSON: ``{"type": "Replace", "pattern": {"String": s} |
{"Regex": r}, "content": str}`` (all required; exactly one pattern kind).

Reproduces HF tokenizers 0.23.3 ``tokenizers/src/normalizers/replace.rs``
(``Replace::normalize``) and ``tokenizer/normalizer.rs``
(``NormalizedString::replace``): the matches are onig's ``find_iter`` over the
piece (`polytok.regex.oniguruma`; a ``String`` is the escaped literal), each is
replaced by `content` taken literally, and an empty piece is never touched.

Offsets: every character of `content` maps to the last character of its match
(HF inserts the content after deleting the match, so it inherits the alignment
just before the cursor): ``Replace("ab", "x")`` on ``"abc"`` maps ``x`` to
``b``. An empty match maps its content to the character before it, or to an
empty range at the start of the piece.

Fast path: a ``String`` pattern uses ``str.replace`` (the same leftmost
non-overlapping matches, even for an empty literal); a regex uses `finditer`
when it produced no empty match, where Python and onig iterate identically, and
onig's iteration otherwise. A literal's ``batch_kernel()`` is that replace in C
(`polytok._kernels.batch`).
"""

from __future__ import annotations

from typing import Any

from .._config import as_object, required
from ..normalized import NormalizedString
from ..regex.oniguruma import Pattern, compile_literal, compile_onig, match_spans, read_pattern
from .base import NormalizerBase


class Replace(NormalizerBase):
    def __init__(self, pattern: str, content: str, *, is_regex: bool = False, key: str = "pattern") -> None:
        self.pattern = pattern
        self.content = content
        self.is_regex = is_regex
        self._regex: Pattern = compile_onig(pattern, key) if is_regex else compile_literal(pattern)

    @classmethod
    def from_config(cls, d: dict[str, Any], path: str) -> Replace:
        d = as_object(d, path)
        source, is_regex, key = read_pattern(d, path)
        content: str = required(d, "content", str, path)
        return cls(source, content, is_regex=is_regex, key=key)

    def __repr__(self) -> str:
        kind = "Regex" if self.is_regex else "String"
        return f"Replace({kind}={self.pattern!r}, content={self.content!r})"

    def batch_kernel(self) -> tuple[Any, str, bool, bool, bool] | None:
        """A literal pattern's form for `polytok._kernels.batch`: ``(pattern, content)``, which it
        replaces as `str.replace` does (an empty pattern, or a regex, has none)."""
        if self.is_regex or not self.pattern:
            return None
        return (self.pattern, self.content), "", False, False, False

    def _spans(self, text: str) -> list[tuple[int, int]]:
        spans = [m.span() for m in self._regex.finditer(text)]
        if any(s == e for s, e in spans):
            # subtle: after an empty match Python and onig resume differently (§3.4).
            return match_spans(self._regex, text)
        return spans

    def normalize(self, text: str) -> str:
        if not text:
            return text
        if not self.is_regex:
            return text.replace(self.pattern, self.content)
        parts, prev = [], 0
        for start, end in self._spans(text):
            parts.append(text[prev:start])
            parts.append(self.content)
            prev = end
        parts.append(text[prev:])
        return "".join(parts)

    def normalize_aligned(self, ns: NormalizedString) -> None:
        text, align = ns.text, ns.align
        if not text:
            return
        new_text: list[str] = []
        new_align: list[tuple[int, int]] = []
        prev = 0
        empty = (ns.orig_start, ns.orig_start)
        for start, end in self._spans(text):
            new_text.append(text[prev:start])
            new_align.extend(align[prev:start])
            new_text.append(self.content)
            new_align.extend([align[end - 1] if end else empty] * len(self.content))
            prev = end
        new_text.append(text[prev:])
        new_align.extend(align[prev:])
        ns.text, ns.align = "".join(new_text), new_align
