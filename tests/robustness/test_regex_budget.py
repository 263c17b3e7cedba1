"""A risky pattern's time bound covers the whole encode, and walking its matches is linear.

`regex.guard` matches a pattern it finds risky under a time bound. The bound is one
deadline per encoded text (`regex.guard.budget`): a text cut into many pieces, each
matched in its own call, cannot take a fresh bound per piece. And the walk over a
risky pattern's matches (`regex.oniguruma.match_spans`, one ``search`` per match) makes
the text's view once, not once per match.
"""

from __future__ import annotations

import json

import pytest

import polytok
from polytok.errors import EncodeError
from polytok.regex import guard as regex_guard
from polytok.regex.oniguruma import OnigPattern, compile_onig, match_spans
from robustness.hostile import hf_base

RISKY = r"(\w+\s?)*$"  # about a millisecond on a 20-letter word; bounded by regex_guard


def _pieces_then_risky_split(tmp_path):
    data = hf_base()
    data["normalizer"] = None
    data["pre_tokenizer"]["pretokenizers"].insert(
        1, {"type": "Split", "pattern": {"Regex": RISKY}, "behavior": "Isolated", "invert": False})
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_the_bound_covers_the_whole_encode_not_each_piece(tmp_path, monkeypatch):
    tokenizers = pytest.importorskip("tokenizers")
    path = _pieces_then_risky_split(tmp_path)
    tok = polytok.load(path)
    assert compile_onig(RISKY).bounded
    word = "a" * 20 + "!"  # onig (HF) gives up past 24 letters
    reference = tokenizers.Tokenizer.from_file(str(path))
    for text in ("ab c", word, f"{word} {word}"):  # ordinary text: the reference's ids
        assert tok.encode(text) == reference.encode(text).ids
    # each piece takes milliseconds, far below the bound; thousands of them take
    # seconds, far above it: only a bound shared by the whole encode stops them
    monkeypatch.setattr(regex_guard, "BOUND_BASE", 0.3)
    monkeypatch.setattr(regex_guard, "BOUND_PER_CHAR", 0.0)
    tok.encode(word)
    with pytest.raises(EncodeError, match="catastrophic backtracking"):
        tok.encode(" ".join([word] * 3000))
    with pytest.raises(EncodeError, match="catastrophic backtracking"):
        tok.encode_full(" ".join([word] * 3000))


def test_a_budget_is_shared_by_nested_blocks_and_ends_with_the_outermost(monkeypatch):
    with regex_guard.budget(10):
        outer = regex_guard._deadline.at
        with regex_guard.budget(10_000_000):
            assert regex_guard._deadline.at == outer
        assert regex_guard._deadline.at == outer
    assert regex_guard._deadline.at is None


def test_walking_a_risky_patterns_matches_views_the_text_once(monkeypatch):
    pattern = compile_onig(r"(?:é|b)+")
    assert pattern.bounded
    views = []
    real_view = OnigPattern.view
    monkeypatch.setattr(OnigPattern, "view", lambda self, text: views.append(len(text)) or real_view(self, text))
    text = "éx" * 5000
    spans = match_spans(pattern, text)
    assert spans == [(i, i + 1) for i in range(0, len(text), 2)]
    assert views == [len(text)]  # one view for 5,000 searches
