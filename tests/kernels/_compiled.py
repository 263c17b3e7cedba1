"""What every kernel test needs: the compiled module, or a clear reason it is absent.

`compiled(name)` returns ``polytok._kernels.<name>``. A kernel that was not built fails the
test (an installation with a C compiler must build every kernel: a test that skips when
the build silently failed could never fail), unless ``POLYTOK_PURE_BUILD=1`` says the
installation was built without kernels on purpose; then the test skips, saying so.
"""

from __future__ import annotations

import functools
import importlib
import os
from types import ModuleType

import pytest

import polytok


def compiled(name: str) -> ModuleType:
    try:
        return importlib.import_module(f"polytok._kernels.{name}")
    except ImportError as exc:
        if os.environ.get("POLYTOK_PURE_BUILD") == "1":
            pytest.skip(f"POLYTOK_PURE_BUILD=1: the kernel {name!r} is not built")
        pytest.fail(f"the kernel {name!r} is not built ({exc}); run `pip install -e .` or "
                    f"`python tools/build_kernel.py {name}`")


@functools.cache
def pure_and_compiled(path: str) -> tuple[polytok.Tokenizer, polytok.Tokenizer]:
    """The same file loaded on the pure path and with the kernels (once per file)."""
    with polytok.kernels.pure_path():
        pure = polytok.load(path)
    return pure, polytok.load(path)
