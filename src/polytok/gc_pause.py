"""`gc_paused`: Python's cyclic garbage collector held off for a block of work that makes no cycles.

Tokenizing and loading build many short-lived tuples and lists (merge pairs, word
ids, parsed tables) and no reference cycles, so the collections they would set off
are pure cost (see `polytok.tokenizer`'s notes for the numbers). The collector is
switched back on when the block ends, if it was on when the block began, so nested
blocks and callers that keep it off are left as they were.
"""

from __future__ import annotations

import gc
from typing import Any

__all__ = ["gc_paused"]


class gc_paused:
    """``with gc_paused(): ...`` runs the block with the cyclic collector off."""

    __slots__ = ("_was_on",)

    def __enter__(self) -> None:
        self._was_on = gc.isenabled()
        gc.disable()

    def __exit__(self, *exc: Any) -> None:
        if self._was_on:
            gc.enable()
