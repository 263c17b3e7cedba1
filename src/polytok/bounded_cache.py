"""`BoundedCache`: the type of the per-word caches the pipeline's stages keep.

A model keeps word -> ids (`models._cache.WordCache`), ByteLevel word -> its byte form.
Each is a plain dict (the hot loops call its C methods directly) that empties itself
before it grows past `limit`. A stage hands out its caches through ``caches()``, so
`polytok.parallel` can copy a worker's new entries into them, up to `limit`; a cache
never changes a result. A pickled cache is empty: a pickled stage (spawned workers,
DataLoader) stays the size of its tables and refills its words as they are met.
"""

from __future__ import annotations

from typing import ClassVar, TypeVar

_V = TypeVar("_V")


class BoundedCache(dict[str, _V]):
    """word -> a value computed from it; never more than `limit` entries."""

    limit: ClassVar[int]

    def __reduce__(self) -> tuple[type[BoundedCache[_V]], tuple[()]]:
        return type(self), ()
