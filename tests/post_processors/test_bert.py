"""BertProcessing vs the reference, through a small WordLevel tokenizer."""

from __future__ import annotations

import pytest

from ._data import TRUNCATIONS, Setup, check_many, word_level_base

tokenizers = pytest.importorskip("tokenizers")
P = tokenizers.processors

BASE = word_level_base(list("abcdefgh"), ["[CLS]", "[SEP]"])
SINGLES = ["", "a", "a b c", "a b c d e f g h a", "x y"]
PAIRS = [("a", "b"), ("a b c", "d e f g h"), ("a b c d e f g", "h"), ("", "a"), ("a b c d e", "a b c d e f g")]


@pytest.mark.parametrize("sep,cls", [(("[SEP]", 2), ("[CLS]", 1)), (("</s>", 7), ("<s>", 9))])
def test_bert(sep, cls):
    setup = Setup(BASE, P.BertProcessing(sep, cls))
    tally = check_many(setup, SINGLES, PAIRS, TRUNCATIONS)
    assert tally.get("ok", 0) > 80, tally


def test_pretokenized():
    setup = Setup(BASE, P.BertProcessing(("[SEP]", 2), ("[CLS]", 1)))
    check_many(setup, [["a b", "c"]], [(["a"], ["b", "c d e f g"])], TRUNCATIONS, pretok=True)
