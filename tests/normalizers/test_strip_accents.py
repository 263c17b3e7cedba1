"""StripAccents normalizer vs tokenizers.normalizers.StripAccents (Mn/Mc/Me, no NFD)."""

from __future__ import annotations

import pytest

from polytok.normalizers import StripAccents

from ._harness import all_code_points, check, edge_texts

tokenizers = pytest.importorskip("tokenizers")

TARGETED = ["é e\u0301", "क़ि\u0903", "a\u20dd", "\u1734\u1cf2\u1cf3\u0898\u1ac1", "\u0301"]


def test_texts_and_offsets():
    check(tokenizers.normalizers.StripAccents(), StripAccents(), TARGETED + edge_texts())


def test_every_code_point():
    text = all_code_points()
    assert StripAccents().normalize(text) == tokenizers.normalizers.StripAccents().normalize_str(text)
