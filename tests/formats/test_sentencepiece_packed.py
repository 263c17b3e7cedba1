"""Rules no trained model shows, on hand-packed .model files, against sentencepiece 0.2.3 run live.

Each model is built so that breaking the rule changes sentencepiece's own output:
the sign of a zero score in the BPE queue, a CONTROL piece as a would-be merge,
the user-defined bonus and the normal-only unknown score of the unigram Viterbi,
UNUSED pieces skipped by it, a ``"\\0"`` piece under byte_fallback, and
float32 path sums shifted on long texts.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from fixtures import edge_texts, fixture_path

import polytok
from formats.sentencepiece_pack import BYTE, CONTROL, UNKNOWN, UNUSED, USER_DEFINED, field, piece, write

spm = pytest.importorskip("sentencepiece")

DATA = Path(__file__).resolve().parents[1] / "data" / "sentencepiece"

BPE, UNIGRAM = field(3, 2), field(3, 1)
HEAD = [piece("<unk>", 0.0, UNKNOWN), piece("<s>", 0.0, CONTROL), piece("</s>", 0.0, CONTROL)]


def same(path, texts: list[str]) -> list[tuple[str, list[int], list[int]]]:
    tok = polytok.load(path)
    sp = spm.SentencePieceProcessor(model_file=str(path))
    return [(t, sp.encode(t), tok.encode(t)) for t in texts if sp.encode(t) != tok.encode(t)]


def test_bpe_orders_negative_zero_below_zero(tmp_path):
    pieces = HEAD + [piece("\u2581", -5.0), piece("h", -6.0), piece("e", -7.0), piece("\u2581h", -0.0),
                     piece("he", 0.0)]
    path = write(tmp_path / "z.model", pieces, BPE)
    sp = spm.SentencePieceProcessor(model_file=str(path))
    assert [sp.id_to_piece(i) for i in sp.encode("he")] == ["\u2581", "he"]
    assert not same(path, ["he", "hehe he"])


def test_bpe_never_merges_into_a_control_piece(tmp_path):
    pieces = HEAD + [piece("\u2581", -1.0), piece("l", -2.0), piece("ll", 0.0, CONTROL), piece("\u2581l", -3.0)]
    path = write(tmp_path / "c.model", pieces, BPE)
    assert not same(path, ["ll", "lll l"])


def test_unigram_user_defined_bonus_and_unknown_score(tmp_path):
    pieces = HEAD[:1] + [piece("<s>", -100.0, CONTROL), piece("</s>", 0.0, CONTROL),
                         piece("\u2581", -1.0), piece("\u2581ab", -0.95), piece("ab", 0.0, USER_DEFINED),
                         piece("\u2581xb", -30.0), piece("c", -1.0), piece("bc", 20.0), piece("b", -2.0),
                         piece("a", -5.0), piece("\u2581q", 5.0, UNUSED), piece("q", -9.0)]
    path = write(tmp_path / "u.model", pieces, UNIGRAM)
    sp = spm.SentencePieceProcessor(model_file=str(path))
    # "▁" + user "ab" (0.1) beats "▁ab" (-0.95): the bonus 0.1 * (length - 1) decides
    assert [sp.id_to_piece(i) for i in sp.encode("ab")] == ["\u2581", "ab"]
    # the unknown "x" costs min(normal) - 10 = -40, not min(all) - 10: "▁" + unk + "bc" wins
    assert sp.encode("xbc")[1] == sp.unk_id()
    assert not same(path, ["ab", "xbc", "xb", "q", "aq ab"])


def test_null_piece_is_unused_under_byte_fallback(tmp_path):
    pieces = HEAD + [piece(f"<0x{b:02X}>", 0.0, BYTE) for b in range(256)] + [
        piece("\u2581", -1.0), piece("a", -2.0), piece("\0", -1.0)]
    path = write(tmp_path / "n.model", pieces, BPE + field(35, 1))
    sp = spm.SentencePieceProcessor(model_file=str(path))
    assert sp.id_to_piece(sp.encode("a\0")[-1]) == "<0x00>"
    assert not same(path, ["a\0", "\0\0a"])


def _long_text(size: int) -> str:
    texts = [t for t in edge_texts() if not any("\ud800" <= c <= "\udfff" for c in t)]
    text = " ".join(texts)
    return (text * (size // len(text) + 1))[:size]


@pytest.mark.parametrize(("name", "filename", "size"), [("spm-botchan-unigram-1000", "spm.model", 200000),
                                                        ("spm-kyoto-ja-unigram-8000", "spm.model", 200000),
                                                        ("synthetic", "unigram-whole-text.model", 400000)])
def test_unigram_float32_sums_are_shifted_on_long_texts(name, filename, size):
    # unigram-whole-text has pieces with "▁" inside both ways: no word cut, one float32 loop
    path = DATA / filename if name == "synthetic" else fixture_path(name, filename)
    sp = spm.SentencePieceProcessor(model_file=str(path))
    text = _long_text(size)
    ids = sp.encode(text)
    assert sum(sp.get_score(i) for i in ids) < -300000  # the shift at -100000 happens, several times
    assert polytok.load(path).encode(text) == ids
