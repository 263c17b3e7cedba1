"""Prepend normalizer vs tokenizers.normalizers.Prepend."""

from __future__ import annotations

import pytest

from polytok.errors import FormatError
from polytok.normalizers import Prepend, from_config

from ._harness import aligned, check, edge_texts

tokenizers = pytest.importorskip("tokenizers")


@pytest.mark.parametrize("prefix", ["▁", "", "ab", "\u0301"])
def test_texts_and_offsets(prefix):
    check(tokenizers.normalizers.Prepend(prefix), Prepend(prefix), ["", "x", " Hello"] + edge_texts())


def test_prefix_maps_to_first_char():
    assert aligned(Prepend("▁▁"), "ab", start=5) == ("▁▁ab", [(5, 6), (5, 6), (5, 6), (6, 7)])


def test_from_config():
    assert from_config({"type": "Prepend", "prepend": "▁"}) == Prepend("▁")
    with pytest.raises(FormatError, match="prepend"):
        from_config({"type": "Prepend"})
