"""Replace decoder: substitute a literal or a regex in every token.

Stage: decoder. JSON: ``{"type": "Replace", "pattern": {"String": s} |
{"Regex": r}, "content": str}`` (shared with the Replace normalizer).

Reproduces HF tokenizers 0.23.3 ``tokenizers/src/normalizers/replace.rs``
(``impl Decoder for Replace``): each token is cut into matches and gaps with
the Oniguruma pattern (``Pattern::find_matches`` over ``SysRegex``; a
``String`` is the escaped literal) and every match is replaced by `content`,
taken literally (no group references). An empty token stays empty even when
the pattern matches the empty string; otherwise an empty pattern matches
between every pair of chars (``"" -> "x"`` turns ``"ab"`` into ``"xaxbx"``).

A ``String`` pattern uses ``str.replace``, which cuts the same non-overlapping
leftmost matches as the escaped regex and is much faster.
"""

from __future__ import annotations

from typing import Any

from .._config import required
from ..regex.oniguruma import compile_onig, find_matches, read_pattern


class Replace:
    def __init__(self, pattern: str, content: str, *, regex: bool = False, key: str = "pattern") -> None:
        self.pattern = pattern
        self.content = content
        self.is_regex = regex
        self._regex = compile_onig(pattern, key) if regex else None

    @classmethod
    def from_config(cls, d: dict[str, Any], path: str) -> Replace:
        source, is_regex, key = read_pattern(d, path)
        content: str = required(d, "content", str, path)
        return cls(source, content, regex=is_regex, key=key)

    def decode_chain(self, tokens: list[str]) -> list[str]:
        if self._regex is None:
            old, new = self.pattern, self.content
            return [t.replace(old, new) if t else t for t in tokens]
        return [self._replace_regex(t) for t in tokens]

    def _replace_regex(self, token: str) -> str:
        assert self._regex is not None
        if self._regex.search(token) is None:
            return token
        parts = [self.content if is_match else token[s:e] for s, e, is_match in find_matches(self._regex, token)]
        return "".join(parts)
