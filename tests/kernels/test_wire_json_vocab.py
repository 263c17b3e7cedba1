"""``wire.json_unigram_vocab``: a tokenizer.json's Unigram vocab read from the file's bytes.

It stands in for ``json.loads`` of the vocab followed by ``wire.unigram_vocab`` (pieces, and
each score as `serde_f64` reads the float json makes), and hands back (None) whatever it does
not read exactly so. Expected values come from json.loads and the pure `serde_f64`; loads
through `polytok.formats.hf_json` are compared with the pure path's, results and errors
(message, key, offset) alike, on real files, hostile texts, truncations and byte flips.
"""

from __future__ import annotations

import json
import math
import random
import struct
from json.decoder import scanstring
from pathlib import Path
from typing import Any

import pytest
from fixtures import ALL_HF_JSON, fixture_path
from hypothesis import given, settings
from hypothesis import strategies as st

from kernels._compiled import compiled
from polytok import kernels
from polytok.errors import EncodeError, FormatError
from polytok.formats.hf_json import read_tokenizer_json
from polytok.models.unigram import serde_f64


@pytest.fixture(scope="module")
def wire() -> Any:
    return compiled("wire")


def _floats(values: list[float]) -> list[bytes]:
    return [struct.pack("<d", v) for v in values]  # bit-exact (-0.0)


def _document(entries: str, before: str = '"type": "Unigram", ', after: str = "") -> bytes:
    return ('{"version": "1.0", "model": {' + before + '"vocab": [' + entries + "]" + after + "}}").encode()


def _expected(raw: bytes) -> tuple[list[str], list[bytes]]:
    """json.loads of the whole text, then the pure reading of each score."""
    vocab = json.loads(raw.decode())["model"]["vocab"]
    return [piece for piece, _ in vocab], _floats([serde_f64(score) for _, score in vocab])


def _read(wire: Any, raw: bytes) -> tuple[list[str], list[bytes]] | None:
    found = wire.json_unigram_vocab(raw, scanstring)
    if found is None:
        return None
    start, end, pieces, scores = found
    rest = json.loads((raw[:start] + b"[]" + raw[end:]).decode())
    assert rest == {**json.loads(raw.decode()), "model": {**json.loads(raw.decode())["model"], "vocab": []}}
    assert json.loads(raw[start:end].decode()) == json.loads(raw.decode())["model"]["vocab"]
    return pieces, _floats(scores)


def test_every_fixture(wire: Any) -> None:
    seen = 0
    for fixture in ALL_HF_JSON:
        raw = fixture_path(fixture.name, fixture.files[0]).read_bytes()
        model = json.loads(raw.decode()).get("model")
        if isinstance(model, dict) and model.get("type") == "Unigram":
            assert _read(wire, raw) == _expected(raw), fixture.name
            seen += 1
    assert seen


def _scores_alike(wire: Any, texts: list[str]) -> None:
    raw = _document(", ".join(f'["p", {text}]' for text in texts))
    got = _read(wire, raw)
    assert got is not None
    want = _expected(raw)
    for text, g, w in zip(texts, got[1], want[1]):
        assert g == w, (text, struct.unpack("<d", g), struct.unpack("<d", w))


def test_score_texts_of_every_shape(wire: Any) -> None:
    texts = ["0", "-0", "0.0", "-0.0", "1", "-1", "123456789012345678", "0.5", "-0.25", "1e5", "1E-5", "1.5e+3",
             "-2.5E-300", "0.000123", "-0.0001000", "10.0", "-10.0", "1000000.0", "123.4560", "0.1", "0.10",
             "9007199254740993.0", "0.30000000000000004", "0.3000000000000000444", "1.7976931348623157e308",
             "5e-324", "2.2250738585072014e-308", "1e-5", "0.00001", "0.000009999999999999999",
             "-7.1178975105285645", "-7.117897510528565", "-7.11789751052856450", "-7.1178975105285644",
             "12345678901234567890.5", "0.0000000000000000000001", "99999999999999999999.0"]
    _scores_alike(wire, texts)


