"""The bounded per-word cache every model keeps (word → ids).

HF caches words under 256 bytes, 10,000 of them (``utils/cache.rs``); the cache
never changes a result. polytok keeps up to 2**18 words under 256 characters
and clears the whole cache when it is full (cheaper than any eviction order).
2**16 was too few: the three bench texts hold 94,500 distinct Llama 3 words, so the
cache cleared itself over and over and a second pass was no faster than the first;
with 2**18 the second pass is much faster, for a little more peak memory
(bench/README.md, 'Measurements behind design choices').

The cache pickles empty, so a pickled model (spawned workers, DataLoader) stays the size
of its vocabulary.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from itertools import compress, repeat
from operator import is_

from ..bounded_cache import BoundedCache
from ..gc_pause import gc_paused

CACHE_SIZE = 1 << 18
CACHED_WORD_CHARS = 256


class WordCache(BoundedCache[list[int]]):
    """A dict of word → ids; `remember` stores short words and clears itself when full."""

    limit = CACHE_SIZE  # what `polytok.parallel` may fill it up to with a worker's words

    def remember(self, word: str, ids: list[int]) -> None:
        if len(word) < CACHED_WORD_CHARS:
            if len(self) >= CACHE_SIZE:
                self.clear()
            self[word] = ids

    def ids(self, word: str, spans: Callable[[str], Iterable[tuple[int, int, int]]]) -> list[int]:
        """The ids of `word` (a fresh list), from the cache or from ``spans(word)`` (an iterator of
        spans keeps a long word's tuples from being held all at once)."""
        ids = self.get(word)
        if ids is None:
            ids = [token for token, _, _ in spans(word)]
            self.remember(word, ids)
        return ids[:]

    def each(self, words: list[str], ids_of: Callable[[str], list[int]]) -> list[list[int]]:
        """The ids of each word (lists the caller must not change: they may be the cache's).

        Cached words are looked up in one pass in C; each new word runs `ids_of` once,
        however often it occurs, with the cyclic garbage collector off: the models' word
        loops make no cycles, only many short-lived tuples and lists, and collections
        during them were a measurable share of a cold encode (bench/README.md,
        'Measurements behind design choices')."""
        found = list(map(self.get, words))
        if None in found:
            with gc_paused():
                new = {word: ids_of(word) for word in set(compress(words, map(is_, found, repeat(None))))}
            found = list(map(new.get, words, found))
        return found  # type: ignore[return-value]  # no None is left
