"""The split-behaviour folds: HF's own examples, and the char-class regexes against the folds."""

from __future__ import annotations

import random

import pytest

from polytok.pre_tokenizers.split_behavior import BEHAVIORS, CharSplitter, apply_behavior, cut


def _dash_pieces(text):
    """HF's covering list for the char pattern '-' (each dash its own match)."""
    pieces, start = [], 0
    for i, c in enumerate(text):
        if c == "-":
            if start < i:
                pieces.append((start, i, False))
            pieces.append((i, i + 1, True))
            start = i + 1
    if start < len(text):
        pieces.append((start, len(text), False))
    return pieces


def test_hf_doc_example():
    # normalizer.rs, SplitDelimiterBehavior docs: "the-final--countdown"
    text = "the-final--countdown"
    want = {
        "removed": ["the", "final", "countdown"],
        "isolated": ["the", "-", "final", "-", "-", "countdown"],
        "merged_with_previous": ["the-", "final-", "-", "countdown"],
        "merged_with_next": ["the", "-final", "-", "-countdown"],
        "contiguous": ["the", "-", "final", "--", "countdown"],
    }
    for behavior, pieces in want.items():
        assert cut(text, apply_behavior(_dash_pieces(text), behavior)) == pieces
        assert CharSplitter("\\-", behavior).pieces(text) == pieces


def test_zero_width_match_resets_previous_match():
    # onig "x*" on "abxxc": (0,0) (1,1) (2,4) (5,5) -> HF "a", "bxx", "c" (merged with previous)
    pieces = [(0, 0, True), (0, 1, False), (1, 1, True), (1, 2, False), (2, 4, True), (4, 5, False), (5, 5, True)]
    assert cut("abxxc", apply_behavior(pieces, "merged_with_previous")) == ["a", "bxx", "c"]
    assert cut("abxxc", apply_behavior(pieces, "merged_with_next")) == ["a", "b", "xxc"]


@pytest.mark.parametrize("behavior", sorted(BEHAVIORS.values()))
def test_char_regexes_equal_the_folds(behavior):
    rng = random.Random(14)
    splitter = CharSplitter("\\-", behavior)
    for _ in range(2000):
        text = "".join(rng.choice("-a-b") for _ in range(rng.randint(0, 10)))
        spans = [s for s in apply_behavior(_dash_pieces(text), behavior) if s[1] > s[0]]
        assert splitter.spans(text) == spans, text
        assert splitter.pieces(text) == cut(text, spans), text


def test_empty_matches_is_an_option_of_tiktokens_split_only():
    """``keep`` / ``refuse`` say what a tiktoken split makes of an empty match (the matches are the
    pieces); the HF behaviours have no such piece. The engine rule is pinned against tiktoken in
    tests/formats/test_tiktoken_empty_token.py."""
    from polytok.pre_tokenizers.split import Split

    with pytest.raises(ValueError, match="empty_matches"):
        Split("a*", "isolated", dialect="fancy", empty_matches="keep")
    with pytest.raises(ValueError, match="empty_matches"):
        Split("a*", "removed", invert=True, dialect="fancy", empty_matches="always")  # type: ignore[arg-type]
    assert Split("a*", "removed", invert=True, dialect="fancy", empty_matches="keep").splits_empty_text
    assert not Split("a*", "removed", invert=True, dialect="fancy").splits_empty_text  # HF drops them
    assert not Split("(?=a)", "removed", invert=True, dialect="fancy", empty_matches="keep").splits_empty_text


@pytest.mark.parametrize("behavior", ["merged_with_next", "merged_with_previous"])
@pytest.mark.parametrize("char", ["\u2581", "a", "-"])
def test_runs_of_one_char_merged_match_hf(behavior: str, char: str) -> None:
    # RegexSplitter cuts a merged split of ``X+`` with one findall of a pattern of the pieces
    # (the SentencePiece / GGUF word cut); HF's Split must agree on any text
    import tokenizers

    from polytok.pre_tokenizers.split import Split

    ref = tokenizers.pre_tokenizers.Split(tokenizers.Regex(f"{char}+"), behavior)
    ours = Split(char + "+", behavior)
    assert ours._splitter._merged_findall is not None  # the one-findall cut is the one tested
    rng = random.Random(7)
    alphabet = [char, char, "b", " ", "\u0378", "\U0001f600", "\n"]
    texts = ["", char, char * 3, "b" + char * 2, char * 2 + "b"]
    texts += ["".join(rng.choice(alphabet) for _ in range(rng.randrange(1, 14))) for _ in range(400)]
    for text in texts:
        want = [piece for piece, _ in ref.pre_tokenize_str(text)]
        assert ours.pre_tokenize(text) == want, text
