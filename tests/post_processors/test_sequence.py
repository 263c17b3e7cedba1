"""Sequence post-processor vs the reference, including chains where a later step sees template pieces."""

from __future__ import annotations

import pytest

from ._data import TRUNCATIONS, Setup, byte_level_base, check, check_many, word_level_base

tokenizers = pytest.importorskip("tokenizers")
P = tokenizers.processors

TEXTS = ["hi", " hi", "  hi|x ", "hi |  | hi  |x", " ", "a|b|c|d|e|f|g|h"]
PAIRS = [("hi", " hi"), ("  hi| x", "hi  | y"), ("a|b|c|d|e", " f| g| h")]
BASE = byte_level_base(TEXTS + [t for p in PAIRS for t in p], True, [tokenizers.AddedToken("<|x|>", special=True)])
VOCAB_IDS = {"<s>": 1, "</s>": 2}


def _template():
    return P.TemplateProcessing(single="<s> $A </s>", pair="<s> $A </s> $B:1 </s>:1",
                                special_tokens=list(VOCAB_IDS.items()))


CHAINS = {
    "llama3.1": lambda: [P.ByteLevel(trim_offsets=False), _template()],
    "trim-then-template": lambda: [P.ByteLevel(trim_offsets=True), _template()],
    "template-then-trim": lambda: [_template(), P.ByteLevel(trim_offsets=True)],  # trims each piece
    "template-then-bert": lambda: [_template(), P.BertProcessing(("</s>", 2), ("<s>", 1))],
    "bert-then-roberta": lambda: [P.BertProcessing(("</s>", 2), ("<s>", 1)),
                                  P.RobertaProcessing(("</s>", 2), ("<s>", 1))],
    "nested": lambda: [P.Sequence([P.ByteLevel(trim_offsets=True)]), P.Sequence([]), _template()],
    "empty": lambda: [],
}


@pytest.mark.parametrize("name", list(CHAINS))
def test_chains(name):
    setup = Setup(BASE, P.Sequence(CHAINS[name]()))
    tally = check_many(setup, TEXTS, PAIRS, TRUNCATIONS)
    assert tally.get("ok", 0) > 50, tally


def test_template_after_template_fails_like_hf():
    setup = Setup(BASE, P.Sequence([_template(), _template()]))
    assert check(setup, "hi", None, True).startswith("both raise")
    # without special tokens the first template still yields one piece per sequence
    assert check(setup, "hi", None, False) == "ok"
    assert check(setup, "hi", "x", False) == "ok"


def test_word_level_bert_sequence():
    setup = Setup(word_level_base(list("abcd"), ["[CLS]", "[SEP]"]),
                  P.Sequence([P.BertProcessing(("[SEP]", 2), ("[CLS]", 1))]))
    check_many(setup, ["a b c d", "a"], [("a b", "c d a b c d")], TRUNCATIONS)
