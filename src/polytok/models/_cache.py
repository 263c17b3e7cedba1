"""The bounded per-word cache every model keeps (word → ids).

HF caches words under 256 bytes, 10,000 of them (``utils/cache.rs``); the cache
never changes a result. polytok keeps up to 2**18 words under 256 characters
and clears the whole cache when it is full (cheaper than any eviction order).
2**16 was too few: the three bench texts hold 94,500 distinct Llama 3 words, so the
cache cleared itself over and over and a second pass was no faster than the first
(2.3 s); with 2**18 the second pass takes 1.0 s, for 13 MB more peak memory.
"""

from __future__ import annotations

from collections.abc import Callable

CACHE_SIZE = 1 << 18
CACHED_WORD_CHARS = 256


class WordCache(dict[str, list[int]]):
    """A dict of word → ids; `remember` stores short words and clears itself when full."""

    def remember(self, word: str, ids: list[int]) -> None:
        if len(word) < CACHED_WORD_CHARS:
            if len(self) >= CACHE_SIZE:
                self.clear()
            self[word] = ids

    def ids(self, word: str, spans: Callable[[str], list[tuple[int, int, int]]]) -> list[int]:
        """The ids of `word` (a fresh list), from the cache or from ``spans(word)``."""
        ids = self.get(word)
        if ids is None:
            ids = [token for token, _, _ in spans(word)]
            self.remember(word, ids)
        return ids[:]
