"""Split pre-tokenizer: cut at the matches of a literal or an Oniguruma regex.

JSON: ``{"type": "Split", "pattern": {"String": s} | {"Regex": r}, "behavior":
"Removed" | "Isolated" | "MergedWithPrevious" | "MergedWithNext" | "Contiguous",
"invert": bool}``, all keys required.

Reproduces HF tokenizers 0.23.3 ``tokenizers/src/pre_tokenizers/split.rs``
(``Split::new``, ``Split::pre_tokenize``): a ``String`` pattern is escaped and a
``Regex`` one used as is, both compiled by Oniguruma (here: `regex.oniguruma`);
`invert` flips every piece's is-match flag before the behaviour applies, so
``Removed`` + `invert` keeps only the matches (GPT-4 style findall) and drops
the text between them. An empty ``String`` matches the empty string at every
position, which cuts the text into single chars. The behaviours and the
zero-width-match rule live in `split_behavior`.

``dialect`` names the regex engine the pattern was written for: ``"onig"``
(HF, default) or ``"fancy"`` (Rust fancy-regex: tiktoken / tekken
``pat_str``, see `polytok.regex.fancy`).

``empty_matches`` says what an empty match becomes: ``"drop"`` (HF, default),
``"keep"`` or ``"refuse"`` (tiktoken with or without a token of no bytes); see
`split_behavior`'s notes.

The fast path of the Llama-3 / Qwen / GPT-4o style ``Isolated`` regexes is a
single ``findall`` (see `split_behavior.RegexSplitter`).
"""

from __future__ import annotations

from typing import Any, Literal

from .._config import required
from ..regex.oniguruma import Pattern, compile_literal, compile_onig, read_pattern
from ..regex.split_patterns import LLAMA3, QWEN2
from .split_behavior import (
    BEHAVIORS,
    Behavior,
    EmptyMatches,
    PatternProof,
    RegexSplitter,
    SplittingPreTokenizer,
    behavior_from_config,
)

# Patterns known by heart, as tokenizer.json files spell them, and what is proven of their
# isolated splits (`split_behavior.PatternProof`, which `parallel.resumable_scan` relies on):
# Llama 3's and Qwen2's (Qwen3's too), which differ only in ``\p{N}{1,3}`` / ``\p{N}``:
# - every char is a letter, a digit, white space or none of these, and some alternative matches
#   a non-empty run of each kind, so the matches tile any text;
# - the contractions read at most 3 chars; the letter, digit and symbol alternatives (the symbol
#   one with its trailing ``[\r\n]*``) read their run and the char after it, where the match
#   ends; the alternatives tried before the one that matches read no further. So a match ending
#   at ``e`` is decided by the text before ``e + 2``, except for
# - ``\s*[\r\n]+``, ``\s+(?!\S)`` and ``\s+``, which read the whole run of white space that
#   starts where the match does, and the char after it: ``\s*[\r\n]+`` stops at the run's last
#   line break, however many spaces follow it.
_PROVEN_ISOLATED = dict.fromkeys((LLAMA3, QWEN2), PatternProof(decided_within=2, reads_space_runs=True))

# Onig patterns whose splitter (two `regex` compiles, about half a millisecond in a fresh process)
# is made on first use instead of at load: each is known to compile (the tests compile it), so
# no error moves from a load to an encode. "▁+" is the sentencepiece reader's word cut.
_COMPILED_ON_FIRST_USE = frozenset({"\u2581+"})


class Split(SplittingPreTokenizer):
    """Split pre-tokenizer.

    Args:
        pattern: the literal (``is_regex=False``) or Oniguruma regex to split at.
        behavior: what happens to the matches, see `split_behavior.BEHAVIORS`.
        invert: split at the text between matches instead.
        is_regex: whether `pattern` is a regex (JSON ``Regex``) or a literal (``String``).
        dialect: the regex engine `pattern` is written for: ``"onig"`` (HF) or ``"fancy"`` (tiktoken).
        empty_matches: ``"drop"`` (HF, default), ``"keep"`` or ``"refuse"`` (tiktoken, with
            ``"removed"`` and `invert`): see `split_behavior`.
    """

    def __init__(self, pattern: str, behavior: Behavior, *, invert: bool = False, is_regex: bool = True,
                 key: str = "pattern", dialect: Literal["onig", "fancy"] = "onig",
                 empty_matches: EmptyMatches = "drop") -> None:
        self.pattern = pattern
        self.is_regex = is_regex
        self.behavior = behavior
        self.invert = invert
        if is_regex and dialect == "onig" and pattern in _COMPILED_ON_FIRST_USE and empty_matches == "drop" \
                and behavior in BEHAVIORS.values():
            self._key = key  # the splitter is made when first asked for (`__getattr__`)
            return
        self._splitter = self._make_splitter(key, dialect, empty_matches)
        self.splits_empty_text = self._splitter.splits_empty_text

    def _make_splitter(self, key: str, dialect: Literal["onig", "fancy"], empty_matches: EmptyMatches) -> RegexSplitter:
        pattern, is_regex, behavior, invert = self.pattern, self.is_regex, self.behavior, self.invert
        compiled: Pattern
        if is_regex and dialect == "fancy":
            from ..regex.fancy import compile_fancy

            compiled = compile_fancy(pattern, key)
        else:
            compiled = compile_onig(pattern, key) if is_regex else compile_literal(pattern)
        proof = (_PROVEN_ISOLATED.get(pattern) if is_regex and dialect == "onig" and behavior == "isolated"
                 and not invert else None)
        return RegexSplitter(compiled, behavior, invert, proof, empty_matches)

    def __getstate__(self) -> dict[str, Any]:
        """Pickled without a splitter made on first use (made again after unpickling)."""
        state = self.__dict__.copy()
        if "_key" in state:
            state.pop("_splitter", None)
        return state

    def __getattr__(self, name: str) -> Any:
        # only reached while `_splitter` is unset (a pattern of `_COMPILED_ON_FIRST_USE`)
        if name != "_splitter" or "_key" not in self.__dict__:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        self._splitter = made = self._make_splitter(self.__dict__["_key"], "onig", "drop")
        return made

    def batch_split(self) -> str | int | None:
        # sentencepiece's whitespace split as the readers write it, "▁+" merged with the next
        # piece: a cut before each run of "▁" but one at the start of the text
        if self.is_regex and not self.invert and self.behavior == "merged_with_next" and self.pattern == "\u2581+":
            return "\u2581"
        return self._splitter.batch_scanner() if isinstance(self._splitter, RegexSplitter) else None

    def never_cuts_without(self, char: str) -> bool:
        """Whether every non-empty text that does not hold `char` stays one word: a literal
        pattern holding `char` matches nowhere in it, and with no match and no `invert` the
        text is one unmatched piece, which every behaviour keeps whole."""
        return not self.is_regex and not self.invert and len(char) == 1 and char in self.pattern

    @classmethod
    def from_config(cls, d: dict[str, Any], path: str) -> Split:
        pattern, is_regex, key = read_pattern(d, path)
        behavior = behavior_from_config(d, "behavior", path)
        invert = required(d, "invert", bool, path)
        return cls(pattern, behavior, invert=invert, is_regex=is_regex, key=key)
