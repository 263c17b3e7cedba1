"""The unigram lattice as sentencepiece's trainer uses it, float32 step for step.

Reproduces sentencepiece 0.2.3 src/unigram_model.cc: ``Model::PopulateNodes`` (every
piece that starts at a character, shortest first, then an unknown node when no
one-character piece starts there; the trainer's model has ``unk_id`` 0 and scores
it ``min_score - 10``), ``Lattice::Viterbi`` (the first best left node wins a
tie), ``ForwardAlgorithm``/``BackwardAlgorithm``/``PopulateMarginal`` with
``LogSumExp`` (written out inline) and ``Lattice::NBest`` (A* over a ``std::priority_queue``, whose
libstdc++ heap order decides ties, reproduced by `_push_heap`/`_pop_heap`).

Every float operation is rounded to float32 where sentencepiece stores a float,
and kept in double where it computes in double (``std::exp``/``std::log``
arguments, ``static_cast<double>``); Python's ``math`` calls the same C library.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Callable

from .sentencepiece_f32 import f32

__all__ = ["Node", "Lattice", "PieceModel"]

_UNK_PENALTY = 10.0
_exp, _log1p = math.exp, math.log1p
_NEG_INF = float("-inf")


class Node:
    __slots__ = ("pos", "length", "node_id", "id", "score", "backtrace_score", "prev")

    def __init__(self, node_id: int, pos: int, length: int, piece_id: int, score: float) -> None:
        self.node_id = node_id
        self.pos = pos
        self.length = length
        self.id = piece_id
        self.score = score
        self.backtrace_score = 0.0
        self.prev: Node | None = None


class PieceModel:
    """The trainer's model: pieces with float32 scores, looked up by text (the trie)."""

    def __init__(self, pieces: list[tuple[str, float]]) -> None:
        self.pieces = pieces
        self.ids = {piece: index for index, (piece, _) in enumerate(pieces)}
        self.scores = [score for _, score in pieces]
        self.min_score = min(self.scores) if self.scores else 3.4028234663852886e38
        self.max_len = max((len(piece) for piece, _ in pieces), default=0)
        self.prefixes = {piece[:end] for piece, _ in pieces for end in range(1, len(piece) + 1)}
        self.unk_score = f32(self.min_score - _UNK_PENALTY)

    def lattice(self, text: str) -> Lattice:
        """``SetSentence`` + ``PopulateNodes``."""
        lattice = Lattice(len(text))
        nodes, begin_nodes, end_nodes = lattice.nodes, lattice.begin_nodes, lattice.end_nodes
        ids, scores, max_len, prefixes = self.ids, self.scores, self.max_len, self.prefixes
        size = len(text)
        for begin in range(size):
            has_single = False
            starting = begin_nodes[begin]
            for length in range(1, min(max_len, size - begin) + 1):
                part = text[begin:begin + length]
                if part not in prefixes:
                    break
                piece_id = ids.get(part)
                if piece_id is not None:
                    node = Node(len(nodes), begin, length, piece_id, scores[piece_id])
                    nodes.append(node)
                    starting.append(node)
                    end_nodes[begin + length].append(node)
                    if length == 1:
                        has_single = True
            if not has_single:
                lattice.insert(begin, 1, 0, self.unk_score)
        return lattice


