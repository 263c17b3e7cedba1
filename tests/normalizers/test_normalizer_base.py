"""Every normalizer, registered or built by a reader, inherits `NormalizerBase`
(polytok/normalizers/base.py), so mypy checks it against the stage's two calls."""

from __future__ import annotations

from polytok.normalizers import REGISTRY
from polytok.normalizers.base import NormalizerBase
from polytok.normalizers.surrogate_repair import SurrogateRepair


def test_every_normalizer_inherits_the_base():
    for cls in [*REGISTRY.values(), SurrogateRepair]:
        assert issubclass(cls, NormalizerBase), cls.__name__
