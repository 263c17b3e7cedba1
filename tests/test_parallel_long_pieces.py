"""Text without split points is not shared: one process encodes it, with the reference's ids.

A piece that runs on across the place where `long_text` cuts a text (a text of one
letter, CJK without punctuation) would be scanned and merged whole by every part that
reaches it, so sharing multiplies the work instead of dividing it. `encode_long` and
`count_long` then decline (None: the caller encodes in one process), and `polytok count`
gives the reference's count either way.
"""

from __future__ import annotations

import functools

import pytest
from fixtures import HF_JSON_FIXTURES, fixture_path

from polytok import parallel
from polytok.cli import main as cli
from polytok.parallel import long_text

tokenizers = pytest.importorskip("tokenizers")
pytestmark = pytest.mark.skipif(not parallel.can_fork(), reason="no fork start method here")

NO_SPLIT_POINTS = {
    "one letter": "a" * 40_000,
    "CJK without punctuation": "日本語の文章を書く" * 4_500,
    "digits and letters, no spaces": "x1" * 20_000,
}


@functools.cache
def _pair(name: str):
    import polytok
    path = fixture_path(name, HF_JSON_FIXTURES[name])
    ref = tokenizers.Tokenizer.from_file(str(path))
    ref.no_truncation()
    tok = polytok.load(path)
    tok.truncation = None
    return path, ref, tok


@pytest.mark.parametrize("name", ["gpt2", "llama3"])
@pytest.mark.parametrize("kind", list(NO_SPLIT_POINTS))
def test_text_without_split_points_is_not_shared(name, kind, monkeypatch):
    monkeypatch.setattr(long_text, "MIN_CHARS", 10_000)
    _, ref, tok = _pair(name)
    text = NO_SPLIT_POINTS[kind]
    if len(ref.pre_tokenizer.pre_tokenize_str(text)) > 8:
        pytest.skip(f"{name}'s pre-tokenizer splits this text: sharing can pay")
    assert long_text.count_long(tok, [text], add_special=True, special=None, workers=2) is None
    assert long_text.encode_long(tok, [text], add_special=True, special=None, workers=2) is None


def test_ordinary_text_is_still_shared_with_the_reference_ids(monkeypatch):
    monkeypatch.setattr(long_text, "MIN_CHARS", 10_000)
    _, ref, tok = _pair("gpt2")
    text = "The quick brown fox jumps over the lazy dog. " * 1_000 + "a" * 3_000 + " end"
    assert long_text.encode_long(tok, [text], add_special=True, special=None, workers=2) == \
        [ref.encode(text).ids]


def test_count_gives_the_reference_count_on_text_without_split_points(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(long_text, "MIN_CHARS", 10_000)
    path, ref, _ = _pair("gpt2")
    files = []
    for i, text in enumerate(NO_SPLIT_POINTS.values()):
        files.append(tmp_path / f"{i}.txt")
        files[-1].write_text(text, encoding="utf-8")
    assert cli.main(["count", str(path), *map(str, files), "--workers", "2"]) in (0, None)
    counts = [int(line.split("\t")[0]) for line in capsys.readouterr().out.splitlines()[:len(files)]]
    assert counts == [len(ref.encode(text).ids) for text in NO_SPLIT_POINTS.values()]