class Lattice:
    def __init__(self, size: int) -> None:
        self.size = size
        self.nodes: list[Node] = []
        self.begin_nodes: list[list[Node]] = [[] for _ in range(size + 1)]
        self.end_nodes: list[list[Node]] = [[] for _ in range(size + 1)]
        self.bos = self._new(0, 0, -1, 0.0)
        self.end_nodes[0].append(self.bos)
        self.eos = self._new(size, 0, -1, 0.0)
        self.begin_nodes[size].append(self.eos)

    def _new(self, pos: int, length: int, piece_id: int, score: float) -> Node:
        node = Node(len(self.nodes), pos, length, piece_id, score)
        self.nodes.append(node)
        return node

    def insert(self, pos: int, length: int, piece_id: int, score: float) -> Node:
        node = self._new(pos, length, piece_id, score)
        self.begin_nodes[pos].append(node)
        self.end_nodes[pos + length].append(node)
        return node

    def viterbi(self) -> tuple[list[Node], float]:
        """The best path (bos and eos left out) and its score."""
        if self.size == 0:
            return [], 0.0
        buf = array("f", [0.0])
        for pos in range(self.size + 1):
            ends = self.end_nodes[pos]
            for right in self.begin_nodes[pos]:
                best: Node | None = None
                best_score = 0.0
                for left in ends:
                    buf[0] = left.backtrace_score + right.score
                    score = buf[0]
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

    def marginal(self, freq: float, expected: list[float]) -> float:
        """``PopulateMarginal``: adds each piece's expected count to `expected`; returns ``freq * Z``."""
        exp, log1p = _exp, _log1p
        buf = array("f", [0.0])  # a store into it rounds to float32
        alpha = [0.0] * len(self.nodes)
        beta = [0.0] * len(self.nodes)
        for pos in range(self.size + 1):
            ends = self.end_nodes[pos]
            first, rest = ends[0], ends[1:]
            for right in self.begin_nodes[pos]:
                buf[0] = first.score + alpha[first.node_id]
                value = buf[0]
                for left in rest:
                    buf[0] = left.score + alpha[left.node_id]
                    term = buf[0]
                    low, high = (value, term) if value < term else (term, value)
                    if high > low + 50.0:
                        value = high
                    else:
                        buf[0] = low - high
                        buf[0] = high + log1p(exp(buf[0]))
                        value = buf[0]
                alpha[right.node_id] = value
        for pos in range(self.size, -1, -1):
            begins = self.begin_nodes[pos]
            first, rest = begins[0], begins[1:]
            for left in self.end_nodes[pos]:
                buf[0] = first.score + beta[first.node_id]
                value = buf[0]
                for right in rest:
                    buf[0] = right.score + beta[right.node_id]
                    term = buf[0]
                    low, high = (value, term) if value < term else (term, value)
                    if high > low + 50.0:
                        value = high
                    else:
                        buf[0] = low - high
                        buf[0] = high + log1p(exp(buf[0]))
                        value = buf[0]
                beta[left.node_id] = value
        z = alpha[self.eos.node_id]
        for pos in range(self.size):
            for node in self.begin_nodes[pos]:
                piece_id = node.id
                if piece_id >= 0:
                    node_id = node.node_id
                    buf[0] = alpha[node_id] + node.score
                    buf[0] = buf[0] + beta[node_id]
                    buf[0] = buf[0] - z
                    buf[0] = expected[piece_id] + freq * exp(buf[0])
                    expected[piece_id] = buf[0]
        return f32(freq * z)

    def nbest(self, size: int) -> list[list[Node]]:
        """``NBest(size, false, 0)``: up to `size` best paths, best first (A* from eos)."""
        if self.size == 0:
            return []
        self.viterbi()
        # a hypothesis: [fx, gx, node, next]
        agenda: list[list[object]] = []
        less: Callable[[list[object], list[object]], bool] = lambda a, b: a[0] < b[0]  # type: ignore[operator]
        _push_heap(agenda, [self.eos.backtrace_score, 0.0, self.eos, None], less)
        results: list[list[Node]] = []
        while agenda:
            top = _pop_heap(agenda, less)
            node = top[2]
            assert isinstance(node, Node)
            if node is self.bos:
                path: list[Node] = []
                hyp = top[3]
                while isinstance(hyp, list) and hyp[3] is not None:
                    path_node = hyp[2]
                    assert isinstance(path_node, Node)
                    path.append(path_node)
                    hyp = hyp[3]
                results.append(path)
                if len(results) == size:
                    break
                continue
            gx = top[1]
            assert isinstance(gx, float)
            for left in self.end_nodes[node.pos]:
                _push_heap(agenda, [f32(left.backtrace_score + gx), f32(left.score + gx), left, top], less)
        return results


def _push_heap(heap: list[list[object]], value: list[object],
               less: Callable[[list[object], list[object]], bool]) -> None:
    """libstdc++ ``std::push_heap`` (a max-heap under `less`)."""
    heap.append(value)
    hole = len(heap) - 1
    parent = (hole - 1) // 2
    while hole > 0 and less(heap[parent], value):
        heap[hole] = heap[parent]
        hole = parent
        parent = (hole - 1) // 2
    heap[hole] = value


def _pop_heap(heap: list[list[object]], less: Callable[[list[object], list[object]], bool]) -> list[object]:
    """libstdc++ ``std::pop_heap`` + ``pop_back``: the top, the last element sifted into its place."""
    top = heap[0]
    value = heap.pop()
    length = len(heap)
    if length == 0:
        return top
    hole = 0
    child = 0
    while child < (length - 1) // 2:
        child = 2 * (child + 1)
        if less(heap[child], heap[child - 1]):
            child -= 1
        heap[hole] = heap[child]
        hole = child
    if length % 2 == 0 and child == (length - 2) // 2:
        child = 2 * (child + 1)
        heap[hole] = heap[child - 1]
        hole = child - 1
    parent = (hole - 1) // 2
    while hole > 0 and less(heap[parent], value):
        heap[hole] = heap[parent]
        hole = parent
        parent = (hole - 1) // 2
    heap[hole] = value
    return top
