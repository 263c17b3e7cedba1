"""`NormalizerBase`: what every normalizer inherits.

A normalizer writes both entry points of the `Normalizer` protocol, the fast
``normalize(text)`` and the offset-keeping ``normalize_aligned(ns)``; the base declares
the two, for mypy to check each component against, and ``batch_kernel()``: the compiled
form `polytok._kernels.batch` can run without Python (none by default).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

from ..normalized import NormalizedString


class NormalizerBase(ABC):
    __slots__ = ()

    @abstractmethod
    def normalize(self, text: str) -> str: ...

    @abstractmethod
    def normalize_aligned(self, ns: NormalizedString) -> None: ...

    def batch_kernel(self) -> tuple[Any, str, bool, bool, bool] | None:
        """``(charsmap kernel, space, prefix, suffix, remove_extra)`` where `normalize` is the
        compiled charsmap's sentencepiece walk with those space rules; ``(None, "", False,
        False, False)`` where it leaves every text without a lone surrogate as it is (the
        batch kernel sends the others to the pure path); else None."""
        return None
