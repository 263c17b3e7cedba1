"""Strip normalizer vs tokenizers.normalizers.Strip (White_Space, not str.isspace)."""

from __future__ import annotations

import pytest

from polytok.errors import FormatError
from polytok.normalizers import Strip, from_config

from ._harness import check, edge_texts

tokenizers = pytest.importorskip("tokenizers")

TARGETED = ["  a b  ", "\u3000\u00a0x\u2028\n", "\x1cx\x1f", "\u200bx\u200b", "   ", "", "é  ", "  日本 ", "\x85x\x85"]


@pytest.mark.parametrize("left,right", [(True, True), (True, False), (False, True), (False, False)])
def test_texts_and_offsets(left, right):
    check(tokenizers.normalizers.Strip(left=left, right=right), Strip(left, right), TARGETED + edge_texts())


def test_from_config_requires_both_sides():
    assert from_config({"type": "Strip", "strip_left": True, "strip_right": False}) == Strip(True, False)
    with pytest.raises(FormatError, match="strip_right"):
        from_config({"type": "Strip", "strip_left": True})
    with pytest.raises(FormatError, match=r"normalizer\.strip_left"):
        from_config({"type": "Strip", "strip_left": 1, "strip_right": True})
