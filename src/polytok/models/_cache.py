"""The bounded per-word cache every model keeps (word → ids).

HF caches words under 256 bytes, 10,000 of them (``utils/cache.rs``); the cache
never changes a result. polytok keeps up to 2**16 words under 256 characters
and clears the whole cache when it is full (cheaper than any eviction order).
"""

from __future__ import annotations

CACHE_SIZE = 1 << 16
CACHED_WORD_CHARS = 256


class WordCache(dict[str, list[int]]):
    """A dict of word → ids; `remember` stores short words and clears itself when full."""

    def remember(self, word: str, ids: list[int]) -> None:
        if len(word) < CACHED_WORD_CHARS:
            if len(self) >= CACHE_SIZE:
                self.clear()
            self[word] = ids
