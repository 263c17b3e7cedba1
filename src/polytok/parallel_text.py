"""One long text on every core, with exactly the ids one process gives.

`encode_long` cuts one text into regions, encodes each region in a forked worker
and joins the results. Cutting a text changes its tokens in general (a piece may
span the cut, a regex may decide differently near it), so the cut is never
chosen in advance; it is found where two workers provably agree.

Which pipelines (`scanner_for`): those whose pre-tokenizer starts with a regex
scan whose pieces are its matches and the gaps between them — ``Split`` with
``isolated``, or ``removed`` + ``invert`` (tiktoken); ``ByteLevel`` with its
regex and no prefix space — followed only by stages that work on each piece
alone (ByteLevel's byte mapping, further splits that do not read the origin),
then a model that encodes each word alone. That is the byte-level BPE family:
GPT-2, RoBERTa, Llama 3, Qwen, tiktoken and tekken files. Anything else (and
and normalized added tokens are split out as `Tokenizer.encode` does). Anything else returns None, and the caller encodes in one process.

Why the join is exact. A regex scan (``finditer``) is a function of the text and
of the position its next search starts from, nothing else: after a match it
searches again from the match's end, and the match found at a position depends
only on the text there (look-behinds and anchors see the real text too, because
every worker scans the whole text from a start position, ``finditer(text, pos)``,
rather than a slice). Worker ``j`` scans from ``OVERLAP`` characters before its
region and on past the region's end by ``OVERLAP``. If a piece starts at the
same position ``b`` in worker ``j - 1``'s scan (which, by induction, is the scan
of the whole text) and in worker ``j``'s, both scans go on identically from
``b``: either both search from ``b``, or one found its leftmost match at ``b``,
which the other's search from ``b`` finds too. So worker ``j - 1``'s pieces are
kept up to ``b`` and worker ``j``'s from ``b``. The special-token split and the
normalizer run on the whole text in the calling process, as `Tokenizer.encode`
runs them. If no common start exists in an overlap (one piece longer than the
overlap, say), or a scan meets an empty match (onig's iteration rules would
apply), the text is encoded in one process instead: same ids, slower.

Not used by default yet, measured: the region scan iterates ``finditer`` match
objects, and the `regex` module's match objects cost about 2 µs each, so on
Llama 3 over the three bench texts (1.1M pieces) the regions take 3.9-5.6 s of
CPU in total against 2.1-2.7 s for one process's ``findall`` path: two workers
are no faster than one process. `polytok count` shares whole files instead. The
next step is a ``findall`` scan bounded by ``endpos`` with a proof (or check)
that the bound cannot change the pieces kept.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left
from functools import partial
from itertools import chain
from operator import eq
from typing import TYPE_CHECKING, Any, Callable, Iterator

from .parallel import can_fork, map_in_pool
from .pre_tokenizers.byte_level import ByteLevel
from .pre_tokenizers.sequence import Sequence
from .pre_tokenizers.split import Split
from .pre_tokenizers.split_behavior import RegexSplitter
from .regex_dialect import OnigPattern

if TYPE_CHECKING:
    from .tokenizer import Tokenizer

__all__ = ["encode_long", "scanner_for", "MIN_CHARS", "OVERLAP"]

OVERLAP = 4096  # characters a worker scans before and after its region
MIN_CHARS = 200_000  # a text shorter than this is not worth a pool


class _Unsafe(Exception):
    """A scan met something the join cannot vouch for."""


class Scanner:
    """The first, scanning stage of a pre-tokenizer and the per-piece stages after it."""

    def __init__(self, search: Callable[..., Iterator[Any]], view: Callable[[str], str], gaps: bool,
                 mapped: Callable[[str], str] | None, rest: list[Any], prefix_space: bool = False) -> None:
        self.search, self.view, self.gaps, self.mapped, self.rest = search, view, gaps, mapped, rest
        self.prefix_space = prefix_space  # ByteLevel's add_prefix_space: " " before a segment that lacks one

    def pieces(self, view: str, pos: int, stop: int) -> list[tuple[int, int]]:
        """``(start, end)`` of each piece of a scan from `pos`, until one starts at `stop` or later."""
        spans: list[tuple[int, int]] = []
        add = spans.append
        follows = len(view)  # where the first match not taken starts (the end of a final gap)
        for match in self.search(view, pos):
            span = match.span()
            if span[0] >= stop:
                follows = span[0]
                break
            add(span)
        if spans and any(map(eq, *zip(*spans))):  # an empty match: onig's iteration rules would apply
            raise _Unsafe
        if not self.gaps:
            return spans
        out: list[tuple[int, int]] = []  # isolated: the text between matches is a piece too
        last = pos
        for start, end in spans:
            if start > last:
                out.append((last, start))
            out.append((start, end))
            last = end
        if last < min(stop, follows):
            out.append((last, follows))
        return out

    def words(self, piece: str) -> list[str]:
        words = [self.mapped(piece)] if self.mapped is not None else [piece]
        for stage in self.rest:
            each = getattr(stage, "pre_tokenize_each", None)
            words = each(words) if each is not None else [w for p in words for w in stage.pre_tokenize(p, False)]
        return words

    def one_word(self) -> Callable[[str], str] | None:
        """The piece -> word function when every piece is one word (a byte mapping at most), else None."""
        mapped = self.mapped
        for stage in self.rest:
            if not (isinstance(stage, ByteLevel) and not stage.use_regex and not stage.add_prefix_space
                    and mapped is None):
                return None
            mapped = stage._mapped
        return mapped if mapped is not None else (lambda piece: piece)


def scanner_for(tok: "Tokenizer") -> Scanner | None:
    """The scan `encode_long` can share out for `tok`'s pipeline, or None (see the module notes)."""
    pre = tok.pre_tokenizer
    if pre is None or not getattr(tok, "_fast_exact", False):
        return None
    first, rest = (pre.pretokenizers[0], pre.pretokenizers[1:]) if isinstance(pre, Sequence) else (pre, [])
    if any(getattr(stage, "reads_origin", True) for stage in rest):
        return None
    mapped = None
    splitter: Any = None
    prefix_space = False
    if isinstance(first, ByteLevel):
        if not first.use_regex:
            return None
        splitter, mapped, prefix_space = first._splitter, first._mapped, first.add_prefix_space
    elif isinstance(first, Split):
        splitter = first._splitter
    if not isinstance(splitter, RegexSplitter):
        return None
    if splitter.behavior == "isolated" and not splitter.invert:
        gaps = True
    elif splitter.behavior == "removed" and splitter.invert:
        gaps = False
    else:
        return None
    pattern = splitter.pattern
    if isinstance(pattern, OnigPattern):
        if pattern.bounded:  # a risky pattern runs under its time bound, in one process (regex_guard)
            return None
        return Scanner(pattern.native.finditer, pattern.view, gaps, mapped, rest, prefix_space)
    return Scanner(pattern.finditer, lambda text: text, gaps, mapped, rest, prefix_space)


