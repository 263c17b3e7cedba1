"""ByteLevel post-processor vs the reference: offset trimming only, and its §10 quirks."""

from __future__ import annotations

import pytest

from ._data import TRUNCATIONS, Setup, byte_level_base, check, check_many, edge_texts, tokenizer_json

tokenizers = pytest.importorskip("tokenizers")
P = tokenizers.processors
AddedToken = tokenizers.AddedToken

TEXTS = ["hi", " hi", "  hi", "hi ", "hi  ", " ", "  ", "hi| hi|  hi", "hi |  | hi  |x", " x| y |z",
         "\u3000hi", "hi\u3000", "\thi\n", "|hi", " |  |   ", "ing|!", "<|x|>hi", "<|x|> hi", "a yo b",
         "yo", " yo | yo ", "a|b|c|d|e|f|g|h"]
PAIRS = [("hi", " hi"), ("  hi| x", "hi  | y"), (" ", "  "), ("<|x|>hi", "hi<|x|>")]
ADDED = [AddedToken("<|x|>", special=True), AddedToken(" yo ", normalized=False)]


@pytest.mark.parametrize("prefix_space", [True, False])
@pytest.mark.parametrize("trim,aps", [(True, True), (True, False), (False, False)])
def test_byte_level_pieces(prefix_space, trim, aps):
    base = byte_level_base(TEXTS + [t for p in PAIRS for t in p], prefix_space, ADDED)
    setup = Setup(base, P.ByteLevel(trim_offsets=trim, add_prefix_space=aps))
    tally = check_many(setup, TEXTS, PAIRS, TRUNCATIONS)
    assert tally.get("ok", 0) > 150, tally


def test_section10_quirks():
    # after a leading added token the prefixed word loses its first char; "Ġ!" after "|" collapses to (5, 5)
    base = byte_level_base(["<|x|>Hello", "ing|!"], True, ADDED)
    setup = Setup(base, P.ByteLevel(trim_offsets=True, add_prefix_space=True))
    assert check(setup, "<|x|>Hello") == "ok"
    assert check(setup, "ing|!") == "ok"
    setup.full.no_truncation()
    assert setup.full.encode("<|x|>Hello").tokens == ["<|x|>", "ĠHello"]
    assert setup.full.encode("<|x|>Hello").offsets == [(0, 5), (6, 10)]
    assert setup.full.encode("ing|!").offsets == [(0, 3), (5, 5)]


def test_pretokenized_offsets_restart_at_zero():
    base = byte_level_base(["hi", " hi", "  hi"], True)
    setup = Setup(base, P.ByteLevel(trim_offsets=True, add_prefix_space=True))
    check_many(setup, [["hi", " hi", "  hi"]], [(["  hi"], [" hi", "hi"])], TRUNCATIONS[:2], pretok=True)


@pytest.mark.parametrize("aps", [True, False])
def test_gpt2_file_with_trimming(aps):
    base = tokenizer_json("gpt2")
    base = {**base, "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": aps, "trim_offsets": True,
                                      "use_regex": True}}
    setup = Setup(base, {"type": "ByteLevel", "add_prefix_space": aps, "trim_offsets": True, "use_regex": True})
    texts = list(edge_texts()[::4])
    check_many(setup, texts, list(zip(texts[::5], texts[1::5])), [None, {"max_length": 9, "stride": 2}])


def test_trailing_run_longer_than_end_offset():
    # a normalizer that inserts spaces gives "qĠĠĠ" at (0, 1): e < trail, so the end is left alone
    norm = tokenizers.normalizers.Replace("q", "q   ")
    texts = ["q", "q|xq", " q", "q  |q"]
    for aps in (True, False):
        setup = Setup(byte_level_base(texts, aps, normalizer=norm), P.ByteLevel(trim_offsets=True))
        check_many(setup, texts, [("q", "xq")], [None])
    setup.full.no_truncation()
    encoding = setup.full.encode("q")
    assert (encoding.tokens, encoding.offsets) == (["qĠĠĠ"], [(0, 1)])
