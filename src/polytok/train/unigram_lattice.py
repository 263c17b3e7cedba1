"""The unigram lattice as HF's ``UnigramTrainer`` uses it, in float64.

Reproduces tokenizers 0.23.3 src/models/unigram/model.rs ``Unigram::from`` (the
minimum score skips the unknown piece's NaN) and ``populate_nodes`` (every piece
that starts at a character, shortest first, then an unknown node scored
``min_score - 10`` when no one-character piece starts there), and
src/models/unigram/lattice.rs: ``viterbi`` (the first best left node wins a tie),
``populate_marginal`` with its ``log_sum_exp`` (``ln(exp(d) + 1)``, no ``log1p``;
kept per position, `add_expected`)
and ``nbest`` (A* from eos over dary_heap's ``QuaternaryHeap``, whose sift order
decides ties: a hypothesis ranks below another only when its score is smaller).

The lattice is indexed by characters where HF indexes bytes; HF starts nodes only
on character boundaries, so the nodes, their order and every sum are the same.
The node and lattice structure are `sentencepiece_lattice`'s; the arithmetic here
is float64 throughout.
"""

from __future__ import annotations

import math
from typing import Any

from .sentencepiece_lattice import Lattice, Node

__all__ = ["UnigramModel", "HfLattice", "add_expected", "viterbi_ids"]

_UNK_PENALTY = 10.0
_MAX_AGENDA = 100_000
_MIN_AGENDA = 512


class UnigramModel:
    """HF's trainer-side ``Unigram``: pieces (id 0 the unknown piece) looked up by text."""

    def __init__(self, pieces: list[tuple[str, float]]) -> None:
        self.pieces = pieces
        #: piece → id; a repeated piece keeps its last id, as HF's token map does
        self.ids = {piece: index for index, (piece, _) in enumerate(pieces)}
        self.scores = [score for _, score in pieces]
        min_score = math.inf
        for score in self.scores:
            if score < min_score:
                min_score = score
        self.min_score = min_score
        self.max_len = max((len(piece) for piece, _ in pieces), default=0)
        self.prefixes = {piece[:end] for piece, _ in pieces for end in range(1, len(piece) + 1)}
        self.unk_score = min_score - _UNK_PENALTY

    def matches(self, text: str) -> list[list[tuple[int, str]]]:
        """Per character of `text`, the pieces that start there as (length, piece), shortest first."""
        max_len, prefixes, ids = self.max_len, self.prefixes, self.ids
        size = len(text)
        found: list[list[tuple[int, str]]] = []
        for begin in range(size):
            here: list[tuple[int, str]] = []
            for length in range(1, min(max_len, size - begin) + 1):
                part = text[begin:begin + length]
                if part not in prefixes:
                    break
                if part in ids:
                    here.append((length, part))
            found.append(here)
        return found

    def starts(self, matches: list[list[tuple[int, str]]],
               ending: list[list[tuple[float, int]]] | None = None) -> list[list[tuple[float, int, int]]]:
        """``populate_nodes`` on a text with `matches` (under a model holding every piece of this one):
        per character, the nodes starting there as (score, end, piece id), in lattice order, the
        unknown piece last where no one-character piece starts; each also added to `ending` (one
        list a position, and one more) as (score, begin), when given."""
        ids, scores, unk_score = self.ids, self.scores, self.unk_score
        out: list[list[tuple[float, int, int]]] = []
        for begin, here in enumerate(matches):
            nodes: list[tuple[float, int, int]] = []
            has_single = False
            for length, part in here:
                piece_id = ids.get(part)
                if piece_id is not None:
                    nodes.append((scores[piece_id], begin + length, piece_id))
                    if length == 1:
                        has_single = True
            if not has_single:
                nodes.append((unk_score, begin + 1, 0))
            if ending is not None:
                for score, end, _ in nodes:
                    ending[end].append((score, begin))
            out.append(nodes)
        return out

    def lattice(self, text: str, matches: list[list[tuple[int, str]]] | None = None) -> HfLattice:
        """``Lattice::from`` + ``populate_nodes``; `matches` as `starts` takes them."""
        lattice = HfLattice(len(text))
        nodes, begin_nodes, end_nodes = lattice.nodes, lattice.begin_nodes, lattice.end_nodes
        for begin, starting in enumerate(self.starts(self.matches(text) if matches is None else matches)):
            for score, end, piece_id in starting:
                node = Node(len(nodes), begin, end - begin, piece_id, score)
                nodes.append(node)
                begin_nodes[begin].append(node)
                end_nodes[end].append(node)
        return lattice


