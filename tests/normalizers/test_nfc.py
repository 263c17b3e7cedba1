"""NFC normalizer vs tokenizers.normalizers.NFC: text (fast and aligned paths) and offsets."""

from __future__ import annotations

import pytest

from polytok.normalizers import NFC, from_config

from . import _unicode_cases
from ._harness import all_code_points, check

tokenizers = pytest.importorskip("tokenizers")


def test_texts_and_offsets():
    check(tokenizers.normalizers.NFC(), NFC(), _unicode_cases.texts())


def test_every_code_point_in_one_string():
    text = all_code_points()
    assert NFC().normalize(text) == tokenizers.normalizers.NFC().normalize_str(text)


def test_from_config_ignores_other_keys():
    assert isinstance(from_config({"type": "NFC", "extra": 1}), NFC)
