"""`NormalizerBase`: what every normalizer inherits.

A normalizer writes both entry points of the `Normalizer` protocol, the fast
``normalize(text)`` and the offset-keeping ``normalize_aligned(ns)``; nothing else is
asked of it, so the base only declares the two, for mypy to check each component
against.
"""

from __future__ import annotations

from abc import ABC, abstractmethod

from ..normalized import NormalizedString


class NormalizerBase(ABC):
    __slots__ = ()

    @abstractmethod
    def normalize(self, text: str) -> str: ...

    @abstractmethod
    def normalize_aligned(self, ns: NormalizedString) -> None: ...
