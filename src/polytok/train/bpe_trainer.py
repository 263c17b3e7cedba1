"""BPE training as HF's ``BpeTrainer`` does it (tokenizers/src/models/bpe/trainer.rs,
with the word merge of tokenizers/src/models/bpe/word.rs).

The vocabulary is built in HF's order: special tokens, then the alphabet (by code point),
then the characters as they appear in words when a prefix or suffix makes new pieces of
them, then one piece per merge. Merges come from a max-heap of pair counts, refreshed
lazily: the pair with the highest count wins, ties go to the smaller pair of ids. A heap
entry carries the words it was counted in; merging it touches only those words.

Where HF depends on hash-map order this trainer fixes one order HF can take:

- the words are visited in code-point order (`word_counts.canonical`), which decides the
  ids of prefixed/suffixed characters;
- ``limit_alphabet`` drops the rarest characters and, among equally rare ones, the
  smaller code points first.

With neither prefix, suffix nor a tie at the alphabet limit, HF has one result and this
is it.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable
from dataclasses import dataclass, field

from .word_counts import canonical

Pair = tuple[int, int]

#: no limit on a merged piece's length (HF's ``usize::MAX``)
_NO_LIMIT = 1 << 62
#: one more than the largest id a word held as text can carry (one character per id)
_MAX_CHAR = 0x110000


@dataclass(frozen=True)
class BpeResult:
    """What a BPE training run makes: the vocabulary (piece → id, in id order) and the merges."""

    vocab: dict[str, int]
    merges: list[tuple[str, str]]
    continuing_subword_prefix: str | None = None
    end_of_word_suffix: str | None = None


@dataclass
class BpeTrainer:
    """The options of HF's ``BpeTrainer``, with its defaults. ``show_progress`` is accepted and ignored."""

    vocab_size: int = 30000
    min_frequency: int = 0
    special_tokens: list[str] = field(default_factory=list)
    limit_alphabet: int | None = None
    initial_alphabet: list[str] = field(default_factory=list)
    continuing_subword_prefix: str | None = None
    end_of_word_suffix: str | None = None
    max_token_length: int | None = None
    show_progress: bool = False

    def train(self, counts: dict[str, int]) -> BpeResult:
        """Train on a word table (`word_counts.count_words`)."""
        return train_bpe(counts, self)


def initial_chars(alphabet: Iterable[str]) -> set[str]:
    """HF's ``initial_alphabet``: the first character of each string given."""
    return {s[0] for s in alphabet if s}


def compute_alphabet(words: list[tuple[str, int]], initial: set[str], limit: int | None) -> list[str]:
    """The characters kept as the base vocabulary, in code-point order.

    Each character weighs the number of times it occurs; those of `initial` weigh more than
    any. With a `limit`, the lightest are dropped (ties: smaller code point first).
    """
    weight: dict[str, int] = {}
    for word, count in words:
        for ch in word:
            weight[ch] = weight.get(ch, 0) + count
    for ch in initial:
        weight[ch] = _NO_LIMIT
    kept = list(weight)
    if limit is not None and len(kept) > limit:
        kept.sort(key=lambda ch: (weight[ch], ch))
        kept = kept[len(kept) - limit:]
    kept.sort()
    return kept


class _Vocab:
    """Piece ↔ id, growing in insertion order."""

    def __init__(self) -> None:
        self.ids: dict[str, int] = {}
        self.pieces: list[str] = []

    def add(self, piece: str) -> int:
        found = self.ids.get(piece)
        if found is None:
            found = self.ids[piece] = len(self.pieces)
            self.pieces.append(piece)
        return found


def _split_words(words: list[tuple[str, int]], vocab: _Vocab, prefix: str | None,
                 suffix: str | None) -> list[list[int]]:
    """Each word as the ids of its characters; characters outside the vocabulary are left out."""
    out: list[list[int]] = []
    ids = vocab.ids
    for word, _ in words:
        symbols: list[int] = []
        last = len(word) - 1
        for i, ch in enumerate(word):
            if ch not in ids:
                continue
            if prefix is not None and i > 0:
                ch = prefix + ch
            if suffix is not None and i == last:
                ch = ch + suffix
            symbols.append(vocab.add(ch))
        out.append(symbols)
    return out