def _sums(nodes: list[Any], size: int, positions: range) -> list[float]:
    """The forward (`nodes` by end: (score, begin); `positions` 1..size) or backward (`nodes` by
    begin: (score, end, id); `positions` size-1..0) score of each position of a text of `size`
    characters: HF's running ``log_sum_exp`` over the nodes there in lattice order (``ln(exp(d) +
    1)``, no ``log1p``) of each node's score plus its other end's."""
    exp, log = math.exp, math.log
    out = [0.0] * (size + 1)
    for pos in positions:
        value = 0.0
        started = False
        for node in nodes[pos]:
            term = node[0] + out[node[1]]
            if not started:
                value, started = term, True
                continue
            low, high = (term, value) if value > term else (value, term)
            value = high if high > low + 50.0 else high + log(exp(low - high) + 1.0)
        out[pos] = value
    return out


def add_expected(model: UnigramModel, matches: list[list[tuple[int, str]]], freq: float,
                 expected: list[float]) -> float:
    """``populate_marginal`` on the lattice of a text with `matches` (see `UnigramModel.starts`):
    adds each piece's expected count to `expected`; returns ``freq * Z``.

    Every node starting at a position has the same forward score (the log-sum over the
    nodes ending there, in lattice order), and every node ending at one the same backward
    score, so both are kept per position; the sums and their order are HF's.
    """
    size = len(matches)
    ending: list[list[tuple[float, int]]] = [[] for _ in range(size + 1)]
    starting = model.starts(matches, ending)
    forward = _sums(ending, size, range(1, size + 1))
    backward = _sums(starting, size, range(size - 1, -1, -1))
    z = forward[size]
    exp = math.exp
    for begin, nodes in enumerate(starting):
        a = forward[begin]
        for score, end, piece_id in nodes:
            expected[piece_id] += freq * exp(a + score + backward[end] - z)
    return freq * z


def viterbi_ids(model: UnigramModel, matches: list[list[tuple[int, str]]]) -> list[int]:
    """The piece ids of ``viterbi`` on the lattice of a text with `matches` (see
    `UnigramModel.starts`), without building nodes: the same scores and tie rule."""
    starting_at = model.starts(matches)
    size = len(starting_at)
    # a node: [score, piece id, backtrace score, previous node]; bos is the first
    bos: list[Any] = [0.0, -1, 0.0, None]
    ending: list[list[list[Any]]] = [[] for _ in range(size + 1)]
    ending[0].append(bos)
    for begin, found in enumerate(starting_at):
        lefts = ending[begin]
        starting: list[list[Any]] = []
        for score, end, piece_id in found:
            node = [score, piece_id, 0.0, None]
            starting.append(node)
            ending[end].append(node)
        for right in starting:
            right_score = right[0]
            best: list[Any] | None = None
            best_score = 0.0
            for left in lefts:
                score = left[2] + right_score
                if best is None or score > best_score:
                    best, best_score = left, score
            right[3] = best
            right[2] = best_score
    best = None
    best_score = 0.0
    for left in ending[size]:
        score = left[2] + 0.0
        if best is None or score > best_score:
            best, best_score = left, score
    path: list[int] = []
    while best is not None and best[3] is not None:
        path.append(best[1])
        best = best[3]
    path.reverse()
    return path