def test_score_texts_random(wire: Any) -> None:
    rng = random.Random(5)
    texts = []
    for _ in range(60_000):
        value = -rng.expovariate(0.1) if rng.random() < 0.7 else rng.uniform(-1e6, 1e6)
        if rng.random() < 0.3:
            value = struct.unpack("<f", struct.pack("<f", value))[0]  # float32 scores, as in real files
        text = repr(value)
        shape = rng.randrange(6)
        if shape == 1:  # more digits than the shortest repr (an exotic writer)
            text = f"{value:.{rng.randint(17, 21)}f}"
        elif shape == 2:  # fewer: another double
            text = f"{value:.{rng.randint(1, 16)}g}"
        elif shape == 3:  # trailing zeros
            text = text + "0" * rng.randint(1, 3) if "e" not in text else text
        elif shape == 4:  # a neighbour's shortest repr
            text = repr(math.nextafter(value, rng.choice((0.0, math.inf))))
        elif shape == 5:
            text = f"{value:.{rng.randint(1, 17)}e}"
        if "inf" not in text and "nan" not in text:
            texts.append(text)
    bits = [struct.unpack("<d", struct.pack("<Q", rng.getrandbits(64)))[0] for _ in range(20_000)]
    texts += [repr(v) for v in bits if math.isfinite(v)]
    _scores_alike(wire, texts)


def _decimal(digits: int, places: int, negative: bool) -> str:
    text = str(digits).rjust(places + 1, "0")
    return ("-" if negative else "") + (text[:-places] + "." + text[-places:] if places else text)


def test_score_texts_that_read_back_but_are_not_the_repr(wire: Any) -> None:
    """17 digits one unit off the repr's last digit that still read as the same double: the repr
    (the nearest decimal) decides serde_json's reading, not the text."""
    rng = random.Random(8)
    texts = []
    while len(texts) < 3000:
        value = -rng.uniform(1e-4, 40.0)
        text = repr(value)
        digits = text.lstrip("-").replace(".", "").lstrip("0")
        if len(digits) != 17:
            continue
        for step in (-1, 1):
            last = int(text[-1]) + step
            if 0 <= last <= 9 and last != 0 and float(text[:-1] + str(last)) == value:
                texts.append(text[:-1] + str(last))
    _scores_alike(wire, texts)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.floats(allow_nan=False, allow_infinity=False).map(repr)
                | st.integers(-(10**18) + 1, 10**18 - 1).map(str)
                | st.builds(_decimal, st.integers(0, 10**20), st.integers(1, 25), st.booleans()),
                min_size=1, max_size=10))
def test_score_texts_hypothesis(texts: list[str]) -> None:
    _scores_alike(compiled("wire"), [t for t in texts if "inf" not in t and "nan" not in t])


PIECES = ['"a"', '"\\""', '"\\\\"', '"\\/"', '"\\b\\f\\n\\r\\t"', '"\\u00e9"', '"\\ud83d\\ude00"', '"\\ud800"',
          '"\\udc00x"', '"é"', '"日本"', '"😀"', '""', '"\\u0000"', '" "', '"\u2581the"']


def test_pieces_as_json_reads_them(wire: Any) -> None:
    raw = _document(", ".join(f"[{piece}, -1.5]" for piece in PIECES))
    assert _read(wire, raw) == _expected(raw)


@settings(max_examples=400, deadline=None)
@given(st.lists(st.text(st.characters(blacklist_categories=("Cs",)), max_size=8), min_size=1, max_size=8))
def test_pieces_of_any_characters(pieces: list[str]) -> None:
    raw = _document(", ".join(f"[{json.dumps(piece, ensure_ascii=False)}, -2.5]" for piece in pieces))
    assert _read(compiled("wire"), raw) == _expected(raw)


@settings(max_examples=600, deadline=None)
@given(st.lists(st.binary(max_size=6).filter(lambda b: not set(b) & set(b'"\\' + bytes(range(32)))), min_size=1,
                max_size=4))