def _merge_word(symbols: list[int], lengths: list[int] | None, a: int, b: int, new: int, max_length: int,
                count: int, w: int, pair_counts: dict[Pair, int], fresh: dict[Pair, set[int]]) -> None:
    """Replace each ``a b`` in word `w`'s `symbols` by `new`, left to right, and count the change.

    Each pair the merge removes loses `count` in `pair_counts`; each pair it forms gains it
    and names `w` in `fresh`, but only while its length (in characters) stays under
    `max_length`, as word.rs's ``merge`` counts it.
    """
    i = -1
    try:
        while True:
            i = symbols.index(a, i + 1)
            if i + 1 >= len(symbols) or symbols[i + 1] != b:
                continue
            new_len = lengths[i] + lengths[i + 1] if lengths is not None else 0
            if i > 0:
                before = symbols[i - 1]
                pair = (before, a)
                pair_counts[pair] = pair_counts.get(pair, 0) - count
                if lengths is None or lengths[i - 1] + new_len < max_length:
                    pair = (before, new)
                    pair_counts[pair] = pair_counts.get(pair, 0) + count
                    found = fresh.get(pair)
                    if found is None:
                        fresh[pair] = {w}
                    else:
                        found.add(w)
            symbols[i:i + 2] = [new]
            if lengths is not None:
                lengths[i:i + 2] = [new_len]
            if i < len(symbols) - 1:
                after = symbols[i + 1]
                pair = (b, after)
                pair_counts[pair] = pair_counts.get(pair, 0) - count
                if lengths is None or lengths[i + 1] + new_len < max_length:
                    pair = (new, after)
                    pair_counts[pair] = pair_counts.get(pair, 0) + count
                    found = fresh.get(pair)
                    if found is None:
                        fresh[pair] = {w}
                    else:
                        found.add(w)
    except ValueError:  # no further `a`
        pass


def train_bpe(counts: dict[str, int], options: BpeTrainer) -> BpeResult:
    """HF's ``BpeTrainer.do_train`` on `counts`, its words in code-point order."""
    return train_bpe_words(canonical(counts), options)


def train_bpe_words(words: list[tuple[str, int]], options: BpeTrainer) -> BpeResult:
    """HF's ``BpeTrainer.do_train`` on ``(word, count)`` pairs visited in the order given
    (HF's is its hash map's; the order matters only for prefixed and suffixed pieces)."""
    vocab = _Vocab()
    for token in options.special_tokens:
        vocab.add(token)
    for ch in compute_alphabet(words, initial_chars(options.initial_alphabet), options.limit_alphabet):
        vocab.add(ch)
    prefix, suffix = options.continuing_subword_prefix, options.end_of_word_suffix
    weights = [count for _, count in words]
    if options.max_token_length is not None or options.vocab_size >= _MAX_CHAR:
        merges = _merges_as_lists(_split_words(words, vocab, prefix, suffix), weights, vocab, options)
    elif prefix is None and suffix is None:  # each character its own piece: a translation makes the texts
        ids = vocab.ids
        table = {ord(ch): chr(ids[ch]) if ch in ids else None for ch in set("".join(w for w, _ in words))}
        merges = _merges_as_text([w.translate(table) for w, _ in words], weights, vocab, options)
    else:
        texts = ["".join(map(chr, syms)) for syms in _split_words(words, vocab, prefix, suffix)]
        merges = _merges_as_text(texts, weights, vocab, options)
    return BpeResult(vocab=dict(vocab.ids), merges=_ranked_merges(merges, vocab.pieces),
                     continuing_subword_prefix=prefix, end_of_word_suffix=suffix)


def _merges_as_lists(symbols: list[list[int]], weights: list[int], vocab: _Vocab, options: BpeTrainer,
                     ) -> list[tuple[Pair, int]]:
    """The merge loop on words as lists of ids, with piece lengths kept for ``max_token_length``."""
    prefix = options.continuing_subword_prefix
    max_length = options.max_token_length if options.max_token_length is not None else _NO_LIMIT
    lengths = [[1] * len(s) for s in symbols] if options.max_token_length is not None else None
    pair_counts: dict[Pair, int] = {}
    where: dict[Pair, set[int]] = {}
    for w, syms in enumerate(symbols):
        count = weights[w]
        for pair in zip(syms, syms[1:]):
            pair_counts[pair] = pair_counts.get(pair, 0) + count
            found = where.get(pair)
            if found is None:
                where[pair] = {w}
            else:
                found.add(w)

    # entries: (-count, first id, second id, push number, words); the push number only
    # keeps equal entries (same pair, same count) from comparing their sets
    heap: list[tuple[int, int, int, int, set[int]]] = []
    pushed = 0
    for pair, pos in where.items():
        if pair_counts[pair] > 0:
            heap.append((-pair_counts[pair], pair[0], pair[1], pushed, pos))
            pushed += 1
    heapq.heapify(heap)

    merges: list[tuple[Pair, int]] = []
    pieces, ids = vocab.pieces, vocab.ids
    min_frequency, vocab_size = options.min_frequency, options.vocab_size
    while len(ids) < vocab_size and heap:
        neg, a, b, _, pos = heapq.heappop(heap)
        current = pair_counts[(a, b)]
        if -neg != current:
            heapq.heappush(heap, (-current, a, b, pushed, pos))
            pushed += 1
            continue
        if current < 1 or min_frequency > current:
            break
        right = pieces[b]
        if prefix is not None and right.startswith(prefix):
            right = right[len(prefix):]
        new = vocab.add(pieces[a] + right)
        merges.append(((a, b), new))

        fresh: dict[Pair, set[int]] = {}
        for w in pos:
            _merge_word(symbols[w], lengths[w] if lengths is not None else None, a, b, new, max_length,
                        weights[w], w, pair_counts, fresh)
        for pair, fresh_pos in fresh.items():
            count = pair_counts[pair]
            if count > 0:
                heapq.heappush(heap, (-count, pair[0], pair[1], pushed, fresh_pos))
                pushed += 1

    return merges


