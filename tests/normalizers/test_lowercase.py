"""Lowercase normalizer vs tokenizers.normalizers.Lowercase (per char, no final sigma)."""

from __future__ import annotations

import pytest

from polytok.normalizers import Lowercase

from ._harness import check, edge_texts, random_texts

tokenizers = pytest.importorskip("tokenizers")

TARGETED = ["ΟΔΟΣ ΣΑΣ Σ", "İstanbul İ", "ẞ ǅ Ω K Å", "\u1c89\ua7cb\U00010d50\U00016ea0", "ABC", "ﬁ"]


def test_texts_and_offsets():
    pool = "AaİΣσẞǅΩKÅ\u1c89\ua7cb\U00010d50 x"
    check(tokenizers.normalizers.Lowercase(), Lowercase(), TARGETED + edge_texts() + random_texts(pool, 300))


def test_expansion_offsets():
    from ._harness import aligned

    # İ -> i + U+0307: both map to the İ
    assert aligned(Lowercase(), "xİy") == ("xi\u0307y", [(0, 1), (1, 2), (1, 2), (2, 3)])
