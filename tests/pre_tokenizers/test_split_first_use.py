"""Split patterns whose splitter is made on first use (`split._COMPILED_ON_FIRST_USE`): each compiles,
so no error moves from a load to an encode, and the deferred Split cuts, aligns, pickles and offers
its batch cut as one built at once."""

from __future__ import annotations

import pickle

import pytest

from polytok.normalized import NormalizedString
from polytok.pre_tokenizers.split import _COMPILED_ON_FIRST_USE, Split
from polytok.pre_tokenizers.split_behavior import BEHAVIORS, RegexSplitter
from polytok.regex.oniguruma import compile_onig

TEXTS = ["", "\u2581", "\u2581\u2581a\u2581b\u2581\u2581\u2581", "ab\u2581\u2581c d\u2581", "x" * 50 + "\u2581" * 3]


@pytest.mark.parametrize("pattern", sorted(_COMPILED_ON_FIRST_USE))
def test_each_pattern_compiles(pattern):
    assert compile_onig(pattern, "pattern") is not None


@pytest.mark.parametrize("behavior", sorted(BEHAVIORS.values()))
@pytest.mark.parametrize("invert", [False, True])
def test_a_deferred_split_is_the_split_built_at_once(behavior, invert):
    deferred = Split("\u2581+", behavior, invert=invert)
    assert "_splitter" not in deferred.__dict__, "made on first use"
    eager = Split("\u2581+", behavior, invert=invert, empty_matches="drop")
    eager._splitter = eager._make_splitter("pattern", "onig", "drop")
    assert deferred.batch_split() == eager.batch_split()
    for text in TEXTS:
        assert deferred.pre_tokenize(text) == eager._splitter.pieces(text)
        aligned = deferred.pre_tokenize_aligned(NormalizedString.from_original(text))
        assert [piece.text for piece in aligned] == [text[a:b] for a, b in eager._splitter.spans(text)]
    assert isinstance(deferred.splitter, RegexSplitter)


def test_a_deferred_split_pickles_before_and_after_its_first_use():
    split = Split("\u2581+", "merged_with_next")
    clone = pickle.loads(pickle.dumps(split))
    assert clone.pre_tokenize("a\u2581b") == ["a", "\u2581b"]
    again = pickle.loads(pickle.dumps(clone))
    assert "_splitter" in clone.__dict__ and "_splitter" not in again.__dict__
    assert clone.__getstate__() == split.__getstate__()
    assert again.pre_tokenize("a\u2581\u2581b") == ["a", "\u2581\u2581b"]


def test_other_patterns_and_bad_ones_are_compiled_at_once():
    assert "_splitter" in Split("\u2581", "merged_with_next").__dict__
    assert "_splitter" in Split("\u2581+", "merged_with_next", is_regex=False).__dict__
    assert "_splitter" in Split("\u2581+", "merged_with_next", dialect="fancy").__dict__
    assert "_splitter" in Split("\u2581+", "removed", invert=True, empty_matches="keep").__dict__
    with pytest.raises(Exception, match="pattern"):
        Split("(", "isolated")
    with pytest.raises(AttributeError):
        Split("\u2581+", "isolated").no_such_attribute  # noqa: B018