def _merges_as_text(texts: list[str], weights: list[int], vocab: _Vocab, options: BpeTrainer,
                    ) -> list[tuple[Pair, int]]:
    """The same merge loop as `_merges_as_lists` on `texts`, the words as strings of one character per id.

    A pair is then a two-character string (strings order as their pairs of ids do), and
    `str.find` and `str.replace` find and merge its occurrences left to right, without
    overlap, as word.rs's ``merge`` does. Without ``max_token_length`` only.
    """
    prefix = options.continuing_subword_prefix
    pair_counts: dict[str, int] = {}
    where: dict[str, set[int]] = {}
    for w, text in enumerate(texts):
        count = weights[w]
        for i in range(len(text) - 1):
            pair = text[i:i + 2]
            pair_counts[pair] = pair_counts.get(pair, 0) + count
            found = where.get(pair)
            if found is None:
                where[pair] = {w}
            else:
                found.add(w)

    heap: list[tuple[int, str, int, set[int]]] = []
    pushed = 0
    for pair, pos in where.items():
        if pair_counts[pair] > 0:
            heap.append((-pair_counts[pair], pair, pushed, pos))
            pushed += 1
    heapq.heapify(heap)

    merges: list[tuple[Pair, int]] = []
    pieces, ids = vocab.pieces, vocab.ids
    min_frequency, vocab_size = options.min_frequency, options.vocab_size
    while len(ids) < vocab_size and heap:
        neg, pair, _, pos = heapq.heappop(heap)
        current = pair_counts[pair]
        if -neg != current:
            heapq.heappush(heap, (-current, pair, pushed, pos))
            pushed += 1
            continue
        if current < 1 or min_frequency > current:
            break
        first, second = pair[0], pair[1]
        a, b = ord(first), ord(second)
        right = pieces[b]
        if prefix is not None and right.startswith(prefix):
            right = right[len(prefix):]
        new = vocab.add(pieces[a] + right)
        merges.append(((a, b), new))
        merged = chr(new)

        fresh: dict[str, set[int]] = {}
        for w in pos:
            text = texts[w]
            j = text.find(pair)
            if j < 0:
                continue
            count = weights[w]
            end = len(text) - 2
            merged_to = -1  # where the last merged pair ended: the symbol before the next is then `merged`
            while j >= 0:
                if j > 0:
                    before = merged if j == merged_to else text[j - 1]
                    pair_counts[before + first] -= count  # a pair of the word: counted already
                    made = before + merged
                    pair_counts[made] = pair_counts.get(made, 0) + count
                    found = fresh.get(made)
                    if found is None:
                        fresh[made] = {w}
                    else:
                        found.add(w)
                if j < end:
                    after = text[j + 2]
                    pair_counts[second + after] -= count
                    made = merged + after
                    pair_counts[made] = pair_counts.get(made, 0) + count
                    found = fresh.get(made)
                    if found is None:
                        fresh[made] = {w}
                    else:
                        found.add(w)
                merged_to = j + 2
                j = text.find(pair, merged_to)
            texts[w] = text.replace(pair, merged)
        for made, fresh_pos in fresh.items():
            count = pair_counts[made]
            if count > 0:
                heapq.heappush(heap, (-count, made, pushed, fresh_pos))
                pushed += 1
    return merges


def _ranked_merges(merges: list[tuple[Pair, int]], pieces: list[str]) -> list[tuple[str, str]]:
    """The merges in rank order, a pair merged twice at its later rank (HF keeps them in a map)."""
    rank: dict[Pair, int] = {}
    for i, (pair, _) in enumerate(merges):
        rank[pair] = i
    ordered = sorted(rank, key=rank.__getitem__)
    return [(pieces[a], pieces[b]) for a, b in ordered]
