"""Broken .model files: polytok raises FormatError naming the byte offset and field, never a traceback.

Where sentencepiece 0.2.3 refuses a file at load (``InitializePieces``'s checks),
polytok refuses it too; the small files here are packed by hand.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

import polytok
from formats.sentencepiece_pack import field, model, piece, varint
from polytok.formats.protobuf_wire import Field, read_message

spm = pytest.importorskip("sentencepiece")

DATA = Path(__file__).resolve().parents[1] / "data" / "sentencepiece"


GOOD = [piece("<unk>", 0.0, 2), piece("<s>", 0.0, 3), piece("</s>", 0.0, 3), piece("\u2581a", -1.0),
        piece("a", -2.0), piece("b", -3.0)]


def load(tmp_path: Path, data: bytes) -> polytok.Tokenizer:
    path = tmp_path / "t.model"
    path.write_bytes(data)
    return polytok.load(path)


def sp_refuses(tmp_path: Path, data: bytes) -> bool:
    path = tmp_path / "ref.model"
    path.write_bytes(data)
    try:
        spm.SentencePieceProcessor(model_file=str(path))
    except (RuntimeError, OSError):
        return True
    return False


def test_hand_packed_model_loads_like_sentencepiece(tmp_path):
    data = model(GOOD, field(3, 2))
    tok = load(tmp_path, data)
    path = tmp_path / "ref.model"
    path.write_bytes(data)
    sp = spm.SentencePieceProcessor(model_file=str(path))
    for text in ("a b ab", "aab  b", "c"):
        assert tok.encode(text) == sp.encode(text)


def test_truncated_file_names_offset_and_field(tmp_path):
    data = (DATA / "bpe-user-control.model").read_bytes()
    with pytest.raises(polytok.FormatError) as error:
        load(tmp_path, data[: len(data) // 2])
    assert error.value.offset is not None and error.value.key
    assert "past the end" in str(error.value) or "truncated" in str(error.value)


def test_every_truncation_is_a_format_error_or_a_model(tmp_path):
    data = (DATA / "word.model").read_bytes()
    for cut in range(0, len(data), 7):
        try:
            load(tmp_path, data[:cut])
        except polytok.FormatError as error:
            assert error.file and (error.offset is not None or error.key)


def test_garbage_bytes(tmp_path):
    with pytest.raises(polytok.FormatError) as error:
        load(tmp_path, b"\xff" * 40)
    assert error.value.offset == 0
    rng = random.Random(7)
    for _ in range(50):
        blob = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 200)))
        with pytest.raises(polytok.FormatError):
            load(tmp_path, blob)


def test_text_file_named_model(tmp_path):
    with pytest.raises(polytok.FormatError):
        load(tmp_path, b'{"model": {"type": "BPE"}}\n')


def test_wrong_wire_type_and_bad_utf8(tmp_path):
    with pytest.raises(polytok.FormatError, match="length-delimited") as error:
        load(tmp_path, field(1, 5) + model(GOOD))
    assert error.value.offset == 0 and error.value.key == "pieces"
    bad = field(1, field(1, b"\xc3(") + field(2, 0.0))
    with pytest.raises(polytok.FormatError, match="UTF-8") as error:
        load(tmp_path, model(GOOD + [bad]))
    assert error.value.key == f"pieces[{len(GOOD)}].piece"
    assert error.value.offset == sum(map(len, GOOD)) + 4


@pytest.mark.parametrize(("pieces", "trainer", "match"), [
    (GOOD + [piece("a", -5.0)], field(3, 2), "already defined"),
    (GOOD + [piece("<unk2>", 0.0, 2)], field(3, 2), "unk is already defined"),
    (GOOD[1:], field(3, 2), "unk is not defined"),
    (GOOD + [piece("<0x41>", 0.0, 6)], field(3, 2), "byte_fallback is false"),
    (GOOD + [piece("<0x41>", 0.0, 6)], field(3, 2) + field(35, 1), "not 256"),
    (GOOD + [piece("")], field(3, 2), "must not be empty"),
    (GOOD + [piece("x\x00y")], field(3, 2), "NUL"),
    (GOOD + [piece("nan", float("nan"))], field(3, 1), "NaN"),
])
def test_load_checks_as_sentencepiece(tmp_path, pieces, trainer, match):
    data = model(pieces, trainer)
    assert sp_refuses(tmp_path, data)
    with pytest.raises(polytok.FormatError, match=match):
        load(tmp_path, data)


def test_broken_charsmap(tmp_path):
    data = model(GOOD, field(3, 2), field(2, b"\x00\x10\x00\x00" + b"\x00" * 8))
    assert sp_refuses(tmp_path, data)
    with pytest.raises(polytok.FormatError, match="precompiled_charsmap"):
        load(tmp_path, data)


def test_unknown_options_are_refused():
    with pytest.raises(polytok.FormatError, match="no options"):
        polytok.load(DATA / "word.model", lowercase=True)


def test_wire_reader_rules():
    schema = {1: Field("n", "int32"), 2: Field("s", "string", repeated=True), 3: Field("e", "enum",
                                                                                       values=frozenset({1, 2}))}
    data = field(1, -5) + field(2, b"x") + field(2, b"y") + field(3, 9) + field(7, 1) + field(1, 3)
    assert read_message(data, 0, len(data), schema) == {"n": 3, "s": ["x", "y"]}
    group = varint(8 << 3 | 3) + field(1, 1) + varint(8 << 3 | 4)
    assert read_message(group + field(1, 4), 0, len(group) + 2, schema) == {"n": 4}
    with pytest.raises(polytok.FormatError, match="longer than 10 bytes"):
        read_message(b"\x08" + b"\xff" * 11, 0, 12, schema)
