"""Patterns read from files: risky ones are matched under a time bound; real ones run unbounded.

The hang cases build a tokenizer.json / tiktoken file whose pattern backtracks
catastrophically; encoding adversarial text must stop with an EncodeError within the
bound, while ordinary text still encodes as the reference does.
"""

from __future__ import annotations

import json
import time

import pytest

import polytok
from polytok.errors import EncodeError
from polytok.regex import guard as regex_guard
from polytok.regex.fancy import compile_fancy
from polytok.regex.oniguruma import compile_onig
from robustness.hostile import hf_base

REAL = [
    r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+""",
    r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"""
    r"""|\s*[\r\n]+|\s+(?!\S)|\s+""",
    r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\p{N}{1,3}""",
    r" {2,}", r"\s+", r"[0-9][0-9][0-9]",
]
RISKY = [r"(a+)+$", r"(a|aa)*b", r"(\w+\s?)*$", r"(x+x+)+y", r"^(\d+)*$", r"(.*a){12}", r"(a)\1"]


@pytest.mark.parametrize("pattern", REAL)
def test_real_patterns_run_unbounded(pattern):
    assert not compile_onig(pattern).bounded
    assert not compile_fancy(pattern).bounded


@pytest.mark.parametrize("pattern", RISKY)
def test_risky_patterns_are_bounded(pattern):
    assert compile_onig(pattern).bounded


def _split_tokenizer(tmp_path, pattern):
    data = hf_base()
    data["pre_tokenizer"]["pretokenizers"][0]["pattern"] = {"Regex": pattern}
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_catastrophic_split_stops_within_its_bound(tmp_path, monkeypatch):
    tokenizers = pytest.importorskip("tokenizers")
    path = _split_tokenizer(tmp_path, r"(a+)+$")
    tok = polytok.load(path)
    for text in ("ab c", "aaa", "b aab"):  # ordinary text: the reference's ids
        assert tok.encode(text) == tokenizers.Tokenizer.from_file(str(path)).encode(text).ids
    monkeypatch.setattr(regex_guard, "BOUND_BASE", 0.2)
    text = "a" * 2000 + "!"  # unbounded, this runs far past the bound
    bound = regex_guard.time_bound(len(text))
    start = time.process_time()
    with pytest.raises(EncodeError, match=rf"took over {bound:.1f} s on {len(text)} characters \(catastrophic"):
        tok.encode(text)
    # subtle: CPU time, not the wall clock. regex's timeout= counts the process's CPU time (regex
    # 2026.5.9, _regex.c: start_time and the check are C clock()), so on a loaded machine the wall
    # clock runs on past the bound: a wall-clock check here failed by 0.2 ms once. The margin is for
    # the work around the match, not for the machine's load.
    assert time.process_time() - start < bound + 1.0


def test_catastrophic_tiktoken_pattern_stops(tmp_path, monkeypatch):
    path = tmp_path / "ranks.tiktoken"
    path.write_bytes(b"".join(b"%s %d\n" % (__import__("base64").b64encode(bytes([i])), i) for i in range(256)))
    tok = polytok.load(path, pattern=r"(\w+\s?)*$|\s+|.")
    monkeypatch.setattr(regex_guard, "BOUND_BASE", 0.2)
    with pytest.raises(EncodeError):
        tok.encode("a" * 2000 + "!")


def test_bound_is_proportional_to_text():
    assert regex_guard.time_bound(2_000_000) > 2 * regex_guard.time_bound(500_000) - regex_guard.BOUND_BASE
