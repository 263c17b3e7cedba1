"""BertNormalizer vs tokenizers.normalizers.BertNormalizer, every flag combination."""

from __future__ import annotations

import itertools

import pytest

from polytok.errors import FormatError
from polytok.normalizers import BertNormalizer, from_config

from ._harness import all_code_points, check, edge_texts, random_texts

tokenizers = pytest.importorskip("tokenizers")

TARGETED = [
    "Héllo\tWörld\u00a0\u3000x\u2028y",
    "a\x00b\ufffdc\x85d\u200be\x0bf\x0cg\u0378h\ue000i",  # NUL, FFFD, NEL, ZWSP, VT, FF deleted; Cn kept
    "\u0890\u08e2\U000110cd\U00013430",  # format controls newer than BERT's data: kept
    "中文字符 和 𠀀 豈 \u3400x\u9fff",  # CJK spacing, ranges edges
    "ΟΔΟΣ İ Ǆ ﬁ",
    "e\u0301 \u1734 \u0898 \u1ac1 \u1df9 क़",  # accents; marks too new for BERT's Mn set
    "\r\n\t \x1c\x1f",
    "",
]
POOL = "aé\u0301\u0345\u1734\u0898中𠀀 \t\n\x00\x85\u200b\ufffdİΣ\u0378\u3000x"
FLAGS = list(itertools.product([True, False], [True, False], [None, True, False], [True, False]))


@pytest.mark.parametrize("clean,chinese,accents,lower", FLAGS)
def test_texts_and_offsets(clean, chinese, accents, lower):
    ref = tokenizers.normalizers.BertNormalizer(
        clean_text=clean, handle_chinese_chars=chinese, strip_accents=accents, lowercase=lower)
    ours = BertNormalizer(clean, chinese, accents, lower)
    # the edge corpus for the combinations files use; the targeted strings for all
    corpus = edge_texts() if (clean, chinese, lower) in {(True, True, True), (True, True, False)} else []
    check(ref, ours, TARGETED + corpus + random_texts(POOL, 100))


@pytest.mark.parametrize("flags", [(True, False, False, False), (False, True, False, False),
                                   (False, False, True, False), (True, True, None, True)])
def test_every_code_point(flags):
    text = all_code_points()
    ref = tokenizers.normalizers.BertNormalizer(*flags)
    assert BertNormalizer(*flags).normalize(text) == ref.normalize_str(text)


def test_from_config():
    d = {"clean_text": True, "handle_chinese_chars": False, "lowercase": True}
    assert from_config({"type": "BertNormalizer", **d}) == BertNormalizer(True, False, None, True)
    assert from_config({"type": "Bert", **d, "strip_accents": False}) == BertNormalizer(True, False, False, True)
    assert from_config({"type": "Bert", **d, "strip_accents": None}).strip_accents is None
    with pytest.raises(FormatError, match="lowercase"):
        from_config({"type": "BertNormalizer", "clean_text": True, "handle_chinese_chars": True})
    with pytest.raises(FormatError, match=r"normalizer\.strip_accents"):
        from_config({"type": "BertNormalizer", **d, "strip_accents": 1})
