"""Nmt normalizer vs tokenizers.normalizers.Nmt."""

from __future__ import annotations

import pytest

from polytok.normalizers import Nmt

from ._harness import all_code_points, check, edge_texts

tokenizers = pytest.importorskip("tokenizers")


def test_texts_and_offsets():
    targeted = ["\x01a\tb\x0bc\r\n\u200d\u2581\ufeff\ufffd\x7f\x8f\x9f\x85", "\x01\x02", "a\x1f"]
    check(tokenizers.normalizers.Nmt(), Nmt(), targeted + edge_texts())


def test_every_code_point():
    text = all_code_points()
    assert Nmt().normalize(text) == tokenizers.normalizers.Nmt().normalize_str(text)
