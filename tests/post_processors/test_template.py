"""TemplateProcessing vs the reference, through small WordLevel tokenizers."""

from __future__ import annotations

import pytest

from polytok.errors import EncodeError
from polytok.post_processors import TemplateProcessing

from ._data import TRUNCATIONS, Setup, check, check_many, word_level_base

tokenizers = pytest.importorskip("tokenizers")
P = tokenizers.processors

WORDS = list("abcdefgh")
SPECIALS = ["[CLS]", "[SEP]", "[X]", "[Y]"]
BASE = word_level_base(WORDS, SPECIALS)
IDS = {t: i + 1 for i, t in enumerate(SPECIALS)}
SINGLES = ["", "a", "a b", "a b c d e f", "a b c d e f g h a b", "zz a"]
PAIRS = [("a", "b"), ("a b c", "d e f g h"), ("a b c d e f g", "h"), ("", "a b"), ("a b", ""),
         ("a b c d e f g h", "a b c d e f g h")]

TEMPLATES = [
    ("[CLS] $A [SEP]", "[CLS] $A [SEP] $B:1 [SEP]:1"),
    ("[CLS]:3 $A:2 [SEP]:3", "[CLS]:3 $A:2 [SEP]:3 $B:4 [SEP]:5"),  # overflow keeps 0/1 type ids
    ("$A", "$A $B:1"),
    ("$A:1 [SEP]:2", "$B:1 [SEP] $A"),  # B first
    ("$0 $1", "$A $A:1 $B [X] $B:2"),  # sequences repeated
    ("[X] [CLS] $A [Y]", "[X] $A [Y] [X]:1 $B:1 [Y]:1"),  # multi-id special tokens
    ("[CLS] $A", "[CLS] $A [SEP]"),  # pair template without $B: B is dropped
    ("", "$B"),  # empty single template
]


def _pieces(template: str) -> list[dict]:
    """The JSON pieces of a template string (``[CLS]:1``, ``$A``, ``$B:1``, ``$1``)."""
    out = []
    for item in template.split():
        name, _, type_id = item.partition(":")
        if name.startswith("$"):
            seq = name[1:].upper() if name[1:] in ("A", "B", "a", "b") else "A"
            default = int(name[1:]) if name[1:].isdigit() else 0
            out.append({"Sequence": {"id": seq, "type_id": int(type_id or default)}})
        else:
            out.append({"SpecialToken": {"id": name, "type_id": int(type_id or 0)}})
    return out


def _processor(single, pair):
    # JSON form: HF's deserializer does not validate templates (the Python builder would refuse some)
    specials = {t: {"id": t, "ids": [IDS[t]], "tokens": [t]} for t in ("[CLS]", "[SEP]")}
    specials["[X]"] = {"id": "[X]", "ids": [3, 4, 3], "tokens": ["[X]", "[Y]", "[X]"]}
    specials["[Y]"] = {"id": "[Y]", "ids": [], "tokens": []}
    return {"type": "TemplateProcessing", "single": _pieces(single), "pair": _pieces(pair),
            "special_tokens": specials}


@pytest.mark.parametrize("single,pair", TEMPLATES, ids=[f"{s}|{p}" for s, p in TEMPLATES])
def test_templates(single, pair):
    setup = Setup(BASE, _processor(single, pair))
    tally = check_many(setup, SINGLES, PAIRS, TRUNCATIONS)
    assert tally.get("ok", 0) > 100, tally


def test_pretokenized_words():
    setup = Setup(BASE, _processor("[CLS] $A [SEP]", "[CLS] $A [SEP] $B:1 [SEP]:1"))
    check_many(setup, [["a", "b c"], ["d"]], [(["a", "b"], ["c d", "e"])], TRUNCATIONS[:3], pretok=True)


def _json_template(single, pair, specials):
    return {"type": "TemplateProcessing", "single": single, "pair": pair, "special_tokens": specials}


SEQ_A = {"Sequence": {"id": "A", "type_id": 0}}
SEQ_B = {"Sequence": {"id": "B", "type_id": 1}}
MISSING = {"SpecialToken": {"id": "[NOPE]", "type_id": 0}}


def test_missing_special_token_fails_only_when_adding():
    setup = Setup(BASE, _json_template([MISSING, SEQ_A], [SEQ_A, MISSING, SEQ_B], {}))
    assert setup.ours.added_tokens(False) == 0
    for add_special in (True, False):
        assert check(setup, "a b", None, add_special) in ("ok", "both raise (PanicException)")
        assert check(setup, "a b", "c", add_special) in ("ok", "both raise (PanicException)")
    with pytest.raises(EncodeError):
        setup.ours.process_ids([1], None, True)


def test_b_in_single_template_fails_always():
    setup = Setup(BASE, _json_template([SEQ_B], [SEQ_A, SEQ_B], {}))
    for add_special in (True, False):
        assert check(setup, "a b", None, add_special).startswith("both raise")
        assert check(setup, "a b", "c", add_special) == "ok"


def test_special_token_map_key_is_the_reference():
    specials = {"[K]": {"id": "[other]", "ids": [7, 8], "tokens": ["k", "l"]}}
    setup = Setup(BASE, _json_template([{"SpecialToken": {"id": "[K]", "type_id": 2}}, SEQ_A], [SEQ_A, SEQ_B],
                                       specials))
    assert check(setup, "a b") == "ok"


def test_fast_path_matches_template_walk():
    proc = TemplateProcessing.from_config(_json_template(
        [{"SpecialToken": {"id": "s", "type_id": 0}}, SEQ_A, SEQ_A],
        [SEQ_B, {"SpecialToken": {"id": "s", "type_id": 1}}, SEQ_A],
        {"s": {"id": "s", "ids": [9, 10], "tokens": ["x", "y"]}}), "post_processor")
    # by construction: "s" stands for ids 9, 10, single is s A A and pair is B s A (without special
    # tokens: the sequences alone, in template order, as HF does for the B-first templates of test_templates)
    assert proc.process_ids([1, 2], None, True) == [9, 10, 1, 2, 1, 2]
    assert proc.process_ids([1, 2], [3], True) == [3, 9, 10, 1, 2]
    assert proc.process_ids([1, 2], [3], False) == [3, 1, 2]
    assert proc.added_tokens(False) == 2 and proc.added_tokens(True) == 2
