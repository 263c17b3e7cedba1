"""How `long_text` lays its work out over the workers: contiguous shares, and a zone of
chunks around each boundary between two shares that either neighbour may take.

The segments, in order, are cut into `workers` shares of about equal estimated work
(`cost`). Around each boundary, a zone of the work is cut into chunks that the left
neighbour takes from the front once its own share is done and the right neighbour
from the back (`ZoneClaims`), so the two finish together however wrong the estimate
was, within the zone. `long_text`'s module notes give the measurements behind the
sizes it passes.
"""

from __future__ import annotations

from typing import NamedTuple

from .fork import shared_ints

__all__ = ["Layout", "Part", "ZoneClaims", "cost", "layout"]

Part = tuple[int, int, int]  # (segment, lo, hi)


class Layout(NamedTuple):
    """Who does what: each worker's own parts, and between neighbours k and k + 1 a zone
    of chunks that worker k takes from the front and worker k + 1 from the back."""

    own: list[list[Part]]
    zones: list[list[list[Part]]]


def cost(text: str) -> int:
    """A segment's estimated work: its characters, and twice each UTF-8 byte past the first of
    a character. Fitted on GPT-2's cold encode time per character of the bench texts
    (bench/README.md, 'Measurements behind design choices'); plain UTF-8 size put too little in
    the share holding bench_multi. A long text's extra bytes are counted on one block of
    `_BLOCK` characters in each `_STRIDE` (encoding all of the text is serial work before any
    worker starts)."""
    n = len(text)
    if text.isascii():
        return n
    if n <= 4 * _STRIDE:
        return n + 2 * (len(text.encode("utf-8", "surrogatepass")) - n)
    blocks = [text[i:i + _BLOCK] for i in range(0, n, _STRIDE)]
    sampled = sum(map(len, blocks))
    extra = len("".join(blocks).encode("utf-8", "surrogatepass")) - sampled
    return n + 2 * extra * n // sampled


_BLOCK, _STRIDE = 2048, 32768  # `cost`'s sample of a long text


def layout(sizes: list[int], lengths: list[int], workers: int, *, overlap: int, zone: float,
           chunks: int) -> Layout:
    """Shares of about equal work (`sizes`, from `cost`), their boundaries widened into zones
    of `zone` of the work each, cut into `chunks` chunks; a segment is cut only where both
    sides keep at least 4 × `overlap` characters (see the module notes)."""
    total = sum(sizes)
    targets: list[tuple[float, int]] = []  # (cost position, what starts there: own k or zone k's chunk)
    half = min(zone, 0.8 / workers) * total / 2
    for k in range(1, workers):
        mid = total * k / workers
        targets.append((mid - half, -k))  # -k: zone k - 1 starts
        targets += [(mid - half + 2 * half * c / chunks, -k) for c in range(1, chunks)]
        targets.append((mid + half, k))  # worker k's own part starts
    cuts = _cuts(sizes, lengths, [t for t, _ in targets], 4 * overlap)
    own: list[list[Part]] = [[] for _ in range(workers)]
    zones: list[list[list[Part]]] = [[] for _ in range(workers - 1)]
    start = (0, 0)
    owner = 0
    for (_, label), cut in zip(targets + [(total, 0)], cuts + [(len(sizes), 0)]):
        parts = _parts(lengths, start, cut)
        if owner >= 0:
            own[owner] += parts
        elif parts:
            zones[-owner - 1].append(parts)
        start, owner = cut, label
    return Layout(own, zones)


def _cuts(sizes: list[int], lengths: list[int], targets: list[float], least: int) -> list[tuple[int, int]]:
    """Each cost position (ascending) as ``(segment, char)``; a segment is cut only where
    both sides keep at least `least` characters, else at the nearer end of the part."""
    out: list[tuple[int, int]] = []
    seg = acc = 0
    last = (0, 0)
    for target in targets:
        while seg < len(sizes) and acc + sizes[seg] <= target:
            acc += sizes[seg]
            seg += 1
        if seg == len(sizes):
            cut = (seg, 0)
        else:
            n = lengths[seg]
            lo = last[1] if last[0] == seg else 0
            x = max(lo, min(n, round((target - acc) * n / sizes[seg])))
            if x - lo >= least and n - x >= least:
                cut = (seg, x)
            else:
                cut = (seg, lo) if x - lo < n - x else (seg + 1, 0)
        cut = max(cut, last)
        out.append(cut)
        last = cut
    return out


def _parts(lengths: list[int], start: tuple[int, int], stop: tuple[int, int]) -> list[Part]:
    """The ``(segment, lo, hi)`` parts between two positions."""
    parts: list[Part] = []
    seg, lo = start
    while (seg, lo) < stop and seg < len(lengths):
        hi = stop[1] if seg == stop[0] else lengths[seg]
        if hi > lo:
            parts.append((seg, lo, hi))
        seg, lo = seg + 1, 0
    return parts


class ZoneClaims:
    """Which zone chunks are still free: per zone, the next chunk from the front and one
    past the last from the back, in an array the forked workers share under its lock."""

    def __init__(self, zones: list[list[list[Part]]]) -> None:
        self.zones = zones
        self.ends = shared_ints([n for zone in zones for n in (0, len(zone))])
        self.done = shared_ints([0])  # characters every process has finished
        self.reported = 0  # of `done`, what this process has passed on to its progress callback

    def finished(self, chars: int) -> None:
        with self.done.get_lock():
            self.done[0] += chars

    def news(self) -> int:
        """Characters finished since the last call (by any process)."""
        done: int = self.done[0]
        new, self.reported = done - self.reported, done
        return new

    def take(self, zone: int, front: bool) -> list[Part] | None:
        """The next free chunk of `zone` from its front (or back), or None when none is left."""
        ends = self.ends
        with ends.get_lock():
            first, stop = ends[2 * zone], ends[2 * zone + 1]
            if first >= stop:
                return None
            if front:
                ends[2 * zone] = first + 1
                return self.zones[zone][first]
            ends[2 * zone + 1] = stop - 1
            return self.zones[zone][stop - 1]
