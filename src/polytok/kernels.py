"""Which path runs the hot loops: a compiled kernel or the pure-Python stage.

Each stage that has a kernel asks for it by name when it is built (`kernel`), keeps the
answer, and runs its pure-Python loop when the answer is None. The pure-Python stages
define the semantics; a kernel must give the same result on every input (the tests hold
each kernel to its stage and to the reference engines).

The answer is None when:
- ``POLYTOK_PURE=1`` is set in the environment (read on every call, so a test or a worker
  can switch), or the code runs inside `pure_path()`;
- the kernel was not built (``pip install`` without a C compiler). polytok then says so
  once per process, with a `PurePythonWarning`.

`status()` tells which path is active; ``polytok inspect`` shows it.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import pkgutil
import threading
import warnings
from collections.abc import Iterator
from types import ModuleType
from typing import Any

__all__ = ["PurePythonWarning", "kernel", "compiled_module", "pure_path", "status", "forced_pure"]


class PurePythonWarning(RuntimeWarning):
    """The compiled kernels are not built: polytok runs its pure-Python path (same results, slower)."""


_lock = threading.Lock()
_pure_depth = 0
_loaded: dict[str, ModuleType | None] = {}
_warned = False


def forced_pure() -> bool:
    """Whether the pure-Python path is forced (``POLYTOK_PURE=1`` or inside `pure_path()`)."""
    return _pure_depth > 0 or os.environ.get("POLYTOK_PURE", "") == "1"


@contextlib.contextmanager
def pure_path() -> Iterator[None]:
    """Stages built inside this block run pure Python (tests compare the two paths in one process)."""
    global _pure_depth
    with _lock:
        _pure_depth += 1
    try:
        yield
    finally:
        with _lock:
            _pure_depth -= 1


def _import(name: str) -> ModuleType | None:
    global _warned
    if name not in _loaded:
        try:
            _loaded[name] = importlib.import_module(f"polytok._kernels.{name}")
        except ImportError:
            _loaded[name] = None
            if not _warned:
                _warned = True
                warnings.warn(f"polytok: the compiled kernel {name!r} is not built, so polytok runs its "
                              "pure-Python path (the same results, slower); install with a C compiler "
                              "to build it, or set POLYTOK_PURE=1 to choose the pure path and silence this",
                              PurePythonWarning, stacklevel=3)
    return _loaded[name]


def kernel(name: str) -> Any:
    """The compiled module ``polytok._kernels.<name>``, or None on the pure-Python path."""
    if forced_pure():
        return None
    return _import(name)


def compiled_module(name: str) -> Any:
    """The compiled module ``polytok._kernels.<name>`` (None: not built), whatever the path now.

    For a stage that needs its kernel only when it first runs, not when it is built: it keeps
    ``not forced_pure()`` from its build and imports the kernel on first use, so a stage built
    inside `pure_path()` stays pure wherever it runs."""
    return _import(name)


def built() -> list[str]:
    """The names of the kernels this installation has compiled."""
    from . import _kernels

    return sorted(m.name for m in pkgutil.iter_modules(_kernels.__path__) if not m.ispkg)


def status() -> dict[str, Any]:
    """The active path: ``{"path": "compiled" | "pure", "reason": str, "kernels": [names built]}``."""
    names = built()
    if os.environ.get("POLYTOK_PURE", "") == "1":
        return {"path": "pure", "reason": "POLYTOK_PURE=1", "kernels": names}
    if _pure_depth > 0:
        return {"path": "pure", "reason": "inside polytok.kernels.pure_path()", "kernels": names}
    if not names:
        return {"path": "pure", "reason": "no compiled kernels (installed without a C compiler)", "kernels": names}
    return {"path": "compiled", "reason": f"{len(names)} kernels built", "kernels": names}