def test_pieces_of_any_bytes(pieces: list[bytes]) -> None:
    """Bytes Python's UTF-8 decoder refuses (overlong forms, surrogates, past U+10FFFF, cut short)
    are handed back; the others read as it reads them."""
    raw = _document(", ".join(f'["{i}", 1.0]' for i in range(len(pieces))))
    for i, piece in enumerate(pieces):
        raw = raw.replace(f'["{i}"'.encode(), b'["' + piece + b'"', 1)
    try:
        raw.decode()
    except UnicodeDecodeError:
        assert compiled("wire").json_unigram_vocab(raw, scanstring) is None
    else:
        assert _read(compiled("wire"), raw) == _expected(raw)


def test_pieces_at_the_edges_of_utf8(wire: Any) -> None:
    edges = [b"\x7f", b"\xc2\x80", b"\xdf\xbf", b"\xe0\xa0\x80", b"\xed\x9f\xbf", b"\xee\x80\x80",
             b"\xef\xbf\xbf", b"\xf0\x90\x80\x80", b"\xf4\x8f\xbf\xbf", b"a\xc3\xa9\xe2\x96\x81\xf0\x9f\x98\x80"]
    refused = [b"\xc0\x80", b"\xc1\xbf", b"\xe0\x9f\xbf", b"\xed\xa0\x80", b"\xf0\x8f\xbf\xbf", b"\xf4\x90\x80\x80",
               b"\xf5\x80\x80\x80", b"\xc3", b"\xe2\x96", b"\x80", b"\xc3\x28", b"\xff"]
    for piece in edges + refused:
        raw = _document('["Z", 1.0]').replace(b"Z", piece)
        if piece in edges:
            assert _read(wire, raw) == _expected(raw), piece
        else:
            assert wire.json_unigram_vocab(raw, scanstring) is None, piece


@pytest.mark.parametrize("raw", [
    _document('["a", 1.0]', before=""),  # no type: the whole text is read (the model guesses its type)
    _document('[" \\u0041", -1], ["b\\t", 2.5]'),
    _document("", after=', "unk_id": 0, "byte_fallback": false'),
    b' \n\t{"model" : {"vocab" : [ [ "a" , -1.0 ] , [ "b" , 0 ] ] , "type" : "Unigram" } } \r\n',
    b'{"pre": {"model": {"vocab": [["x", 1.0]]}}, "model": {"type": "Unigram", "vocab": [["a", 1.0]]}}',
    b'{"model": {"type": "Unigram", "x": ["]", "}", "\\"", [{"vocab": 1}]], "vocab": [["a", 1.0]]}}',
])
def test_documents_it_reads(wire: Any, raw: bytes) -> None:
    assert _read(wire, raw) == _expected(raw)


@pytest.mark.parametrize("raw", [
    b"", b"[]", b'"model"', b"{}", b'{"model": []}', b'{"model": {}}', b'{"model": {"vocab": {}}}',
    b'{"model": {"vocab": [["a", 1.0]]}, "model": {"vocab": []}}',  # repeated: json.loads keeps the last
    b'{"model": {"vocab": [["a", 1.0]], "vocab": [["b", 1.0]]}}',
    b'{"mod\\u0065l": {"vocab": [["a", 1.0]]}}', b'{"model": {"voc\\u0061b": [["a", 1.0]]}}',
    b'{"model": {"vocab": [["a", 1.0]]}} x', b'\xef\xbb\xbf{"model": {"vocab": [["a", 1.0]]}}',
    _document('["a", NaN]'), _document('["a", Infinity]'), _document('["a", -Infinity]'), _document('["a", 1e400]'),
    _document('["a", 01]'), _document('["a", 1.]'), _document('["a", .5]'), _document('["a", +1]'),
    _document('["a", 1e]'), _document('["a", "1"]'), _document('["a", null]'), _document('["a", true]'),
    _document('["a", 1234567890123456789]'), _document('[1, 1.0]'), _document('["a"]'), _document('["a", 1, 2]'),
    _document('["a", 1.0],'), _document('["a", 1.0] ["b", 1.0]'), _document('"a"'), _document('["a\x01", 1.0]'),
    _document('["\\x", 1.0]'), _document('["\\u12", 1.0]'), _document('["Z", 1.0]').replace(b"Z", b"\xff"),
    _document('["Z", 1.0]').replace(b"Z", b"\xed\xa0\x80"),  # a surrogate's bytes: not UTF-8
    _document('["a", 1.0' + "0" * 80 + "]"), b'{"model": {"vocab": [["a", 1.0]', b'{"model": {"vocab": [["a',
])
def test_documents_it_hands_back(wire: Any, raw: bytes) -> None:
    assert wire.json_unigram_vocab(raw, scanstring) is None


