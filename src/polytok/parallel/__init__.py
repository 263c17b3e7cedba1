"""Work shared over every core, with exactly the ids one process gives.

- `batches`: `Tokenizer.encode_batch`'s many texts, each encoded whole by one process;
  the words the children add to their caches come back to this process.
- `runs`: many items in order, in guided runs of consecutive items (the corpus engine,
  `batches`, and ``polytok count``'s whole files).
- `long_text`: a few long texts cut into shares (``polytok count``), joined where the
  scans of two shares are proven to agree.
- `resumable_scan`: the pre-tokenizer's regex scan run from any position of a text,
  which `long_text` cuts its shares with; `shares`: how it lays the work out.

Every worker is a bare ``fork`` of this process (`fork`): it inherits the loaded
tokenizer and the texts, and nothing but items and results is pickled. Where ``fork``
is not safe (`can_fork`), callers do the work in one process: the same ids, one core.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .batches import MIN_CHARS as MIN_CHARS
    from .batches import encode_in_pool as encode_in_pool
    from .fork import available_workers as available_workers
    from .fork import can_fork as can_fork
    from .fork import run_shared as run_shared
    from .long_text import count_long as count_long
    from .long_text import encode_long as encode_long
    from .resumable_scan import scanner_for as scanner_for
    from .runs import map_in_runs as map_in_runs

__all__ = ["MIN_CHARS", "available_workers", "can_fork", "count_long", "encode_in_pool", "encode_long",
           "map_in_runs", "run_shared", "scanner_for"]

# each name's module, imported on first use: most processes never start a worker, and
# `fork`'s forking and `long_text`'s regexes cost milliseconds to import
_HOMES = {"MIN_CHARS": "batches", "encode_in_pool": "batches", "available_workers": "fork", "can_fork": "fork",
          "run_shared": "fork", "count_long": "long_text", "encode_long": "long_text",
          "scanner_for": "resumable_scan", "map_in_runs": "runs"}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f".{home}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
