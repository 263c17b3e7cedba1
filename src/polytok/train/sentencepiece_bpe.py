"""sentencepiece's BPE trainer: the merges, in order, as ``spm_train --model_type=bpe`` makes them.

Reproduces sentencepiece 0.2.3 src/bpe_model_trainer.cc (``Trainer::Train``,
``InitSymbolsAndBigrams``, ``AcceptSymbol``, ``AddNewPair``, ``ResetFreq``) and the
queue order of src/bpe_model_trainer.h (``QueueEntryComparator``):

* every adjacent pair of symbols, neither of them ``"▅"``, whose joined text is
  a valid piece (`PieceRules.is_valid`) is a candidate with the summed count of
  the sentences it occurs in;
* the next merge is the candidate with the highest count, then the fewest
  characters, then the smallest text (bytes). Counts are updated lazily: a
  pair whose count fell is re-queued when it reaches the top, a queue entry
  whose count is stale is dropped;
* a merge rewrites its recorded occurrences in the order they were recorded,
  skipping those an earlier rewrite consumed; the pairs it breaks lose the
  count, the pairs it makes gain it;
* a candidate whose text was already merged (the same text by another split,
  ``"aa"+"a"`` vs ``"a"+"aa"``) is dropped without a merge;
* merges stop at ``vocab_size - meta pieces - required characters``; the
  pieces are the merges in order, then the required characters (count
  descending, then code point), scored ``-position`` as float32.

Exactness: where two different candidates have the same text and the same
count at the top of the queue, which one sentencepiece merges depends on its
heap's layout (and so on the iteration order of an absl hash map); here the
one queued first wins. Every other choice is fully determined.
"""

from __future__ import annotations

import heapq
from itertools import count

from .sentencepiece_corpus import Corpus
from .sentencepiece_f32 import f32
from .sentencepiece_pieces import UNK_CHAR, PieceRules

__all__ = ["train_bpe"]

#: counts are uint64 in sentencepiece: a count taken from a fresh pair wraps around
_UINT64 = (1 << 64) - 1


class _Symbol:
    __slots__ = ("uid", "left", "right", "piece", "char_len", "freq", "is_unk", "active", "pending",
                 "needs_recomputation", "positions")

    def __init__(self, uid: int, piece: str, left: _Symbol | None = None, right: _Symbol | None = None) -> None:
        self.uid = uid
        self.left = left
        self.right = right
        self.piece = piece
        self.char_len = len(piece)
        self.freq = 0
        self.is_unk = piece == UNK_CHAR
        self.active = True
        self.pending = False
        self.needs_recomputation = True
        self.positions: list[tuple[int, int, int]] = []