class HfLattice(Lattice):
    """`Lattice` with HF's float64 Viterbi, marginals and 2-best."""

    def viterbi(self) -> tuple[list[Node], float]:
        """The best path (bos and eos left out) and its score."""
        for pos in range(self.size + 1):
            ends = self.end_nodes[pos]
            for right in self.begin_nodes[pos]:
                best: Node | None = None
                best_score = 0.0
                for left in ends:
                    score = left.backtrace_score + right.score
                    if best is None or score > best_score:
                        best, best_score = left, score
                right.prev = best
                right.backtrace_score = best_score
        path: list[Node] = []
        node = self.eos.prev
        while node is not None and node.prev is not None:
            path.append(node)
            node = node.prev
        path.reverse()
        return path, self.eos.backtrace_score

    def nbest(self, size: int) -> list[list[Node]]:
        """``nbest(size)`` for `size` ≥ 2: up to `size` best paths, best first."""
        agenda: list[_Hypothesis] = []
        _push(agenda, _Hypothesis(self.eos.score, 0.0, self.eos, None))
        self.viterbi()
        results: list[list[Node]] = []
        while agenda:
            top = _pop(agenda)
            node = top.node
            if node is self.bos:
                path: list[Node] = []
                hyp = top.next
                while hyp is not None and hyp.next is not None:
                    path.append(hyp.node)
                    hyp = hyp.next
                results.append(path)
                if len(results) == size:
                    break
                continue
            gx = top.gx
            for left in self.end_nodes[node.pos]:
                _push(agenda, _Hypothesis(left.backtrace_score + gx, left.score + gx, left, top))
            if len(agenda) > _MAX_AGENDA:
                kept: list[_Hypothesis] = []
                for _ in range(min(_MIN_AGENDA, size * 10)):
                    _push(kept, _pop(agenda))
                agenda = kept
        return results


class _Hypothesis:
    """A path from eos back to `node`: `fx` its best completed score, `gx` its own."""

    __slots__ = ("fx", "gx", "node", "next")

    def __init__(self, fx: float, gx: float, node: Node, next_: _Hypothesis | None) -> None:
        self.fx = fx
        self.gx = gx
        self.node = node
        self.next = next_


# dary_heap's QuaternaryHeap under the hypothesis order, where ``a <= b`` holds exactly
# when ``a.fx < b.fx``: a pushed hypothesis rises past parents it ties with.

def _below(heap: list[_Hypothesis], a: int, b: int) -> bool:
    return heap[a].fx < heap[b].fx


def _sift_up(heap: list[_Hypothesis], hole: int, value: _Hypothesis) -> None:
    while hole > 0:
        parent = (hole - 1) // 4
        if value.fx < heap[parent].fx:
            break
        heap[hole] = heap[parent]
        hole = parent
    heap[hole] = value


def _push(heap: list[_Hypothesis], value: _Hypothesis) -> None:
    heap.append(value)
    _sift_up(heap, len(heap) - 1, value)


def _max2(heap: list[_Hypothesis], first: int) -> int:
    return first + 1 if _below(heap, first, first + 1) else first


def _pop(heap: list[_Hypothesis]) -> _Hypothesis:
    """``pop``: the last element swapped to the root, sunk to the bottom along the
    greatest children, then sifted up."""
    item = heap.pop()
    if not heap:
        return item
    top, heap[0] = heap[0], item
    end = len(heap)
    hole = 0
    child = 1
    while child <= end - 4:
        a, b = _max2(heap, child), _max2(heap, child + 2)
        child = b if _below(heap, a, b) else a
        heap[hole] = heap[child]
        hole = child
        child = 4 * hole + 1
    for other in range(child + 1, end):
        if _below(heap, child, other):
            child = other
    if child < end:
        heap[hole] = heap[child]
        hole = child
    _sift_up(heap, hole, item)
    return top
