"""How pre-tokenizers cut a piece at pattern matches: HF ``SplitDelimiterBehavior``.

Reproduces HF tokenizers 0.23.3 ``tokenizers/src/tokenizer/normalizer.rs``
(``NormalizedString::split``: the per-behaviour folds over the covering
``(offsets, is_match)`` list) and ``tokenizer/pattern.rs`` (``Pattern`` for a
regex, for ``Fn(char) -> bool`` and ``Invert``).

Two splitters share every pre-tokenizer's work, each with a fast path (plain
strings) and an aligned path (spans for `NormalizedString.slices`) built from
the same rule:

* `RegexSplitter` (Split, ByteLevel, Whitespace): onig match iteration
  (`regex.oniguruma.find_matches`), then `apply_behavior`. Its fast path takes
  ``findall`` directly where the answer cannot differ: no empty match (so
  Python's and onig's match iteration agree, see `regex.oniguruma.match_spans`)
  and either ``Isolated`` over matches that cover the text, or ``Removed``
  with ``invert`` (the matches themselves). For the well-known patterns that
  ``findall`` is a compiled scanner (`regex.scanners`) when the kernels are built.
* `CharSplitter` (the char-predicate patterns of Punctuation, Digits,
  BertPreTokenizer, WhitespaceSplit, CharDelimiterSplit, Metaspace): HF makes
  every matching char its own match, so each behaviour is one regex over a
  character class whose matches are exactly the pieces `apply_behavior` would
  give; both paths use that regex (``findall`` / ``finditer``).

``empty_matches`` -- what an empty match of a `RegexSplitter` becomes:

* ``"drop"`` (HF tokenizers, default): a piece of no text, dropped
  (``PreTokenizedString::split`` keeps only non-empty pieces).
* ``"keep"`` (tiktoken 0.14.0 with a token of no bytes, src/lib.rs
  ``CoreBPE::encode_ordinary`` and ``encode``): every match ``find_iter`` reports is a
  piece, an empty one too, and so is the empty match of an empty text (tiktoken runs
  ``find_iter`` on the text between special tokens even where it is empty, which
  `special.with_empty_texts` reproduces); the model gives it the empty token.
* ``"refuse"`` (tiktoken without one: ``byte_pair_encode`` of no bytes panics):
  `EmptyMatchError` at the first empty match reported, naming its place.

Both take only ``removed`` with ``invert`` (tiktoken's split: the matches are the
pieces). fancy-regex 0.19 ``Matches::next_with`` (as onig, and regex-automata's
``find_iter``) reports no empty match that ends where the previous match ended and
searches on one character later, so ``a*`` over ``"xay"`` gives ``""``, ``"a"``,
``""`` (at 0, 1 and 3); `regex.oniguruma.match_spans` walks that way. Why no
pattern pays for this unless it meets an empty match: the fast path's ``findall``
(Python's iteration, which also reports an empty match right after a match) holds
``""`` exactly when a search of the walk, from the same positions as fancy-regex
searches, found an empty match, reported or not (until then both walks search from
the same places and find the same matches); only then does the exact walk run.
The one question asked when the splitter is built, whether the empty text gives a
piece (`splits_empty_text`), is the very search tiktoken makes on an empty text, so
no pattern is guessed at. Every known rank file's pattern matches only non-empty
text (each alternative reads at least one character): its paths are unchanged.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal, NamedTuple

import regex

from .._config import join, optional
from ..errors import EmptyMatchError, FormatError
from ..normalized import NormalizedString
from ..regex.oniguruma import Pattern, find_matches, match_spans
from ..regex.scanners import scanner_for, scanner_id
from .base import PreTokenizerBase

Behavior = Literal["removed", "isolated", "merged_with_previous", "merged_with_next", "contiguous"]
EmptyMatches = Literal["drop", "keep", "refuse"]
Span = tuple[int, int]

# tokenizer.json spelling (serde variant names) -> polytok option value
BEHAVIORS: dict[str, Behavior] = {
    "Removed": "removed",
    "Isolated": "isolated",
    "MergedWithPrevious": "merged_with_previous",
    "MergedWithNext": "merged_with_next",
    "Contiguous": "contiguous",
}


def behavior_from_config(d: dict[str, Any], key: str, path: str, default: Behavior | None = None) -> Behavior:
    """Read a behaviour; a missing key gives `default` (or is an error when there is none)."""
    if key not in d and default is not None:
        return default
    if key not in d:
        raise FormatError(f"missing required key {key!r}", key=path)
    value = optional(d, key, str, path)
    if value is None or value not in BEHAVIORS:
        raise FormatError(f"unknown split behavior {d[key]!r}, expected one of {', '.join(BEHAVIORS)}",
                          key=join(path, key))
    return BEHAVIORS[value]


def apply_behavior(pieces: list[tuple[int, int, bool]], behavior: Behavior) -> list[Span]:
    """The spans HF keeps from a covering ``(start, end, is_match)`` list; may include empty ones.

    subtle: a zero-width match is a piece too. It vanishes as empty, but it
    still counts as "the previous piece was a match" for the Merged* and
    Contiguous folds, so ``x*`` merges differently than ``x+``.
    """
    if behavior == "isolated":
        return [(s, e) for s, e, _ in pieces]
    if behavior == "removed":
        return [(s, e) for s, e, is_match in pieces if not is_match]
    ordered = pieces[::-1] if behavior == "merged_with_next" else pieces
    out: list[Span] = []
    previous = False
    for s, e, is_match in ordered:
        if behavior == "contiguous":
            merge = is_match == previous
        else:
            merge = is_match and not previous
        if merge and out:
            a, b = out[-1]
            out[-1] = (s, b) if behavior == "merged_with_next" else (a, e)
        else:
            out.append((s, e))
        previous = is_match
    if behavior == "merged_with_next":
        out.reverse()
    return out


def cut(text: str, spans: list[Span]) -> list[str]:
    """The non-empty pieces of `text` at `spans`."""
    return [text[s:e] for s, e in spans if e > s]


class PatternProof(NamedTuple):
    """What the owner of a pattern (ByteLevel, a known Split) has proven of its isolated split:
    its matches tile any text with no empty one (so `RegexSplitter.pieces` skips the check), and
    for `polytok.parallel.resumable_scan`, which stops scans early with it: the match found
    at a position and ending at ``e`` depends only on the text before ``e + decided_within``,
    and, with `reads_space_runs`, on the whole run of white space (``\\s``) that starts where
    the match does and the char after that run, however far that is."""

    decided_within: int
    reads_space_runs: bool = False


class RegexSplitter:
    """Split at the matches of a compiled (onig-translated) pattern with a behaviour;
    `empty_matches` as in the module notes."""

    __slots__ = ("pattern", "behavior", "invert", "_findall", "_merged_findall", "proof", "empty_matches",
                 "splits_empty_text")

    def __init__(self, pattern: Pattern, behavior: Behavior, invert: bool = False,
                 proof: PatternProof | None = None, empty_matches: EmptyMatches = "drop") -> None:
        if empty_matches not in ("drop", "keep", "refuse"):
            raise ValueError(f"empty_matches must be 'drop', 'keep' or 'refuse', not {empty_matches!r}")
        if empty_matches != "drop" and (behavior != "removed" or not invert):
            raise ValueError("empty_matches='keep' or 'refuse' takes behavior 'removed' with invert (tiktoken's split)")
        self.pattern = pattern
        self.behavior = behavior
        self.invert = invert
        # a known pattern's compiled scanner (`regex.scanners`) gives the same pieces as ``findall``
        self._findall = scanner_for(pattern) or (pattern.findall if pattern.groups == 0 else None)
        self._merged_findall = _run_merged_findall(pattern, behavior) if not invert else None
        self.proof = proof  # the caller's promise (GPT-2's pattern; Llama 3's and Qwen2's isolated)
        self.empty_matches = empty_matches
        #: the empty text gives a piece (or, refusing, an error): the pattern matches it and empties count
        self.splits_empty_text = empty_matches != "drop" and pattern.search("") is not None

    def _matches(self, text: str) -> list[str]:
        if self._findall is not None:
            return self._findall(text)
        return [text[m.start():m.end()] for m in self.pattern.finditer(text)]

    def batch_scanner(self) -> int | None:
        """The scanner (`regex.scanners.scanner_id`) whose matches are exactly `pieces` of every
        non-empty text, or None: a known pattern, isolated or removed-and-inverted (its matches
        tile the text and are never empty, so both behaviours keep just the matches)."""
        if (self.behavior, self.invert) not in (("isolated", False), ("removed", True)):
            return None
        return scanner_id(self.pattern)

    @property
    def always_covers(self) -> bool:
        """True when the matches are proven to tile any text with no empty one (see `PatternProof`)."""
        return self.proof is not None

    def pieces(self, text: str) -> list[str]:
        """Fast path: the pieces as strings (empty ones dropped, unless kept)."""
        if not text:
            return [""] * len(self._matches_kept(text)) if self.splits_empty_text else []
        behavior = self.behavior
        if behavior == "isolated" and not self.invert:
            found = self._matches(text)
            if self.proof is not None or ("" not in found and sum(map(len, found)) == len(text)):
                return found
        elif behavior == "removed" and self.invert:
            found = self._matches(text)
            if "" not in found:
                return found
            if self.empty_matches != "drop":  # the walk met an empty match (see the module notes)
                return [text[s:e] for s, e in self._matches_kept(text)]
        elif self._merged_findall is not None:
            return self._merged_findall(text)
        elif behavior in ("merged_with_next", "merged_with_previous") and not self.invert:
            merged = self._merged_pieces(text, behavior == "merged_with_next")
            if merged is not None:
                return merged
        return cut(text, self.spans(text))

    def _merged_pieces(self, text: str, with_next: bool) -> list[str] | None:
        """The Merged* pieces cut straight from the matches, None if one is empty (then `spans`' rules).

        With no empty match the folds of `apply_behavior` come to this: a piece starts at every
        match (merged with next) or ends after every match (merged with previous). The lists of
        ``(start, end)`` tuples `spans` builds on the way took ~100 bytes per byte of short words."""
        pieces: list[str] = []
        prev = 0
        for match in self.pattern.finditer(text):
            start, end = match.span()
            if start == end:
                return None
            at = start if with_next else end
            if at > prev:
                pieces.append(text[prev:at])
                prev = at
        if prev < len(text):
            pieces.append(text[prev:])
        return pieces

    def spans(self, text: str) -> list[Span]:
        """Aligned path: every kept span, onig match iteration (empty ones included when kept)."""
        if self.empty_matches != "drop":
            return self._matches_kept(text)
        if not text:
            return []
        return apply_behavior(find_matches(self.pattern, text, self.invert), self.behavior)

    def _matches_kept(self, text: str) -> list[Span]:
        """The spans of the matches, empty ones too, or `EmptyMatchError` at the first empty one."""
        found = match_spans(self.pattern, text) if text else [(0, 0)] if self.splits_empty_text else []
        if self.empty_matches == "refuse":
            for start, end in found:
                if start == end:
                    raise EmptyMatchError(start)
        return found


def _run_merged_findall(pattern: Pattern, behavior: Behavior) -> Callable[[str], list[str]] | None:
    """For a pattern that matches runs of one character (``▁+``: the SentencePiece and GGUF
    word cut) merged with the next or previous text, one ``findall`` of a pattern matching the
    pieces themselves; None for any other pattern or behaviour.

    The matches of ``X+`` are never empty, so `_merged_pieces` starts a piece at each run
    (with next) or ends one after it (with previous): exactly the matches of ``X+[^X]*|[^X]+``
    and ``[^X]*X+|[^X]+``. One character that is not newer than Oniguruma's Unicode reads the
    same in the text and in `OnigPattern.view`."""
    source, view = getattr(pattern, "pattern", None), getattr(pattern, "view", None)
    if behavior not in ("merged_with_next", "merged_with_previous") or not isinstance(source, str) \
            or len(source) != 2 or source[1] != "+" or source[0] in "\\^$.|?*+()[]{}#" or view is None \
            or view(source[0]) != source[0]:
        return None
    x = regex.escape(source[0])
    pieces = f"{x}+[^{x}]*|[^{x}]+" if behavior == "merged_with_next" else f"[^{x}]*{x}+|[^{x}]+"
    return regex.compile(pieces).findall


# HF makes each char accepted by a predicate its own match; with `C` the class,
# these regexes match exactly the pieces each fold keeps (never empty).
_CHAR_PIECES: dict[Behavior, str] = {
    "removed": "[^{C}]+",
    "isolated": "[{C}]|[^{C}]+",
    "contiguous": "[{C}]+|[^{C}]+",
    "merged_with_previous": "[^{C}]+[{C}]?|[{C}]",
    "merged_with_next": "[{C}]?[^{C}]+|[{C}]",
}


class CharSplitter:
    """Split where a char belongs to a class (HF ``Pattern`` for ``Fn(char) -> bool``).

    Holds one regex whose matches are exactly the kept pieces.
    """

    __slots__ = ("pattern", "findall")

    def __init__(self, char_class: str, behavior: Behavior) -> None:
        """`char_class`: a class body or a nested `regex` V1 set (`polytok.text.chars.regex_set`)."""
        self.pattern = regex.compile(_CHAR_PIECES[behavior].replace("{C}", char_class), regex.V1)
        self.findall = self.pattern.findall

    @classmethod
    def from_pieces_regex(cls, pieces_regex: str) -> CharSplitter:
        """A splitter whose pieces are the matches of `pieces_regex` (V1; never empty matches)."""
        splitter = cls.__new__(cls)
        splitter.pattern = regex.compile(pieces_regex, regex.V1)
        splitter.findall = splitter.pattern.findall
        return splitter

    def pieces(self, text: str) -> list[str]:
        return self.findall(text)

    def spans(self, text: str) -> list[Span]:
        return [m.span() for m in self.pattern.finditer(text)]


class SplittingPreTokenizer(PreTokenizerBase):
    """Base of the pre-tokenizers that only cut (no char changes): both paths from ``_splitter``."""

    _splitter: RegexSplitter | CharSplitter

    @property
    def splitter(self) -> RegexSplitter | CharSplitter:
        """What cuts the text (read by `polytok.parallel.resumable_scan`)."""
        return self._splitter

    def pre_tokenize(self, text: str, at_origin: bool = True) -> list[str]:
        return self._splitter.pieces(text)

    def pre_tokenize_aligned(self, ns: NormalizedString) -> list[NormalizedString]:
        splitter = self._splitter
        if isinstance(splitter, RegexSplitter) and splitter.empty_matches != "drop":
            try:
                return [ns.slice(a, b) for a, b in splitter.spans(ns.text)]
            except EmptyMatchError as exc:  # its place in the input, through the alignments
                raise EmptyMatchError(ns.position(exc.position)[0]) from None
        return ns.slices(splitter.spans(ns.text))