def _run(job: tuple[Any, Scanner, list[str], list[tuple[str, str, list[tuple[int, int]]]], bool, Any],
         task: tuple[str, int, int]) -> tuple[str, int, int, Any]:
    """A worker's share: a whole text's ids, or one region's ``(starts, id counts, ids)`` (None when unsafe).

    `job`: the tokenizer, the scanner, the texts, ``(text, view, regions)`` per long segment,
    add_special and special."""
    tok, scanner, texts, segments, add_special, special = job
    kind, index, j = task
    if kind == "whole":
        return kind, index, j, array("q", tok.encode(texts[index], add_special=add_special, special=special))
    text, view, regions = segments[index]
    lo, hi = regions[j]
    pos = 0 if j == 0 else lo - OVERLAP
    stop = len(text) if j == len(regions) - 1 else hi + OVERLAP
    try:
        spans = list(scanner.pieces(view, pos, stop))
    except _Unsafe:
        return kind, index, j, None
    pieces = [text[start:end] for start, end in spans]
    one_word, each = scanner.one_word(), getattr(tok.model, "tokenize_each", None)
    if one_word is not None and each is not None:  # the usual case, in bulk: the loops run in C
        found = each(list(map(one_word, pieces)))
    else:
        tokenize = tok.model.tokenize
        found = [[i for word in scanner.words(piece) for i in tokenize(word)] for piece in pieces]
    starts = array("q", [start for start, _ in spans])
    return kind, index, j, (starts, array("q", map(len, found)), array("q", chain.from_iterable(found)))


def _join(regions: list[tuple[int, int]], parts: list[Any]) -> list[int] | None:
    """The ids of one segment from its regions' results, cut where neighbours agree."""
    out: list[int] = []
    begin = 0  # where the current region's kept pieces start
    for j, (starts, counts, ids) in enumerate(parts):
        end = len(starts)
        if j + 1 < len(parts):
            following = set(parts[j + 1][0])
            low = bisect_left(starts, regions[j + 1][0] - OVERLAP)
            end = next((k for k in range(low, len(starts)) if starts[k] in following), -1)
            if end < 0:
                return None
        first = bisect_left(starts, begin)
        skip = sum(counts[:first])
        out.extend(ids[skip:skip + sum(counts[first:end])])
        begin = starts[end] if end < len(starts) else 0
    return out


