"""encode_full's tokens and offsets of a .model against sentencepiece 0.2.3's pieces, run live.

sentencepiece's ``encode(text, out_type=str)`` (``EncodeAsPieces``, ``emit_unk_piece``
off) gives an unknown span as its normalized text, a run of unknown pieces as one,
and byte-fallback pieces as ``<0xHH>``; ``encode(text, return_type="proto")`` gives
each piece's ``begin``/``end``, byte offsets into the input, which the tests turn
into character offsets to compare with ``Encoding.offsets``. Expected values always
come from sentencepiece on the same file: the real .model fixtures, the synthetic
models of tests/data/sentencepiece (and the two large-charsmap ones trained by
tools/make_synthetic_spm.py), hand-packed BPE / UNIGRAM / WORD / CHAR models with
unknown characters, with and without byte fallback, and the WORD model of
sentencepiece's own python test ``test_word_model_user_defined_symbol``, trained here
the way that test trains it.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from fixtures import REPO_ROOT, bench_slice, edge_texts, fixture_path

import polytok
from formats.sentencepiece_pack import BYTE, CONTROL, UNKNOWN, USER_DEFINED, field, piece, write
from formats.test_sentencepiece_parity import FILES, IDS
from formats.test_sentencepiece_rules import RULE_TEXTS

spm = pytest.importorskip("sentencepiece")

DATA = Path(__file__).resolve().parents[1] / "data" / "sentencepiece"
SYNTHETIC = sorted(p.stem for p in DATA.glob("*.model"))

# Unknown characters in every position: alone, in runs, glued to known text, after
# collapsed and leading/trailing spaces (which shift normalized against original
# positions), multi-byte (byte fallback spells several pieces), and text that
# normalization changes (full-width, ligatures, NBSP).
UNKNOWN_TEXTS = [
    "☃", "☃☃", "a☃", "☃a", "a☃☃b", "a ☃ b", "a   ☃", "  ☃  ", " ☃☃ ☃ ", "☃ a  ☃☃  b ☃",
    "😀", "a😀b😀😀", "日本 語x", "é e\u0301 Å", "x\u00a0\u00a0y", "ｱｲｳ ｶﾞ ﾊﾟ",
    "ﬁ ﬀ ㎏ ½ ⑴ ㈱ ＡＢＣ", "hello world", "hello   ☃world  ", "Hello World HELLO", "<u>☃<u>",
    "ab<u>xy☃", "\t☃\n", "q\u200bq",
]


def _char_offsets(text: str) -> dict[int, int]:
    """Byte offset (UTF-8) -> character offset, for every character boundary of `text`."""
    table, at = {}, 0
    for index, ch in enumerate(text):
        table[at] = index
        at += len(ch.encode("utf-8"))
    table[at] = len(text)
    return table


def reference(sp, text: str) -> list[tuple[int, str, tuple[int, int]]] | None:
    """sentencepiece's ``(id, piece, (begin, end))`` per piece, offsets in characters; None if it refuses."""
    try:
        pieces = sp.encode(text, out_type=str)
        proto = sp.encode(text, return_type="proto")
    except RuntimeError:
        return None
    chars = _char_offsets(text)
    out = [(p.id, p.piece, (chars[p.begin], chars[p.end])) for p in proto.pieces]
    assert [p for _, p, _ in out] == pieces  # the proto's pieces are EncodeAsPieces'
    return out


def mismatches(path: Path, texts: list[str]) -> list[str]:
    tok = polytok.load(path)
    sp = spm.SentencePieceProcessor(model_file=str(path))
    reports = []
    for text in texts:
        expected = reference(sp, text)
        if expected is None:
            continue
        encoding = tok.encode_full(text)
        actual = list(zip(encoding.ids, encoding.tokens, map(tuple, encoding.offsets)))
        if actual != expected:
            at = next((i for i, (a, b) in enumerate(zip(expected, actual)) if a != b), min(len(expected), len(actual)))
            reports.append(f"{path.name} text={text[:120]!r}: first difference at token {at}\n"
                           f"  sentencepiece {expected[max(0, at - 2):at + 3]}\n"
                           f"  polytok       {actual[max(0, at - 2):at + 3]}")
    return reports


def _assert_none(reports: list[str]) -> None:
    assert not reports, f"{len(reports)} mismatches; first ones:\n" + "\n\n".join(reports[:5])


@pytest.mark.parametrize(("name", "filename"), FILES, ids=IDS)
def test_real_models(name, filename):
    path = fixture_path(name, filename)
    texts = UNKNOWN_TEXTS + RULE_TEXTS + edge_texts() + [bench_slice(b, 3000) for b in ("en", "code", "multi")]
    _assert_none(mismatches(path, texts))


