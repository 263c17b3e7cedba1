"""Long texts on every core, with exactly the ids one process gives.

`encode_long` and `count_long` take texts (the files of ``polytok count``, say),
cut the work into one share per worker and join the results. The pipelines
served are those `resumable_scan.scanner_for` accepts (byte-level BPE: GPT-2, Llama 3,
Qwen, tiktoken, tekken …); for others they return None and the caller encodes in
one process.

The special-token split and the normalizer run in the calling process, as
`Tokenizer.encode` runs them, leaving segments of plain text. The segments, in
order, are laid out (`shares`) as `workers` contiguous shares of about equal estimated work;
around each boundary between two shares, `ZONE` of the work is cut into
`CHUNKS` chunks that the left neighbour takes from the front once its own part
is done and the right neighbour from the back, so the two finish together
however wrong the estimate was, within the zone (measured: a static cut by UTF-8
size left one worker idle for much of the run, that estimate with the zone still
left them unbalanced, and a larger zone balanced them no better and cost more;
bench/README.md, 'Measurements behind design choices').
Each share is whole segments plus parts of the segments at its ends; a part
runs the scan that can stop (`resumable_scan`) only where its right end is a seam.
This process does share 0 itself while forked workers do the others.

Why a seam joins exactly. The part left of a seam scans the whole text from a
true piece start (the segment's start, or a start proven at its own left seam)
on past the seam by `OVERLAP` characters: that is the one-process scan. The part
right of it scans from `OVERLAP` characters before the seam (to the segment's end,
or on past its own right seam as just said).
A scan is a function of the text and of its start position only, so once both
scans have a piece starting at the same position ``c`` they go on identically:
the left part's pieces are kept before ``c`` and the right part's from ``c``.
If no common start exists near a seam (a piece longer than the overlap, say),
this process scans the two parts around it again as one; if a scan meets an
empty match (onig's iteration rules would apply), it encodes the segment whole:
same ids, slower. An empty match the pipeline refuses (`errors.EmptyMatchError`)
sends the texts back to the caller, whose one-process encode names its place.

Measured: an earlier design cut every long text into 2 × workers + 1 regions,
each scanned with ``finditer`` in a Python loop, with every worker's caches
filling on every file: two workers were no faster than one process. The
numbers for this one are in bench/README.md (`polytok count` on every core).
"""

from __future__ import annotations

from array import array
from bisect import bisect_left
from collections.abc import Callable, Sized
from itertools import accumulate, chain
from typing import TYPE_CHECKING, Any, NamedTuple

from ..errors import EmptyMatchError
from ..gc_pause import gc_paused
from ..special import SpecialTokens
from .fork import can_fork, has_fork, run_shared
from .resumable_scan import Scanner, scanner_for
from .shares import Layout, Part, ZoneClaims, cost, layout

if TYPE_CHECKING:
    from ..tokenizer import Tokenizer

__all__ = ["count_long", "encode_long", "MIN_CHARS", "OVERLAP"]

OVERLAP = 1024  # characters a part scans past its seams
MIN_CHARS = 200_000  # fewer characters in all are not worth a pool
ZONE = 0.25  # of the work, around each boundary between shares, is taken by whichever neighbour is free
CHUNKS = 16  # pieces of work in a zone


class _Segment(NamedTuple):
    text: str  # what the scan reads (with ByteLevel's prefix space)
    piece: str  # the piece as Tokenizer.piece_ids takes it
    at_origin: bool


class _Region(NamedTuple):
    """A cut segment's share: the piece starts near its seams with the ids before each."""

    left: dict[int, int]  # start -> ids before it, for starts near the left seam
    right: list[tuple[int, int]]  # (start, ids before it) near the right seam, in scan order
    total: int
    ids: Any  # array of the ids, or None when only counting


def _plan(tok: Tokenizer, scanner: Scanner, text: str, parse: bool,
          segments: list[_Segment]) -> list[tuple[bool, int]]:
    """`Tokenizer.segments` of one text: ``(True, token id)`` or ``(False, segment index)``."""
    plan: list[tuple[bool, int]] = []
    for piece, at_origin, token_id in tok.segments(text, parse):
        if token_id is not None:
            plan.append((True, token_id))
        elif piece:
            scanned = " " + piece if scanner.prefix_space and not piece.startswith(" ") else piece
            plan.append((False, len(segments)))
            segments.append(_Segment(scanned, piece, at_origin))
    return plan