def test_only_bytes(wire: Any) -> None:
    with pytest.raises(TypeError):
        wire.json_unigram_vocab("{}", scanstring)


# -- loads through the reader: the same model or the same error as the pure path ---------------


def _load(path: Path) -> tuple[Any, ...]:
    try:
        tok = read_tokenizer_json(path)
    except FormatError as exc:
        return ("error", type(exc), str(exc), exc.key, exc.offset)
    model = tok.model
    size = model.vocab_size()
    try:
        ids: Any = tok.encode("a b\u00e9 xyz the 日本")
    except EncodeError as exc:
        ids = str(exc)
    return ("ok", type(model).__name__, [model.id_to_token(i) for i in range(size)],
            _floats(list(getattr(model, "_scores", []))), ids)


def _both(path: Path, raw: bytes) -> None:
    path.write_bytes(raw)
    fast = _load(path)
    with kernels.pure_path():
        pure = _load(path)
    assert fast == pure


def _small_albert() -> bytes:
    data = json.loads(fixture_path("albert-base-v2-tf5", "tokenizer.json").read_text(encoding="utf-8"))
    data["model"]["vocab"] = data["model"]["vocab"][:300] + [["\u2581xyz", -3.25], ["\\\"é", -1e-5]]
    return json.dumps(data, indent=1, ensure_ascii=False).encode()


def test_loads_as_the_pure_path(tmp_path: Path) -> None:
    raw = _small_albert()
    path = tmp_path / "tokenizer.json"
    _both(path, raw)
    for text in (_document('["a", 1.0], ["<unk>", 0]', after=', "unk_id": 1'),
                 _document('["a", 1.0]', after=', "unk_id": 5'), _document('["a", 1.0]', after=', "unk_id": -1'),
                 _document('["a", 1.0]', before='"type": "BPE", '), _document('["a", 1.0]', before=""),
                 b'{"model": {"type": "Unigram", "vocab": [["a", 1.0]]}, "version": "2.0"}',
                 b'{"model": {"type": "Unigram", "vocab": [["a", 1.0]]}, "normalizer": {"type": "Nope"}}',
                 b'{"model": {"type": "Unigram", "vocab": [["a", 1.0]]}, "x": NaN}',
                 b'{"model": {"type": "Unigram", "vocab": [["a", 1.0]]}, "x": [1,]}',
                 b'{"model": {"type": "Unigram", "vocab": [["a", 1.0]]}, "x": "\xff"}',
                 b'{"model": {"type": "Unigram", "vocab": [["a", 1.0]]}, "x": ' + b"[" * 3000 + b"]" * 3000 + b"}"):
        _both(path, text)


def test_truncations_and_flips_load_as_the_pure_path(tmp_path: Path) -> None:
    raw = _small_albert()
    path = tmp_path / "tokenizer.json"
    start = raw.index(b'"vocab"')
    rng = random.Random(3)
    cuts = sorted({rng.randrange(len(raw)) for _ in range(40)} | set(range(start, start + 60)))
    for cut in cuts:
        _both(path, raw[:cut])
    for _ in range(120):
        flipped = bytearray(raw)
        at = rng.randrange(start - 200, min(len(raw), start + 3000))
        flipped[at] = rng.choice(b'[]{},:"\\0123456789.eE-+ \x00\xff\x80ax')
        _both(path, bytes(flipped))