@pytest.mark.parametrize("name", SYNTHETIC)
def test_synthetic_models(name):
    _assert_none(mismatches(DATA / f"{name}.model", UNKNOWN_TEXTS + RULE_TEXTS + edge_texts()))


@pytest.fixture(scope="module")
def large_models(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    sys.path.insert(0, str(REPO_ROOT / "tools"))
    try:
        import make_synthetic_spm as make
    finally:
        sys.path.pop(0)
    tmp = tmp_path_factory.mktemp("spm-large-pieces")
    paths = {}
    for name, options in make.LARGE.items():
        paths[name] = tmp / f"{name}.model"
        paths[name].write_bytes(make.train(name, options, tmp))
    return paths


def test_large_charsmaps(large_models):
    for path in large_models.values():
        _assert_none(mismatches(path, UNKNOWN_TEXTS + RULE_TEXTS + edge_texts()))


def test_unknown_piece_is_the_normalized_text_not_the_original(large_models):
    """NFKC changes ｱｲｳ to アイウ: sentencepiece's piece is the normalized text, its surface the original."""
    path = large_models["bpe-nfkc-cf"]
    sp = spm.SentencePieceProcessor(model_file=str(path))
    text = "ｱｲｳ x ㈱"
    unknown = [p for p in sp.encode(text, return_type="proto").pieces if p.id == sp.unk_id()]
    assert [(p.piece, p.surface) for p in unknown] == [("アイウ", "ｱｲｳ"), ("(株)", "㈱")]
    encoding = polytok.load(path).encode_full(text)
    assert [t for i, t in zip(encoding.ids, encoding.tokens) if i == sp.unk_id()] == ["アイウ", "(株)"]
    _assert_none(mismatches(path, [text]))


# -- hand-packed models: each model type, unknown characters, with and without byte fallback --------

HEAD = [piece("<unk>", 0.0, UNKNOWN), piece("<s>", 0.0, CONTROL), piece("</s>", 0.0, CONTROL)]
BYTES = [piece(f"<0x{b:02X}>", 0.0, BYTE) for b in range(256)]
KNOWN = [piece("\u2581", -1.0), piece("a", -2.0), piece("b", -2.0), piece("ab", -1.5), piece("\u2581a", -1.8),
         piece("\u2581ab", -1.2), piece("\u2581b", -2.5), piece("<u>", 0.0, USER_DEFINED),
         piece("xy", 0.0, USER_DEFINED), piece("\u2581hello", -3.0), piece("\u2581world", -3.0),
         piece("h", -4.0), piece("e", -4.0), piece("l", -4.0), piece("o", -4.0)]
MODEL_TYPES = {"unigram": 1, "bpe": 2, "word": 3, "char": 4}


@pytest.mark.parametrize("byte_fallback", [False, True], ids=["unk", "byte_fallback"])
@pytest.mark.parametrize("kind", sorted(MODEL_TYPES))
def test_hand_packed_models_with_unknown_characters(tmp_path, kind, byte_fallback):
    trainer = field(3, MODEL_TYPES[kind]) + (field(35, 1) if byte_fallback else b"")
    path = write(tmp_path / f"{kind}.model", HEAD + (BYTES if byte_fallback else []) + KNOWN, trainer)
    sp = spm.SentencePieceProcessor(model_file=str(path))
    unknown = [p for p in sp.encode("a☃☃b ☃", return_type="proto").pieces
               if p.id == sp.unk_id() or sp.is_byte(p.id)]
    assert unknown, "the text must hold unknown pieces"
    _assert_none(mismatches(path, UNKNOWN_TEXTS + RULE_TEXTS + edge_texts()))


def test_word_model_user_defined_symbol(tmp_path):
    """sentencepiece's python test of that name: a WORD model with the user-defined symbol "."."""
    input_file = tmp_path / "input.txt"
    input_file.write_text("hello . world\nhello . test\n", encoding="utf-8")
    spm.SentencePieceTrainer.train(input=str(input_file), model_prefix=str(tmp_path / "word_model"),
                                   model_type="word", vocab_size=8, hard_vocab_limit=False,
                                   normalization_rule_name="identity", user_defined_symbols=["."],
                                   bos_id=-1, eos_id=-1, minloglevel=2)
    path = tmp_path / "word_model.model"
    sp = spm.SentencePieceProcessor(model_file=str(path))
    expected = sp.encode("hello . world", out_type=str)
    assert expected == ["\u2581hello", "\u2581.", "\u2581world"]  # what sentencepiece's test asserts
    assert sp.encode("hello . world")[0] == sp.unk_id()  # "▁hello" is not a piece of that model
    encoding = polytok.load(path).encode_full("hello . world")
    assert encoding.tokens == expected
    _assert_none(mismatches(path, ["hello . world", "hello . test", "hello world . hello", "  hello  .  "]
                            + UNKNOWN_TEXTS + edge_texts()))
