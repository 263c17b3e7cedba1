"""Per-piece lookups built on first use: the score-list models (`SPM`, `Unigram`) loaded with a
compiled table.

When sentencepiece's reader builds a model's compiled table straight from the file's bytes
(``polytok._kernels.spm_model``), the model's pure-Python lookups (a dict of every piece, ...)
are not needed to encode; they are built the first time anything reads one: the pure path's
fallback for a word the kernel leaves out, `get_vocab`, pickling. `token_to_id` answers from
the reader's index until then, and `id_to_token` from its read-only sequence of pieces.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

_LOCK = threading.Lock()


class DeferredTables:
    """The mixin: a model class lists its deferred attributes in `_DEFERRED` and builds them in
    ``_build_tables(**tables())``; `defer` (instead of that build) keeps the recipe."""

    _DEFERRED: frozenset[str] = frozenset()
    _build_tables: Callable[..., None]

    def defer(self, tables: Callable[[], dict[str, Any]], find: Callable[[str], int]) -> None:
        """Build the `_DEFERRED` attributes from ``tables()`` on first use; `find` is a piece's id (-1: none)."""
        self.__dict__["_deferred"] = (tables, find)

    def __getattr__(self, name: str) -> Any:
        if name not in self._DEFERRED or "_deferred" not in self.__dict__:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        self.build_deferred()
        return self.__dict__[name]

    def build_deferred(self) -> None:
        """The deferred lookups, built now if they are not (once, whichever thread asks first)."""
        if "_deferred" in self.__dict__:
            with _LOCK:
                deferred = self.__dict__.get("_deferred")
                if deferred is not None:
                    self._build_tables(**deferred[0]())
                    del self.__dict__["_deferred"]

    def token_to_id(self, token: str) -> int | None:
        deferred = self.__dict__.get("_deferred")
        if deferred is not None:
            found: int = deferred[1](token)
            return None if found < 0 else found
        return super().token_to_id(token)  # type: ignore[misc, no-any-return]
