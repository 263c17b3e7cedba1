"""One sentencepiece rule per small model, against sentencepiece 0.2.3 run live.

The models in tests/data/sentencepiece/ were trained by tools/make_synthetic_spm.py
with sentencepiece's own trainer, one option changed per model; the two whose
charsmap is large (nfkc_cf, nmt_nfkc) are trained here by the same script. The
expected ids and texts always come from sentencepiece on the same file.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from fixtures import REPO_ROOT, edge_texts
from parity.diff_report import ids_mismatch

import polytok

spm = pytest.importorskip("sentencepiece")

DATA = Path(__file__).resolve().parents[1] / "data" / "sentencepiece"
MODELS = sorted(p.stem for p in DATA.glob("*.model"))

# Texts aimed at the rules the models pin (see tools/make_synthetic_spm.py).
RULE_TEXTS = [
    "", " ", "   ", "\u2581", "\u2581\u2581", " \u2581 ", "a \u2581", "x\u2581", "\u200b", "\t\n",
    "hello  world  ", "  hello", " hello world ", "Hello World", "hello the world", "the hello",
    "ep ll oo fo wor", "well wore foot", "I said  hello   to the    world twice.",
    "ＡＢＣ ＡＢ abc ab ABC AB", "ＡＢ", "ＡＢＣＤ", "\u3000x\u3000", "a\u2003b", "\u2003", " \u2003 x", "\u2003\u2003",
    "\u2460\u2460", "foo<sep>foo", "foofoo <sep><sep>", "baz qux", "bazqux", "<sep> <sep>", "abcd abc", "abcabc",
    "[CTRL] <ctl> <s> </s> <unk> <pad>", "[CTRL][CTRL]", "xyz", "qq q", "☃☃ ☃", "😀 x 😀😀", "日本語 東京",
    "1234567 89", "Ａ\u0301", "Café naïve", "ｆｏｏ ＦＯＯ ß ẞ İ", "ﬁ ﬀ ㎏ ½", "\x00a\x00", "a" * 300,
    "hello " * 50,
]


def _large_models(tmp_dir: Path) -> list[Path]:
    sys.path.insert(0, str(REPO_ROOT / "tools"))
    try:
        import make_synthetic_spm as make
    finally:
        sys.path.pop(0)
    paths = []
    for name, options in make.LARGE.items():
        path = tmp_dir / f"{name}.model"
        path.write_bytes(make.train(name, options, tmp_dir))
        paths.append(path)
    return paths


@pytest.fixture(scope="module")
def large_models(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    return _large_models(tmp_path_factory.mktemp("spm-large"))


def _check(path: Path, texts: list[str]) -> list[str]:
    tok = polytok.load(path)
    sp = spm.SentencePieceProcessor(model_file=str(path))
    reports = []
    for text in texts:
        try:
            expected = sp.encode(text)
        except RuntimeError:
            continue
        report = ids_mismatch(path.name, text, "encode", expected, tok.encode(text), tok.id_to_token)
        if report:
            reports.append(report)
        if tok.decode(expected) != sp.decode(expected):
            reports.append(f"{path.name}: decode of the ids of {text[:60]!r}: sentencepiece "
                           f"{sp.decode(expected)[:60]!r}, polytok {tok.decode(expected)[:60]!r}")
    ids = list(range(sp.get_piece_size()))
    for size in (1, 3, 8):
        for start in range(0, len(ids), size):
            chunk = ids[start:start + size]
            if tok.decode(chunk) != sp.decode(chunk):
                reports.append(f"{path.name}: decode({chunk}) = {tok.decode(chunk)!r}, sentencepiece "
                               f"{sp.decode(chunk)!r}")
    return reports


@pytest.mark.parametrize("name", MODELS)
def test_model_equals_sentencepiece(name):
    reports = _check(DATA / f"{name}.model", RULE_TEXTS + edge_texts())
    assert not reports, f"{len(reports)} mismatches; first ones:\n" + "\n\n".join(reports[:5])


def test_large_charsmaps_equal_sentencepiece(large_models):
    for path in large_models:
        reports = _check(path, RULE_TEXTS + edge_texts())
        assert not reports, f"{len(reports)} mismatches; first ones:\n" + "\n\n".join(reports[:5])


def _pair(name: str) -> tuple[polytok.Tokenizer, object]:
    path = DATA / f"{name}.model"
    return polytok.load(path), spm.SentencePieceProcessor(model_file=str(path))


@pytest.mark.parametrize("name", ["bpe-user-control", "unigram-rules", "word", "char", "bpe-suffix",
                                  "unigram-keep-spaces-no-prefix", "bpe-byte-fallback"])
def test_encode_full_has_the_same_ids(name):
    tok = polytok.load(DATA / f"{name}.model")
    for text in RULE_TEXTS:
        encoding = tok.encode_full(text)
        assert encoding.ids == tok.encode(text), text
        assert len(encoding.offsets) == len(encoding.ids)


def test_model_types_are_read():
    assert polytok.load(DATA / "word.model").facts.details["model_type"] == "word"
    assert polytok.load(DATA / "char.model").facts.details["model_type"] == "char"


def test_byte_fallback_decodes_invalid_bytes_one_replacement_each():
    tok, sp = _pair("bpe-byte-fallback")
    byte = {b: sp.piece_to_id(f"<0x{b:02X}>") for b in range(256)}
    for raw in (b"\xe3\x81A", b"\xf0\x9f\x98", b"\xed\xa0\x80", b"\xc0\xaf", b"ok\xff", b"\xe3\x81\x82"):
        ids = [byte[b] for b in raw]
        assert tok.decode(ids) == sp.decode(ids)
    assert sp.decode([byte[0xE3], byte[0x81], byte[0x41]]) == "\ufffd\ufffdA"  # not Python's one per subpart


def test_unk_surface_and_unknown_runs():
    for name in ("bpe-unk-surface", "unigram-unk-surface"):
        tok, sp = _pair(name)
        ids = sp.encode("☃☃ x ☃")
        assert tok.encode("☃☃ x ☃") == ids and ids.count(sp.unk_id()) == 2
        assert tok.decode(ids) == sp.decode(ids)


def test_parse_mode_with_control_and_user_defined_symbols():
    for name in ("bpe-user-control", "unigram-user-control"):
        tok, sp = _pair(name)
        ctrl = sp.piece_to_id("[CTRL]")
        text = "foo[CTRL]<sep> bar"
        assert tok.encode(text) == sp.encode(text)  # [CTRL] is text by default
        assert tok.encode(text, special="parse") == sp.encode("foo") + [ctrl] + sp.encode("<sep> bar")


def test_special_ids_follow_the_trainer_spec():
    tok, sp = _pair("unigram-split-digits-pad")
    assert tok.special_ids == {"unk": sp.unk_id(), "eos": sp.eos_id(), "pad": sp.pad_id()}
    assert sp.bos_id() == -1


def test_decode_out_of_range_names_the_position():
    tok, sp = _pair("word")
    with pytest.raises(IndexError):
        sp.decode([3, sp.get_piece_size()])
    with pytest.raises(polytok.DecodeError, match="position 1"):
        tok.decode([3, sp.get_piece_size()])
    with pytest.raises(polytok.DecodeError, match="position 0"):
        tok.decode([-1])
