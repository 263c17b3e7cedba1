"""Split pre-tokenizer: cut at the matches of a literal or an Oniguruma regex.

JSON: ``{"type": "Split", "pattern": {"String": s} | {"Regex": r}, "behavior":
"Removed" | "Isolated" | "MergedWithPrevious" | "MergedWithNext" | "Contiguous",
"invert": bool}``, all keys required.

Reproduces HF tokenizers 0.23.3 ``tokenizers/src/pre_tokenizers/split.rs``
(``Split::new``, ``Split::pre_tokenize``): a ``String`` pattern is escaped and a
``Regex`` one used as is, both compiled by Oniguruma (here: `regex_dialect`);
`invert` flips every piece's is-match flag before the behaviour applies, so
``Removed`` + `invert` keeps only the matches (GPT-4 style findall) and drops
the text between them. An empty ``String`` matches the empty string at every
position, which cuts the text into single chars. The behaviours and the
zero-width-match rule live in `split_behavior`.

``dialect`` names the regex engine the pattern was written for: ``"onig"``
(HF, default) or ``"fancy"`` (Rust fancy-regex: tiktoken / tekken
``pat_str``, see `polytok.regex_fancy`).

The fast path of the Llama-3 / Qwen / GPT-4o style ``Isolated`` regexes is a
single ``findall`` (see `split_behavior.RegexSplitter`).
"""

from __future__ import annotations

from typing import Any, Literal

from .._config import required
from ..regex_dialect import Pattern, compile_literal, compile_onig, read_pattern
from .split_behavior import Behavior, RegexSplitter, SplittingPreTokenizer, behavior_from_config


class Split(SplittingPreTokenizer):
    """Split pre-tokenizer.

    Args:
        pattern: the literal (``is_regex=False``) or Oniguruma regex to split at.
        behavior: what happens to the matches, see `split_behavior.BEHAVIORS`.
        invert: split at the text between matches instead.
        is_regex: whether `pattern` is a regex (JSON ``Regex``) or a literal (``String``).
        dialect: the regex engine `pattern` is written for: ``"onig"`` (HF) or ``"fancy"`` (tiktoken).
    """

    def __init__(self, pattern: str, behavior: Behavior, *, invert: bool = False, is_regex: bool = True,
                 key: str = "pattern", dialect: Literal["onig", "fancy"] = "onig") -> None:
        self.pattern = pattern
        self.is_regex = is_regex
        self.behavior = behavior
        self.invert = invert
        compiled: Pattern
        if is_regex and dialect == "fancy":
            from ..regex_fancy import compile_fancy

            compiled = compile_fancy(pattern, key)
        else:
            compiled = compile_onig(pattern, key) if is_regex else compile_literal(pattern)
        self._splitter = RegexSplitter(compiled, behavior, invert)

    @classmethod
    def from_config(cls, d: dict[str, Any], path: str) -> "Split":
        pattern, is_regex, key = read_pattern(d, path)
        behavior = behavior_from_config(d, "behavior", path)
        invert = required(d, "invert", bool, path)
        return cls(pattern, behavior, invert=invert, is_regex=is_regex, key=key)
