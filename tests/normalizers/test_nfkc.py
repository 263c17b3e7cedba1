"""NFKC normalizer vs tokenizers.normalizers.NFKC: text (fast and aligned paths) and offsets."""

from __future__ import annotations

import pytest

from polytok.normalizers import NFKC, from_config

from . import _unicode_cases
from ._harness import all_code_points, check

tokenizers = pytest.importorskip("tokenizers")


def test_texts_and_offsets():
    check(tokenizers.normalizers.NFKC(), NFKC(), _unicode_cases.texts())


def test_every_code_point_in_one_string():
    text = all_code_points()
    assert NFKC().normalize(text) == tokenizers.normalizers.NFKC().normalize_str(text)


def test_from_config_ignores_other_keys():
    assert isinstance(from_config({"type": "NFKC", "extra": 1}), NFKC)
