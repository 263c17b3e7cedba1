"""ByteLevel normalizer vs tokenizers.normalizers.ByteLevel."""

from __future__ import annotations

import pytest

from polytok.normalizers import ByteLevel

from ._harness import aligned, all_code_points, check, edge_texts

tokenizers = pytest.importorskip("tokenizers")


def test_texts_and_offsets():
    check(tokenizers.normalizers.ByteLevel(), ByteLevel(), ["Hello 我今天", "\x00\xff\U0001f917"] + edge_texts())


def test_every_code_point():
    text = all_code_points(step=3)
    assert ByteLevel().normalize(text) == tokenizers.normalizers.ByteLevel().normalize_str(text)


def test_bytes_of_one_char_share_its_offsets():
    assert aligned(ByteLevel(), "a€") == ("aâĤ¬", [(0, 1), (1, 2), (1, 2), (1, 2)])
