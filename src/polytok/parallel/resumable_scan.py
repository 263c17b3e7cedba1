"""A pre-tokenizer's regex scan run from any position of a text, for `long_text`.

`scanner_for` picks out the pipelines whose pre-tokenizer starts with a regex scan
whose pieces are its matches (and, for ``isolated`` splits, the gaps between them),
followed only by stages that work on each piece alone, then a model that encodes
each word alone: ``Split`` with ``isolated``, or ``removed`` + ``invert``
(tiktoken); ``ByteLevel`` with its regex. That is the byte-level BPE family:
GPT-2, RoBERTa, Llama 3, Qwen, tiktoken and tekken files. Patterns `regex.guard`
runs under a time bound are left out, and so are splits that keep (or refuse) the
empty match of an empty text (`split_behavior.RegexSplitter.splits_empty_text`):
the empty texts between special tokens are pieces there. A scan that meets an
empty match elsewhere gives up (None), and `long_text` encodes that segment
through the pre-tokenizer, which keeps, refuses or drops it.

A scan is a function of the text and of the position it starts from: after a
match it searches again from the match's end, and what it finds at a position
depends only on the text (look-behinds and anchors see the whole text, because
every scan runs over the whole text from a start position rather than over a
slice). Two ways to run one (timed on GPT-2's pattern over bench_en; bench/README.md,
'Measurements behind design choices'):

- ``findall(view, pos)`` to the end of the text: the faster. Its pieces tile the text
  (checked: their lengths add up), so their starts are running sums of lengths.
- ``finditer(view, pos)`` taken in slices of match objects until one starts past
  a stop: slower, for the match objects. This is the only way
  to stop a scan early and stay exact: ``findall`` with an ``endpos`` sees the text
  end there, and a pattern such as ``\\s+(?!\\S)`` then matches differently well
  before the end (no bound on how far before holds for every pattern).

So a scan that must stop uses ``finditer`` and one that runs to the end uses
``findall``; `long_text` arranges for one region per seam to need the former.
Where the pattern's owner knows how far past a match's end the text can change it
(`split_behavior.PatternProof`: 2 chars for ByteLevel's own GPT-2 pattern, and for
Llama 3's and Qwen2's but for the runs of white space they read whole), a scan
stops with ``findall`` and an ``endpos`` instead, keeping only the matches that end
that far before it (`Scanner.pieces_until`): measured nearly as fast as ``findall``
to the end, and faster than ``finditer``; a good part of a two-worker ``count``'s
text is scanned by scans that stop (bench/README.md).
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Iterator
from itertools import accumulate, islice
from operator import eq, methodcaller
from typing import TYPE_CHECKING, Any

import regex

from ..pre_tokenizers.byte_level import ByteLevel
from ..pre_tokenizers.sequence import Sequence
from ..pre_tokenizers.split import Split
from ..pre_tokenizers.split_behavior import CharSplitter, PatternProof, RegexSplitter
from ..regex.oniguruma import OnigPattern
from ..regex.scanners import scanner_for as compiled_scanner

if TYPE_CHECKING:
    from ..pre_tokenizers import PreTokenizer
    from ..tokenizer import Tokenizer

__all__ = ["Scanner", "scanner_for"]

_SLICE = 4096  # match objects taken from finditer at a time
_REACH = 256  # how far past its stop `Scanner.pieces_until` first lets a findall read
_START, _END = methodcaller("start"), methodcaller("end")
# the run of white space that ends at a position, matched backwards from it (``\s`` as the
# translated patterns have it: same engine, same flags)
_SPACE_RUN_BEFORE = regex.compile(r"(?r)\s*", regex.MULTILINE)


class Scanner:
    """The first, scanning stage of a pre-tokenizer and the per-piece stages after it."""

    def __init__(self, native: Any, view: Callable[[str], str], gaps: bool,
                 mapped: Callable[[str], str] | None, rest: list[PreTokenizer], prefix_space: bool = False,
                 covers: bool = False, proof: PatternProof | None = None,
                 compiled: Callable[[str], list[str]] | None = None) -> None:
        self.native, self.view, self.gaps, self.mapped, self.rest = native, view, gaps, mapped, rest
        self.prefix_space = prefix_space  # ByteLevel's add_prefix_space: " " before a segment that lacks one
        # the pattern's matches tile any text and are never empty (`RegexSplitter`'s always_covers,
        # known for ByteLevel's own pattern), so a findall needs neither check below: the two
        # passes over the pieces were a measurable share of a count (callgrind; bench/README.md)
        self.covers = covers
        # with `covers`: how far past its end the text can change a match (`PatternProof`), which
        # lets `until` stop a findall exactly (see `pieces_until`)
        self.decided_within = proof.decided_within if covers and proof is not None else None
        self.reads_space_runs = proof is not None and proof.reads_space_runs
        # the pattern's compiled scanner (`regex.scanners`), when the kernels are built
        self.compiled = compiled

    def findall(self, view: str, pos: int, endpos: int | None = None) -> list[str]:
        """``native.findall(view, pos, endpos)``: through the compiled scanner where there is one, on
        the slice. The same pieces: none of the scanners' patterns has a look-behind, ``\\b``, ``^``
        or ``\\A`` (looking before `pos`), and ``endpos`` makes the text end there as a slice does."""
        if self.compiled is not None:
            return self.compiled(view[pos:endpos] if pos or endpos is not None else view)
        found: list[str] = self.native.findall(view, pos) if endpos is None else self.native.findall(view, pos, endpos)
        return found

    def to_end(self, text: str, view: str, pos: int) -> tuple[list[int], list[str]] | None:
        """Starts and pieces of the scan from `pos` to the end; None where a scan meets an
        empty match (onig's iteration rules would apply)."""
        found: list[str] = self.findall(view, pos)
        if not self.covers:
            if "" in found:
                return None
            if sum(map(len, found)) != len(view) - pos:  # gaps or dropped text: positions from the matches
                return self.until(text, view, pos, len(view))
        starts = list(accumulate(map(len, found), initial=pos))
        starts.pop()
        return starts, found if view is text else [text[s:s + len(p)] for s, p in zip(starts, found)]

    def until(self, text: str, view: str, pos: int, stop: int) -> tuple[list[int], list[str]] | None:
        """Starts and pieces of the scan from `pos`, up to the first that starts at `stop` or later."""
        if self.decided_within is not None:
            return self._until_bounded(text, view, pos, stop)
        matches: Iterator[Any] = self.native.finditer(view, pos)
        groups: list[str] = []
        first = last_end = -1
        while True:
            chunk = list(islice(matches, _SLICE))
            if not chunk:
                break
            if first < 0:
                first = chunk[0].start()
            groups += map(type(chunk[0]).group, chunk)  # one call per match: starts come from the lengths
            last_end = chunk[-1].end()
            if chunk[-1].start() >= stop:
                break
        if first < 0 or "" in groups or sum(map(len, groups)) != last_end - first:
            return self._until_spans(text, view, pos, stop)  # gaps between matches, or none at all
        starts = list(accumulate(map(len, groups), initial=first))
        cut = bisect_left(starts, stop, 0, len(groups))
        follows = starts[cut] if cut < len(groups) else len(view)
        del starts[cut:], groups[cut:]
        if self.gaps and (first != pos or (cut == len(starts) and last_end < min(stop, follows))):
            return self._until_spans(text, view, pos, stop)
        return starts, groups if view is text else [text[s:s + len(g)] for s, g in zip(starts, groups)]

    def _until_bounded(self, text: str, view: str, pos: int, stop: int) -> tuple[list[int], list[str]]:
        """`until` through `pieces_until`."""
        pieces, _ = self.pieces_until(view, pos, stop)
        starts = list(accumulate(map(len, pieces), initial=pos))
        starts.pop()
        return starts, pieces if view is text else [text[s:s + len(p)] for s, p in zip(starts, pieces)]

    def pieces_until(self, view: str, pos: int, stop: int) -> tuple[list[str], int]:
        """The pieces of `view` (not of the text, where they differ) that `until` gives, and where
        the last one ends, for a pattern whose matches tile the text and are decided within
        `decided_within` chars past their ends: ``findall`` with an ``endpos`` past `stop`,
        keeping the matches that end at least that far before it (exactly those of the scan
        over the whole text, as are the matches before them); a match that reaches past the
        limit (a long run of letters, say) is scanned again from the last match kept, with a
        farther end. Where a match may also read the whole run of white space that starts
        where it does (`reads_space_runs`: Llama 3's and Qwen2's ``\\s*[\\r\\n]+``), the matches
        that start in the run of white space ending at the end position are dropped too: a run
        that starts before it ends before it, at a char that is not white space. On bench_code
        with GPT-2's pattern this runs at ``findall``'s speed, where `finditer` and its match
        objects took twice as long."""
        within = self.decided_within
        assert within is not None, "pieces_until needs a pattern with decided_within"
        pieces: list[str] = []
        start, reach = pos, _REACH
        while True:
            end = stop + reach
            if end >= len(view):
                pieces += self.findall(view, start)
                start = len(view)
                break
            found: list[str] = self.findall(view, start, end)
            spaces = _space_run_start(view, start, end) if self.reads_space_runs else end
            kept, last = len(found), end  # the matches tile start..end: drop those ending too late
            while kept and (last > end - within or last - len(found[kept - 1]) >= spaces):
                kept -= 1
                last -= len(found[kept])
            del found[kept:]
            if pieces:
                pieces += found
            else:
                pieces = found
            start = last
            if start >= stop:
                break
            reach *= 2
        end = start  # of the last piece: drop those that start at `stop` or later
        while pieces and end - len(pieces[-1]) >= stop:
            end -= len(pieces.pop())
        return pieces, end

    def _until_spans(self, text: str, view: str, pos: int, stop: int) -> tuple[list[int], list[str]] | None:
        """`until` from each match's span, for scans whose matches leave gaps."""
        matches: Iterator[Any] = self.native.finditer(view, pos)
        starts: list[int] = []
        ends: list[int] = []
        follows = len(view)  # where the first match not taken starts
        while True:
            chunk = list(islice(matches, _SLICE))
            if not chunk:
                break
            starts += map(_START, chunk)
            ends += map(_END, chunk)
            if starts[-1] >= stop:
                break
        cut = bisect_left(starts, stop)
        if cut < len(starts):
            follows = starts[cut]
            del starts[cut:], ends[cut:]
        if any(map(eq, starts, ends)):
            return None
        if self.gaps:
            starts, ends = _with_gaps(starts, ends, pos, stop, follows)
        return starts, [text[s:e] for s, e in zip(starts, ends)]

    def words(self, piece: str) -> list[str]:
        words = [self.mapped(piece)] if self.mapped is not None else [piece]
        for stage in self.rest:
            words = stage.pre_tokenize_each(words)
        return words

    def one_word(self) -> Callable[[str], str] | None:
        """The piece -> word function when every piece is one word (a byte mapping at most), else None."""
        mapped = self.mapped
        for stage in self.rest:
            if not (isinstance(stage, ByteLevel) and not stage.use_regex and not stage.add_prefix_space
                    and mapped is None):
                return None
            mapped = stage.byte_form
        return mapped if mapped is not None else (lambda piece: piece)


def _space_run_start(view: str, start: int, end: int) -> int:
    """Where the run of white space that ends at `end` starts (`end` if there is none), not before `start`."""
    found = _SPACE_RUN_BEFORE.match(view, start, end)
    return end if found is None else found.start()


def _with_gaps(starts: list[int], ends: list[int], pos: int, stop: int, follows: int) -> tuple[list[int], list[int]]:
    """An ``isolated`` split's pieces: the matches and the text between them; a final gap
    that starts before `stop` runs to `follows`, where the next match starts."""
    out_s: list[int] = []
    out_e: list[int] = []
    last = pos
    for start, end in zip(starts, ends):
        if start > last:
            out_s.append(last)
            out_e.append(start)
        out_s.append(start)
        out_e.append(end)
        last = end
    if last < min(stop, follows):
        out_s.append(last)
        out_e.append(follows)
    return out_s, out_e


def scanner_for(tok: Tokenizer) -> Scanner | None:
    """The scan `long_text` can share out for `tok`'s pipeline, or None (see the module notes)."""
    pre = tok.pre_tokenizer
    if pre is None or not tok.fast_path:
        return None
    first, rest = (pre.pretokenizers[0], pre.pretokenizers[1:]) if isinstance(pre, Sequence) else (pre, [])
    if any(stage.reads_origin for stage in rest):
        return None
    mapped = None
    splitter: RegexSplitter | CharSplitter | None = None
    prefix_space = False
    if isinstance(first, ByteLevel):
        if not first.use_regex:
            return None
        splitter, mapped, prefix_space = first.splitter, first.byte_form, first.add_prefix_space
    elif isinstance(first, Split):
        splitter = first.splitter
    if not isinstance(splitter, RegexSplitter) or splitter.splits_empty_text:
        return None
    if splitter.behavior == "isolated" and not splitter.invert:
        gaps = True
    elif splitter.behavior == "removed" and splitter.invert:
        gaps = False
    else:
        return None
    covers = gaps and splitter.always_covers
    pattern = splitter.pattern
    if isinstance(pattern, OnigPattern):
        if pattern.bounded:  # a risky pattern runs under its time bound, in one process (regex.guard)
            return None
        return Scanner(pattern.native, pattern.view, gaps, mapped, rest, prefix_space, covers, splitter.proof,
                       compiled_scanner(pattern))
    return Scanner(pattern, lambda text: text, gaps, mapped, rest, prefix_space, covers, splitter.proof)