def _long_piece_at_a_cut(scanner: Scanner, segments: list[_Segment], shares: Layout) -> bool:
    """Whether a piece of `LONG_PIECE` characters or more runs on from a place where a segment
    is cut. Such a piece (a text of one letter, CJK without punctuation: text with no split
    points) is scanned and merged whole by every part that reaches it, so sharing the work
    would multiply it many times over (bench/README.md has the numbers). The
    match from the cut itself stands for the piece across it, a run of letters being one
    from any of its positions; a short probe first, the long one only where it runs out."""
    parts = [part for own in shares.own for part in own]
    parts += [part for zone in shares.zones for chunk in zone for part in chunk]
    return any(lo > 0 and _runs_on(scanner, segments[index].text, lo) for index, lo, _ in parts)


def _runs_on(scanner: Scanner, text: str, lo: int) -> bool:
    """Whether the match from `lo` is at least `LONG_PIECE` characters long."""
    if len(text) - lo < LONG_PIECE:
        return False
    for reach in (_PROBE, LONG_PIECE):
        match = scanner.native.match(scanner.view(text[lo:lo + reach]))
        if match is None or match.end() < reach:
            return False
    return True


def _steps(scanner: Scanner, segments: list[_Segment], parts: list[Part], chars: int) -> list[Part]:
    """`parts` cut into steps of about 1/`STEPS` of all `chars` and at least `STEP_OVERLAPS` overlaps (no cut
    where a long piece runs on), so that progress is reported after each: the seams join as the
    shares' do, at the cost of scanning `OVERLAP` characters twice per cut."""
    step = max(chars // STEPS, STEP_OVERLAPS * OVERLAP)
    out: list[Part] = []
    for index, lo, hi in parts:
        text = segments[index].text
        start = lo
        for cut in range(lo + step, hi - step // 2, step):
            if not _runs_on(scanner, text, cut):
                out.append((index, start, cut))
                start = cut
        out.append((index, start, hi))
    return out


STEPS = 100  # progress steps over a run, when progress is asked for
STEP_OVERLAPS = 64  # a step is at least this many `OVERLAP`s long: the seams' rescans cost at most 2/64 of it
LONG_PIECE = 4 * OVERLAP  # a piece this long across a cut stops the sharing
_PROBE = 64


def _region(tok: Tokenizer, scanner: Scanner, seg: _Segment, view: str, lo: int, hi: int,
            want_ids: bool) -> _Region | None:
    """One cut segment's share, scanned as the module notes say; None where the scan is not safe.
    `view` is ``scanner.view(seg.text)``."""
    text = seg.text
    pos = max(0, lo - OVERLAP)
    if not want_ids and (counted := _counted(tok, scanner, text, view, lo, hi)) is not None:
        return counted
    scan = scanner.to_end(text, view, pos) if hi == len(text) else scanner.until(text, view, pos, hi + OVERLAP)
    if scan is None:
        return None
    starts, pieces = scan
    one_word = scanner.one_word()
    if one_word is not None:  # the usual case, in bulk: the loops run in C
        found = tok.model.tokenize_each(list(map(one_word, pieces)))
    else:
        tokenize_all = tok.model.tokenize_all
        found = [tokenize_all(scanner.words(piece)) for piece in pieces]
    before = list(accumulate(map(len, found), initial=0))
    left_end = bisect_left(starts, lo + OVERLAP) if lo > 0 else 0
    right_from = bisect_left(starts, hi - OVERLAP) if hi < len(text) else len(starts)
    return _Region(dict(zip(starts[:left_end], before[:left_end])),
                   list(zip(starts[right_from:], before[right_from:])), before[-1],
                   array("q", chain.from_iterable(found)) if want_ids else None)


def _counted(tok: Tokenizer, scanner: Scanner, text: str, view: str, lo: int, hi: int) -> _Region | None:
    """`_region_counted` where the pipeline allows it (each piece one word, a view that is the
    text itself), else None."""
    one_word = scanner.one_word()
    if view is not text or one_word is None:
        return None
    return _region_counted(scanner, text, lo, hi, max(0, lo - OVERLAP), one_word, tok.model.tokenize_each,
                           tok.model.tokenize_all)


def _region_counted(scanner: Scanner, text: str, lo: int, hi: int, pos: int, one_word: Callable[[str], str],
                    each: Callable[[list[str]], list[list[int]]],
                    count_all: Callable[[list[str]], Sized]) -> _Region | None:
    """`_region` when only counting, for a part that runs to its segment's end or whose scan
    can stop with ``findall`` (`Scanner.pieces_until`): the starts and running totals are
    taken only for the pieces near the seams, walking in from the part's ends, not for all
    of them (None where the pieces do not tile the text, or a scan would need ``finditer``:
    `_region`'s general path handles those). Taking the two lists for all pieces was a
    measurable share of a count, next to the scan and the cache lookups (bench/README.md,
    'Measurements behind design choices')."""
    if hi == len(text):
        pieces = scanner.findall(text, pos)
        end = len(text)
        if not scanner.covers and ("" in pieces or sum(map(len, pieces)) != end - pos):
            return None
    elif scanner.decided_within is not None:
        pieces, end = scanner.pieces_until(text, pos, hi + OVERLAP)
    else:
        return None
    words = list(map(one_word, pieces))
    head = tail = 0  # pieces that start before lo + OVERLAP (lo > 0), from hi - OVERLAP on (hi < len(text))
    if lo > 0:
        start = pos
        while head < len(pieces) and start < lo + OVERLAP:
            start += len(pieces[head])
            head += 1
    if hi < len(text):
        start = end
        while tail < len(pieces) and start - len(pieces[-1 - tail]) >= hi - OVERLAP:
            start -= len(pieces[-1 - tail])
            tail += 1
    if head + tail < len(pieces):
        # the ids of each piece near the seams; between them only their number, in one call of the model's loop
        found = each(words[:head])
        back = each(words[len(words) - tail:]) if tail else []
        total = sum(map(len, found)) + len(count_all(words[head:len(words) - tail])) + sum(map(len, back))
    else:
        found = each(words)
        back = found[len(found) - tail:] if tail else []
        total = sum(map(len, found))
    left: dict[int, int] = {}
    start, before = pos, 0
    for piece, ids in zip(pieces, found):
        left[start] = before
        start += len(piece)
        before += len(ids)
    right: list[tuple[int, int]] = []
    start, after = end, 0
    for piece, ids in zip(reversed(pieces), reversed(back)):
        start -= len(piece)
        after += len(ids)
        right.append((start, total - after))
    right.reverse()
    return _Region(left, right, total, None)


def _whole(tok: Tokenizer, seg: _Segment, want_ids: bool, scanner: Scanner | None = None) -> Any:
    """A whole segment's ids, or their number. Counting, a segment is scanned as a region
    is, without building its ids (the same count: see the module notes)."""
    if not want_ids and scanner is not None:
        region = _counted(tok, scanner, seg.text, scanner.view(seg.text), 0, len(seg.text))
        if region is not None:  # else through the pre-tokenizer, which handles gaps itself
            return region.total
    out: list[int] = []
    tok.piece_ids(seg.piece, seg.at_origin, out)
    return array("q", out) if want_ids else len(out)


def _join(regions: list[_Region], want_ids: bool) -> tuple[bool, Any]:
    """A cut segment's ids (or their number) from its parts, each kept between its seams'
    common piece starts: ``(True, result)``, or ``(False, j)`` when the seam after part ``j``
    has no common start."""
    ids: list[int] = []
    count = begin = 0
    for j, (region, following) in enumerate(zip(regions, [*regions[1:], None])):
        end, start_next = region.total, 0
        if following is not None:
            common = next(((start, n) for start, n in region.right if start in following.left), None)
            if common is None:
                return False, j
            end, start_next = common[1], following.left[common[0]]
        if want_ids:
            ids.extend(region.ids[begin:end])
        count += end - begin
        begin = start_next
    return True, ids if want_ids else count


def _segment_result(tok: Tokenizer, scanner: Scanner, seg: _Segment, parts: list[tuple[int, int, Any]],
                    want_ids: bool) -> Any:
    """A segment's ids (or their number) from its ``(lo, hi, result)`` parts in order. Where a
    seam has no common start (a piece longer than the overlap), this process scans the two
    parts around it again as one; where a scan was unsafe, it encodes the segment whole."""
    if len(parts) == 1:
        return parts[0][2]
    if any(value is None for _, _, value in parts):
        return _whole(tok, seg, want_ids)
    view = None
    while True:
        ok, value = _join([value for _, _, value in parts], want_ids)
        if ok:
            return value
        view = scanner.view(seg.text) if view is None else view
        (lo, _, _), (_, hi, _) = parts[value], parts[value + 1]
        merged = _region(tok, scanner, seg, view, lo, hi, want_ids)
        if merged is None:
            return _whole(tok, seg, want_ids)
        parts[value:value + 2] = [(lo, hi, merged)]


def _shared_work(tok: Tokenizer, texts: list[str], add_special: bool, special: Any, workers: int,
                 on_done: Callable[[int], None] | None, want_ids: bool) -> list[Any] | None:
    """Per text: its ids before the post-processor (or their number), computed as the module notes say."""
    import os

    scanner = scanner_for(tok)
    if scanner is None or sum(map(len, texts)) < MIN_CHARS:
        return None
    if workers < 2 and (on_done is None or not has_fork()) or workers >= 2 and not can_fork():
        return None  # (one worker forks nothing, but its claims live in shared memory)
    try:
        parse = SpecialTokens(tok.default_special if special is None else special) is SpecialTokens.PARSE
    except ValueError:  # not a policy: the caller's encode in one process names it
        return None
    segments: list[_Segment] = []
    plans = [_plan(tok, scanner, text, parse, segments) for text in texts]
    lengths = [len(seg.text) for seg in segments]
    shares = layout([cost(seg.text) for seg in segments], lengths, workers, overlap=OVERLAP, zone=ZONE, chunks=CHUNKS)
    if _long_piece_at_a_cut(scanner, segments, shares):
        return None
    if on_done is not None:  # reported as it goes: the own shares in steps
        shares = Layout([_steps(scanner, segments, own, sum(lengths)) for own in shares.own], shares.zones)
    claims = ZoneClaims(shares.zones)
    here = os.getpid()
    views: dict[int, str] = {}  # each process's views of the segments it cuts (a view reads the whole text)

    def work(k: int) -> list[tuple[Part, Any]]:
        out: list[tuple[Part, Any]] = []

        def do(parts: list[Part]) -> None:
            for part in parts:
                index, lo, hi = part
                seg = segments[index]
                if lo == 0 and hi == len(seg.text):
                    out.append((part, _whole(tok, seg, want_ids, scanner)))
                else:
                    if index not in views:
                        views[index] = scanner.view(seg.text)
                    out.append((part, _region(tok, scanner, seg, views[index], lo, hi, want_ids)))
                claims.finished(hi - lo)
                if on_done is not None and os.getpid() == here:
                    on_done(claims.news())

        do(shares.own[k])
        for zone, front in ((k, True), (k - 1, False)):  # the zone after this share, then the one before
            while 0 <= zone < len(shares.zones) and (chunk := claims.take(zone, front)) is not None:
                do(chunk)
        return out

    try:
        with gc_paused():  # as in Tokenizer.encode: the scans and lookups make no cycles (the workers inherit it)
            found = _gather(run_shared(work, range(workers)))
        if on_done is not None:
            on_done(claims.news())
        if found is None:  # the caller encodes in one process, where the error is raised with its own type
            return None
        per_segment = [_segment_result(tok, scanner, seg, sorted(found[index], key=lambda p: p[0]), want_ids)
                       for index, seg in enumerate(segments)]
    except EmptyMatchError:  # placed within a segment here: the caller's encode names its place in the text
        return None
    return _assemble(plans, per_segment, want_ids)


def _gather(results: list[tuple[bool, Any]]) -> dict[int, list[tuple[int, int, Any]]] | None:
    """The workers' results as ``(lo, hi, result)`` parts per segment; None if one failed."""
    found: dict[int, list[tuple[int, int, Any]]] = {}
    for ok, result in results:
        if not ok:
            return None
        for (index, lo, hi), value in result:
            found.setdefault(index, []).append((lo, hi, value))
    return found


def _assemble(plans: list[list[tuple[bool, int]]], per_segment: list[Any], want_ids: bool) -> list[Any]:
    """Each text's ids (or their number) from its plan and its segments' results."""
    out: list[Any] = []
    for plan in plans:
        if want_ids:
            ids: list[int] = []
            for is_id, value in plan:
                ids.extend([value] if is_id else per_segment[value])
            out.append(ids)
        else:
            out.append(sum(1 if is_id else per_segment[value] for is_id, value in plan))
    return out


def encode_long(tok: Tokenizer, texts: list[str], *, add_special: bool, special: Any, workers: int,
                on_done: Callable[[int], None] | None = None) -> list[list[int]] | None:
    """``[tok.encode(t, ...) for t in texts]``, the work shared over `workers` processes.

    None when the pipeline is not one `resumable_scan.scanner_for` accepts, `workers` < 2
    and no `on_done` is given, there is no safe ``fork``, the texts are shorter than
    `MIN_CHARS` in all or `special` is not a `SpecialTokens` policy: the caller encodes in
    one process then. `on_done(n)` is called in this process with the characters every
    process has finished since its last call, after each step of this process's work (about
    1/`STEPS` of the texts, so a meter moves on even with one worker) and once at the end.
    """
    found = _shared_work(tok, texts, add_special, special, workers, on_done, True)
    if found is None:
        return None
    return [tok.post_process(ids, add_special=add_special) for ids in found]


def count_long(tok: Tokenizer, texts: list[str], *, add_special: bool, special: Any, workers: int,
               on_done: Callable[[int], None] | None = None) -> list[int] | None:
    """``[len(tok.encode(t, ...)) for t in texts]`` as `encode_long` computes it, without
    building or sending the ids."""
    found = _shared_work(tok, texts, add_special, special, workers, on_done, False)
    if found is None:
        return None
    if tok.truncation is None and tok.padding is None:  # the post-processor adds as many ids to any text
        added = tok.added_count(add_special=add_special)
        return [n + added for n in found]
    return [len(tok.post_process([0] * n, add_special=add_special)) for n in found]