class _Trainer:
    def __init__(self, corpus: Corpus, rules: PieceRules) -> None:
        self.rules = rules
        self.freqs = [freq for _, freq in corpus.sentences]
        self.uids = count()
        self.chars: dict[str, _Symbol] = {}
        self.pairs: dict[tuple[int, int], _Symbol | None] = {}
        self.heap: list[tuple[int, int, str, int, _Symbol]] = []
        self.pushes = count()
        self.pending: list[_Symbol] = []
        self.symbols: list[list[_Symbol | None]] = [[self.char_symbol(char) for char in text]
                                                     for text, _ in corpus.sentences]

    def char_symbol(self, char: str) -> _Symbol:
        symbol = self.chars.get(char)
        if symbol is None:
            symbol = self.chars[char] = _Symbol(next(self.uids), char)
        return symbol

    def pair_symbol(self, left: _Symbol | None, right: _Symbol | None) -> _Symbol | None:
        """``GetPairSymbol``: cached by the two symbols; None when the text is not a valid piece."""
        if left is None or right is None or left.is_unk or right.is_unk:
            return None
        key = (left.uid, right.uid)
        if key in self.pairs:
            return self.pairs[key]
        piece = left.piece + right.piece
        if not self.rules.is_valid(piece):
            # not cached by sentencepiece either, but the answer never changes
            self.pairs[key] = None
            return None
        symbol = _Symbol(next(self.uids), piece, left, right)
        symbol.char_len = left.char_len + right.char_len
        self.pairs[key] = symbol
        return symbol

    def push(self, symbol: _Symbol) -> None:
        heapq.heappush(self.heap, (-symbol.freq, symbol.char_len, symbol.piece, next(self.pushes), symbol))

    def queue(self, symbol: _Symbol) -> None:
        if not symbol.pending:
            symbol.pending = True
            self.pending.append(symbol)

    @staticmethod
    def compute_freq(symbol: _Symbol) -> None:
        """``ComputeFreq``: the count is already current; one that fell to 0 forgets its occurrences."""
        if symbol.needs_recomputation:
            if symbol.freq == 0:
                symbol.positions = []
            symbol.needs_recomputation = False

    def flush(self) -> None:
        for symbol in self.pending:
            symbol.pending = False
            if symbol.active:
                self.compute_freq(symbol)
                self.push(symbol)
        self.pending.clear()

    def init_bigrams(self) -> None:
        for sid, row in enumerate(self.symbols):
            freq = self.freqs[sid]
            for index in range(1, len(row)):
                symbol = self.pair_symbol(row[index - 1], row[index])
                if symbol is not None:
                    symbol.freq += freq
                    symbol.positions.append((sid, index - 1, index))
                    self.queue(symbol)

    def next_index(self, sid: int, index: int) -> int:
        row = self.symbols[sid]
        for at in range(index + 1, len(row)):
            if row[at] is not None:
                return at
        return -1

    def prev_index(self, sid: int, index: int) -> int:
        row = self.symbols[sid]
        for at in range(index - 1, -1, -1):
            if row[at] is not None:
                return at
        return -1

    def add_new_pair(self, sid: int, left: int, right: int) -> None:
        if left == -1 or right == -1:
            return
        symbol = self.pair_symbol(self.symbols[sid][left], self.symbols[sid][right])
        if symbol is not None:
            symbol.positions.append((sid, left, right))
            symbol.freq = (symbol.freq + self.freqs[sid]) & _UINT64
            self.queue(symbol)

    def reset_freq(self, sid: int, left: int, right: int, best: _Symbol) -> None:
        if left == -1 or right == -1:
            return
        symbol = self.pair_symbol(self.symbols[sid][left], self.symbols[sid][right])
        if symbol is not None and symbol is not best:
            symbol.freq = (symbol.freq - self.freqs[sid]) & _UINT64
            symbol.needs_recomputation = True

    def retire(self, symbol: _Symbol) -> None:
        """Remove `symbol` from the cache so that the same two symbols make a fresh one."""
        assert symbol.left is not None and symbol.right is not None
        self.pairs.pop((symbol.left.uid, symbol.right.uid), None)
        symbol.active = False
        symbol.positions = []

    def accept(self, symbol: _Symbol) -> None:
        for sid, left, right in symbol.positions:
            row = self.symbols[sid]
            if row[left] is not symbol.left or row[right] is not symbol.right:
                continue
            after = self.next_index(sid, right)
            before = self.prev_index(sid, left)
            self.reset_freq(sid, before, left, symbol)
            self.reset_freq(sid, right, after, symbol)
            row[left] = symbol
            row[right] = None
            self.add_new_pair(sid, before, left)
            self.add_new_pair(sid, left, after)
        self.retire(symbol)

    def pop_best(self) -> _Symbol | None:
        while self.heap:
            neg_freq, _, _, _, symbol = self.heap[0]
            heapq.heappop(self.heap)
            if not symbol.active:
                continue
            if symbol.needs_recomputation:
                self.compute_freq(symbol)
                self.push(symbol)
                continue
            if -neg_freq != symbol.freq:
                continue
            return symbol
        return None

    def merges(self, limit: int) -> list[str]:
        self.init_bigrams()
        self.flush()
        merged: list[str] = []
        seen: set[str] = set()
        while len(merged) < limit:
            best = self.pop_best()
            if best is None:
                break
            if best.piece in seen:
                self.retire(best)
                continue
            seen.add(best.piece)
            merged.append(best.piece)
            self.accept(best)
            self.flush()
        return merged


def train_bpe(corpus: Corpus, rules: PieceRules, num_meta: int, vocab_size: int) -> list[tuple[str, float]]:
    """The NORMAL pieces and their scores, in id order (meta pieces not included).

    Raises:
        ValueError: fewer vocabulary slots than meta pieces and required characters.
    """
    if vocab_size - num_meta < len(corpus.required_chars):
        raise ValueError(f"option vocab_size: {vocab_size} is smaller than the meta pieces and required characters")
    limit = vocab_size - num_meta - len(corpus.required_chars)
    trainer = _Trainer(corpus, rules)
    trainer.char_symbol(UNK_CHAR)
    pieces = trainer.merges(limit) + [char for char, _ in corpus.required_sorted()]
    return [(piece, f32(-float(index))) for index, piece in enumerate(pieces)]