def _plan(tok: "Tokenizer", scanner: Scanner, text: str, parse: bool, workers: int,
          segments: list[tuple[str, str, list[tuple[int, int]]]]) -> list[tuple[str, Any]]:
    """How one text is encoded, as `Tokenizer._text_ids` does it: per piece of the special
    split (and, for normalized added tokens, of the second split on the normalized text)
    ``("id", token id)``, ``("short", (text, at origin))`` or ``("long", segment index)``,
    in order; long segments go to `segments`."""
    plan: list[tuple[str, Any]] = []
    added = tok.special_split
    for start, end, token_id in added.split_raw(text, parse):
        if token_id is not None:
            plan.append(("id", token_id))
            continue
        if start == end:
            continue
        piece = text[start:end]
        if tok.normalizer is not None:
            piece = tok.normalizer.normalize(piece)
        parts = added.split_normalized(piece, parse) if added.has_normalized else [(0, len(piece), None)]
        for s2, e2, id2 in parts:
            if id2 is not None:
                plan.append(("id", id2))
            elif e2 > s2:
                _plan_text(scanner, piece[s2:e2], start == 0 and s2 == 0, workers, plan, segments)
    return plan


def _plan_text(scanner: Scanner, piece: str, at_origin: bool, workers: int, plan: list[tuple[str, Any]],
               segments: list[tuple[str, str, list[tuple[int, int]]]]) -> None:
    n_regions = min(workers * 2 + 1, len(piece) // (4 * OVERLAP))
    if n_regions < 2:
        plan.append(("short", (piece, at_origin)))
        return
    if scanner.prefix_space and not piece.startswith(" "):
        piece = " " + piece  # what ByteLevel.pre_tokenize does to the whole piece
    size = -(-len(piece) // n_regions)
    regions = [(lo, min(lo + size, len(piece))) for lo in range(0, len(piece), size)]
    plan.append(("long", len(segments)))
    segments.append((piece, scanner.view(piece), regions))


def encode_long(tok: "Tokenizer", texts: list[str], *, add_special: bool, special: Any, workers: int,
                on_done: Callable[[int], None] | None = None) -> list[list[int]] | None:
    """``[tok.encode(t, ...) for t in texts]``, each long text shared over `workers` forked processes.

    Texts of at least `MIN_CHARS` characters are cut into regions (see the module
    notes); shorter ones go to a worker whole. One pool serves all texts, so each
    worker's caches warm up once. A long text whose regions cannot be joined is
    encoded in this process. None when the pipeline is not one `scanner_for`
    accepts, `workers` < 2 or no safe ``fork``: the caller encodes in one process then.
    `on_done(n)` is called with the characters of each piece of work as it finishes.
    """
    from .tokenizer import _policy

    scanner = scanner_for(tok)
    if scanner is None or workers < 2 or not can_fork():
        return None
    parse = _policy(tok.default_special if special is None else special)
    segments: list[tuple[str, str, list[tuple[int, int]]]] = []
    plans: dict[int, list[tuple[str, Any]]] = {}
    tasks: list[tuple[str, int, int]] = []
    for index, text in enumerate(texts):
        if len(text) >= MIN_CHARS:
            first = len(segments)
            plans[index] = _plan(tok, scanner, text, parse, workers, segments)
            tasks += [("region", k, j) for k in range(first, len(segments)) for j in range(len(segments[k][2]))]
        else:
            tasks.append(("whole", index, 0))
    tasks.sort(key=lambda t: -(len(texts[t[1]]) if t[0] == "whole" else 0))  # regions first, then largest texts
    job = (tok, scanner, texts, segments, add_special, special)

    def done(result: tuple[str, int, int, Any]) -> None:
        results.append(result)
        if on_done is not None:
            kind, index, j, _ = result
            lo, hi = segments[index][2][j] if kind == "region" else (0, len(texts[index]))
            on_done(hi - lo)

    results: list[tuple[str, int, int, Any]] = []
    # this process takes the first task itself before forking: the workers inherit the
    # word caches it filled instead of each filling its own from nothing
    if tasks:
        done(_run(job, tasks.pop(0)))
    for position, ok, result in map_in_pool(partial(_run, job), tasks, workers, ordered=False):
        if not ok:
            _run(job, tasks[position])  # raises the error here, with its own type
            raise RuntimeError(f"a worker failed where this process did not: {result}")
        done(result)
    whole: dict[int, Any] = {}
    parts: dict[int, dict[int, Any]] = {}
    for kind, index, j, result in results:
        if kind == "whole":
            whole[index] = result
        else:
            parts.setdefault(index, {})[j] = result
    out: list[list[int]] = []
    for index, text in enumerate(texts):
        if index in whole:
            out.append(whole[index].tolist())
            continue
        ids = _assemble(tok, plans[index], segments, parts)
        out.append(tok.encode(text, add_special=add_special, special=special) if ids is None
                   else tok._finish_ids(ids, None, add_special))
    return out


def _assemble(tok: "Tokenizer", plan: list[tuple[str, Any]], segments: list[tuple[str, str, list[tuple[int, int]]]],
              parts: dict[int, dict[int, Any]]) -> list[int] | None:
    out: list[int] = []
    for kind, value in plan:
        if kind == "id":
            out.append(value)
        elif kind == "short":
            tok._model_ids(value[0], value[1], out)
        else:
            regions = segments[value][2]
            results = [parts[value][j] for j in range(len(regions))]
            joined = None if any(r is None for r in results) else _join(regions, results)
            if joined is None:
                return None
            out.extend(joined)
    return out
