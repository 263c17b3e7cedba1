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

__all__ = ["gc_paused", "collect_young"]


class gc_paused:
    """``with gc_paused(): ...`` runs the block with the cyclic collector off."""

    __slots__ = ("_was_on",)

    def __enter__(self) -> None:
        self._was_on = gc.isenabled()
        gc.disable()

    def __exit__(self, *exc: Any) -> None:
        if self._was_on:
            gc.enable()


def collect_young() -> None:
    """Collect the youngest generation now if the collector is on and past its threshold.

    After a block run paused, the objects it allocated are counted but not yet collected: the
    collector runs at the next allocation, wherever that is (inside the caller's next call).
    Called where such a block ends, it makes the block pay for the collection it deferred, as
    it would have paid with the collector on; the work is the same."""
    if gc.isenabled() and gc.get_count()[0] > gc.get_threshold()[0]:
        gc.collect(0)
