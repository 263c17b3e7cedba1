"""RobertaProcessing vs the reference: special tokens, all-zero type ids, offset trimming."""

from __future__ import annotations

import pytest

from ._data import TRUNCATIONS, Setup, byte_level_base, check_many, edge_texts, tokenizer_json, word_level_base

tokenizers = pytest.importorskip("tokenizers")
P = tokenizers.processors

TEXTS = ["hi", " hi", "  hi", "hi ", "hi  ", " ", "  ", "hi| hi|  hi", "hi |  | hi  |x", " x| y |z",
         "\u3000hi", "hi\u3000", "\thi\n", "|hi", " |  |   ", "a|b|c|d|e|f|g|h"]
PAIRS = [("hi", " hi"), ("  hi| x", "hi  | y"), (" ", "  "), ("a|b|c|d|e", " f| g| h")]


@pytest.mark.parametrize("prefix_space", [True, False])
@pytest.mark.parametrize("trim,aps", [(True, True), (True, False), (False, True)])
def test_byte_level_pieces(prefix_space, trim, aps):
    base = byte_level_base(TEXTS + [t for p in PAIRS for t in p], prefix_space)
    setup = Setup(base, P.RobertaProcessing(("</s>", 2), ("<s>", 1), trim_offsets=trim, add_prefix_space=aps))
    tally = check_many(setup, TEXTS, PAIRS, TRUNCATIONS)
    assert tally.get("ok", 0) > 100, tally


def test_pretokenized_offsets_restart_at_zero():
    base = byte_level_base(["hi", " hi", "  hi", "x"], True)
    setup = Setup(base, P.RobertaProcessing(("</s>", 2), ("<s>", 1)))
    check_many(setup, [["hi", " hi", "  hi"], [" hi", "x"]], [(["hi", "  hi"], [" hi"])], TRUNCATIONS[:3],
               pretok=True)


def test_word_level_without_spaces():
    setup = Setup(word_level_base(list("abc"), []), P.RobertaProcessing(("</s>", 2), ("<s>", 1)))
    check_many(setup, ["a b c", "a"], [("a b", "c a b c")], TRUNCATIONS)


def test_roberta_base_file():
    base = tokenizer_json("roberta-base")
    setup = Setup(base, base["post_processor"])
    texts = list(edge_texts()[::3])
    check_many(setup, texts, list(zip(texts[::4], texts[1::4])), [None, {"max_length": 12, "stride": 3}])
