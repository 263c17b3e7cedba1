"""The compiled file readers (``polytok._kernels.wire``) against the pure readers they stand in for.

The kernel reads SentencePiece's repeated ``pieces``, GGUF string arrays and GGUF merge
lines; where it cannot read something exactly as the pure reader does it hands over, so
the pure reader's results *and errors* (class, message, key, offset) must come out of the
compiled path unchanged: on every ``.model`` and GGUF fixture, on hand-packed files of
unusual layouts, and on corrupted files (every truncation, bit flips, huge lengths).
"""

from __future__ import annotations

import math
import random
import struct
from typing import Any

import pytest
from fixtures import GGUF_VOCAB_NAMES, bench_slice, edge_texts, fixture_path, gguf_vocab_path
from formats import gguf_pack as gp
from formats import sentencepiece_pack as sp
from hypothesis import given, settings
from hypothesis import strategies as st

import polytok
from kernels._compiled import compiled
from polytok import kernels
from polytok.errors import FormatError
from polytok.formats.gguf import _merge_list, _merge_pairs, read_gguf_vocab
from polytok.formats.gguf_reader import GGUFStrings, parse_gguf_metadata
from polytok.formats.sentencepiece import read_model_proto

SPM_FILES = [("spm-botchan-bpe-1000", "spm.model"), ("spm-botchan-unigram-1000", "spm.model"),
             ("spm-kyoto-ja-unigram-8000", "spm.model"), ("spm-bpemb-en-100k", "spm.model"),
             ("spm-mistral-v1", "tokenizer.model"), ("spm-mistral-v3", "tokenizer.model"),
             ("marian-nmt", "vocab.joint.spm")]


@pytest.fixture(scope="module")
def wire() -> Any:
    return compiled("wire")


def _floats(values: list[float]) -> list[bytes]:
    return [struct.pack("<d", v) for v in values]  # bit-exact (NaN payloads, -0.0)


def _proto(data: bytes) -> tuple[Any, ...]:
    proto = read_model_proto(data, "x.model")
    return (proto.pieces, _floats(proto.scores), proto.types, proto.trainer_spec, proto.normalizer_spec,
            proto.denormalizer_spec)


def _meta(data: bytes, raw_strings: tuple[str, ...] = ()) -> tuple[Any, ...]:
    meta = parse_gguf_metadata(data, file="x.gguf", raw_strings=raw_strings)
    kv = {k: (v.typecode, v.tobytes()) if hasattr(v, "typecode") else v for k, v in meta.kv.items()}
    kv = {k: list(v) if isinstance(v, GGUFStrings) else v for k, v in kv.items()}
    return kv, meta.types, meta.kv_end, meta.alignment, meta.byte_order


def _meta_raw(data: bytes) -> tuple[Any, ...]:
    """`_meta` with the string arrays kept as bytes (`GGUFStrings`) by the compiled reader."""
    return _meta(data, ("tokenizer.ggml.tokens", "tokenizer.ggml.merges", "nested"))


READS = pytest.mark.parametrize("read", [_meta, _meta_raw], ids=["lists", "raw"])


def _outcome(read: Any, data: bytes) -> tuple[Any, ...]:
    try:
        return ("ok", read(data))
    except FormatError as exc:
        return ("error", type(exc), str(exc), exc.key, exc.offset)


def _both(read: Any, data: bytes) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
    fast = _outcome(read, data)
    with kernels.pure_path():
        pure = _outcome(read, data)
    return fast, pure


def _texts() -> list[str]:
    return edge_texts() + [bench_slice(name, 3000) for name in ("en", "code", "multi")]


def _same_tokenizer(path: Any) -> None:
    fast = polytok.load(path)
    with kernels.pure_path():
        pure = polytok.load(path)
    assert fast.get_vocab() == pure.get_vocab() and fast.facts == pure.facts
    for text in _texts():
        assert fast.encode(text) == pure.encode(text), text[:60]


# -- real files ----------------------------------------------------------------------------


@pytest.mark.parametrize(("name", "filename"), SPM_FILES, ids=[n for n, _ in SPM_FILES])
def test_model_files_read_alike(wire: Any, name: str, filename: str) -> None:
    path = fixture_path(name, filename)
    data = path.read_bytes()
    fast, pure = _both(_proto, data)
    assert fast == pure
    assert fast[0] == "ok" and len(fast[1][0]) > 100
    # the kernel itself reads every piece of a real file (no hand-over to the pure walk)
    pieces: list[str] = []
    at = wire.read_pieces(data, 0, len(data), pieces, [], [])
    assert pieces == fast[1][0] and data[at] != 0x0A
    _same_tokenizer(path)


@pytest.mark.parametrize("name", GGUF_VOCAB_NAMES)
def test_gguf_files_read_alike(wire: Any, name: str) -> None:
    path = gguf_vocab_path(name)
    fast, pure = _both(_meta, path.read_bytes())
    assert fast == pure and fast[0] == "ok"


@pytest.mark.parametrize("name", ["llama-bpe", "llama-spm", "bert-bge", "gemma-4", "qwen2", "phi-3"])
def test_gguf_tokenizers_alike(wire: Any, name: str) -> None:
    _same_tokenizer(gguf_vocab_path(name))


# -- hand-packed SentencePiece layouts -------------------------------------------------------


def _raw_piece(body: bytes) -> bytes:
    return sp.field(1, body)


def _unusual_pieces() -> list[bytes]:
    """Pieces in every layout the wire allows: what the kernel reads and what it hands over."""
    f = sp.field
    return [
        sp.piece("<unk>", 0.0, sp.UNKNOWN), sp.piece("<s>", 0.0, sp.CONTROL), sp.piece("</s>", -0.0, sp.CONTROL),
        _raw_piece(f(1, b"plain") + f(2, -1.5)),                      # no type: NORMAL
        _raw_piece(f(2, -2.0) + f(1, b"swapped")),                     # fields in another order
        _raw_piece(f(1, b"first") + f(1, b"last") + f(2, -3.0)),       # a repeat: the last wins
        _raw_piece(f(1, b"odd") + f(2, -4.0) + f(3, 9)),               # enum out of range: unset
        _raw_piece(f(1, b"odd2") + f(2, -4.0) + f(3, 4) + f(3, 0)),    # out of range after a valid one
        _raw_piece(f(1, b"neg") + f(3, (1 << 64) - 1)),                # int32 -1 as a 10-byte varint
        _raw_piece(f(1, b"big") + f(3, (1 << 32) + 4)),                # low 32 bits: 4
        _raw_piece(f(1, b"x" * 200) + f(2, -5.0)),                     # two-byte lengths
        _raw_piece(b"\x0a\x83\x00abc" + f(2, -6.0)),                   # a non-canonical length varint
        _raw_piece(f(1, "é\U0001f600▁".encode()) + f(2, -7.0)),
        _raw_piece(f(2, -8.0)),                                        # no piece: empty (refused later)
        _raw_piece(f(1, b"unknown") + f(9, 5) + f(2, -9.0)),           # an unknown field: pure walk
        _raw_piece(f(1, b"grp") + b"\x23\x24" + f(2, -9.5)),            # an empty group
        _raw_piece(f(1, b"nan") + b"\x15\x01\x00\xc0\x7f"),            # a NaN with a payload
        b"\x8a\x00" + bytes([len(f(1, b"ncanon"))]) + f(1, b"ncanon"),  # a non-canonical top-level tag
        sp.field(7, b"skipped") + sp.piece("after", -10.0),
        _raw_piece(b""),                                               # an empty message
    ]


def _unusual_model() -> bytes:
    return sp.model(_unusual_pieces(), trainer=sp.field(3, 2) + sp.field(35, 0), normalizer=sp.field(1, b"nmt"))


def test_unusual_layouts_read_alike(wire: Any) -> None:
    data = _unusual_model()
    fast, pure = _both(_proto, data)
    assert fast == pure and fast[0] == "ok"
    pieces, scores, types = fast[1][:3]
    assert pieces[5:10] == ["last", "odd", "odd2", "neg", "big"] and types[5:10] == [1, 1, 4, 1, 4]
    assert pieces[11] == "abc" and pieces[13] == ""
    assert math.isnan(struct.unpack("<d", scores[16])[0])


@pytest.mark.parametrize("body", [
    sp.field(1, b"\xff\xfe"),                    # invalid UTF-8
    sp.field(1, b"\xed\xa0\x80"),                # a UTF-8 surrogate
    b"\x0a\x05ab",                               # a length past the message
    b"\x15\x00\x00",                             # a truncated float
    b"\x18\x80\x80",                             # a truncated varint
    b"\x18" + b"\x80" * 10 + b"\x01",            # a varint of 11 bytes
    b"\x00\x01",                                 # field number 0
    b"\x1a\x01x",                                # the type as length-delimited
    b"\x0d\x00\x00\x00\x00",                     # the piece as 32-bit
    b"\x23\x2c",                                 # a group closed as another field
    b"\x0f",                                     # wire type 7
], ids=repr)
def test_broken_pieces_fail_alike(wire: Any, body: bytes) -> None:
    data = sp.model([sp.piece("<unk>", 0.0, sp.UNKNOWN), sp.piece("a", -1.0), _raw_piece(body), sp.piece("b", -2.0)])
    fast, pure = _both(_proto, data)
    assert fast == pure
    assert fast[0] == "error" and fast[3].startswith("pieces[2]")


def test_piece_lengths_past_the_file(wire: Any) -> None:
    base = sp.piece("<unk>", 0.0, sp.UNKNOWN)
    for tail in (b"\x0a\xff\xff\xff\xff\x0f", b"\x0a" + sp.varint(1 << 62) + b"\x0a", b"\x0a\x80",
                 b"\x0a\x03\x0a\x05ab", b"\x0a" + b"\xff" * 10 + b"\x01"):
        fast, pure = _both(_proto, base + tail)
        assert fast == pure and fast[0] == "error", tail


def test_every_truncation_of_a_model(wire: Any) -> None:
    data = _unusual_model()
    for cut in range(len(data)):
        fast, pure = _both(_proto, data[:cut])
        assert fast == pure, cut


def test_bit_flips_in_a_model(wire: Any) -> None:
    data = bytearray(_unusual_model())
    rng = random.Random(1)
    for _ in range(1500):
        copy = bytearray(data)
        for _ in range(rng.randint(1, 3)):
            at = rng.randrange(len(copy))
            copy[at] ^= 1 << rng.randrange(8)
        fast, pure = _both(_proto, bytes(copy))
        assert fast == pure, bytes(copy).hex()


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(_unusual_pieces()) | st.binary(max_size=12), max_size=12))
def test_random_piece_sequences(parts: list[bytes]) -> None:
    compiled("wire")
    fast, pure = _both(_proto, b"".join(parts))
    assert fast == pure


def test_read_pieces_stays_in_its_bounds(wire: Any) -> None:
    data = sp.piece("a", -1.0) + sp.piece("b", -2.0)
    pieces: list[str] = []
    scores: list[float] = []
    types: list[int] = []
    # an end inside the second piece stops before it; an end past the buffer is the buffer's end
    assert wire.read_pieces(data, 0, len(data) - 1, pieces, scores, types) == len(data) // 2
    assert wire.read_pieces(data, 0, len(data) + 100, pieces, scores, types) == len(data)
    assert wire.read_pieces(data, -5, len(data), pieces, scores, types) == len(data)
    assert pieces == ["a", "a", "b"] and types == [1, 1, 1]
    with pytest.raises(TypeError):
        wire.read_pieces(data, 0, len(data), (), scores, types)


# -- GGUF string arrays and merges -----------------------------------------------------------


def _gguf(order: str = "<", tokens: list[Any] | None = None) -> bytes:
    tokens = tokens if tokens is not None else ["<unk>", "", "a", "é", "\U0001f600", "b c", "x" * 300]
    return gp.pack_gguf([("general.architecture", gp.STRING, "llama"),
                         ("tokenizer.ggml.model", gp.STRING, "gpt2"),
                         ("tokenizer.ggml.tokens", (gp.ARRAY, gp.STRING), tokens),
                         ("tokenizer.ggml.merges", (gp.ARRAY, gp.STRING), ["a b", " x y", "ab"]),
                         ("nested", (gp.ARRAY, gp.ARRAY, gp.STRING), [["p", "q"], []]),
                         ("tokenizer.ggml.scores", (gp.ARRAY, gp.FLOAT32), [0.0, -1.0, 2.5, 0, 0, 0, 0])], order=order)


@pytest.mark.parametrize("order", ["<", ">"])
def test_gguf_strings_read_alike(wire: Any, order: str) -> None:
    data = _gguf(order)
    fast, pure = _both(_meta, data)
    assert fast == pure and fast[0] == "ok"
    assert fast[1][0]["tokenizer.ggml.tokens"][3:5] == ["é", "\U0001f600"]


@READS
@pytest.mark.parametrize("order", ["<", ">"])
def test_every_truncation_of_a_gguf(wire: Any, order: str, read: Any) -> None:
    data = _gguf(order)
    for cut in range(len(data)):
        fast, pure = _both(read, data[:cut])
        assert fast == pure, cut


@READS
def test_bit_flips_in_a_gguf(wire: Any, read: Any) -> None:
    data = _gguf()
    rng = random.Random(2)
    for _ in range(1500):
        copy = bytearray(data)
        for _ in range(rng.randint(1, 3)):
            at = rng.randrange(len(copy))
            copy[at] ^= 1 << rng.randrange(8)
        fast, pure = _both(read, bytes(copy))
        assert fast == pure, bytes(copy).hex()


@READS
@pytest.mark.parametrize("bad", [b"\xff", b"ok\xc3", b"\xed\xb0\x80", b"\xf4\x90\x80\x80", b"\xc0\x80",
                                 b"\xe0\x80\x80", b"\xf0\x80\x80\x80", b"\xf8\x88\x80\x80\x80"], ids=repr)
def test_invalid_utf8_in_a_string_array(wire: Any, bad: bytes, read: Any) -> None:
    fast, pure = _both(read, _gguf(tokens=["a", "b", bad, "c"]))
    assert fast == pure and fast[0] == "error" and fast[3] == "tokenizer.ggml.tokens[2]"


@READS
def test_huge_string_lengths(wire: Any, read: Any) -> None:
    data = _gguf(tokens=["a", "bb", "ccc"])
    at = data.index(b"bb") - 8
    for size in (3, 1 << 31, (1 << 63) - 1, 1 << 63, (1 << 64) - 1):
        copy = data[:at] + struct.pack("<Q", size) + data[at + 8:]
        fast, pure = _both(read, copy)
        assert fast == pure and fast[0] == "error", size


def test_gguf_strings_stays_in_its_bounds(wire: Any) -> None:
    data = gp.pack_string("ab") + gp.pack_string("c")
    assert wire.gguf_strings(data, 0, len(data), 2, False) == (["ab", "c"], len(data))
    assert wire.gguf_strings(data, 0, len(data) - 1, 2, False) is None
    assert wire.gguf_strings(data, 0, len(data) + 50, 3, False) is None
    assert wire.gguf_strings(data, 0, len(data), 1 << 60, False) is None
    assert wire.gguf_strings(data, 0, len(data), -1, False) is None
    assert wire.gguf_strings(data, -1, len(data), 1, False) is None
    assert wire.gguf_strings(data, len(data) + 1, len(data), 0, False) is None
    assert wire.gguf_strings(data, len(data), len(data), 0, False) == ([], len(data))
    big = gp.pack_string("ab", ">") + gp.pack_string("\U0001f600", ">")
    assert wire.gguf_strings(big, 0, len(big), 2, True) == (["ab", "\U0001f600"], len(big))
    assert wire.gguf_strings(big, 0, len(big), 2, False) is None


MERGE_LINES = ["a b", "ab", "", " ", "  ", " a b", "a  b", "a b c", "é ü", "\U0001f600 \U0001f601", "a ", " a",
               "a\u3000b", "x\0 y", "▁t he", "ab cd", "a b"]


def test_merge_pairs_alike(wire: Any) -> None:
    fast = _merge_pairs(MERGE_LINES)
    with kernels.pure_path():
        pure = _merge_pairs(MERGE_LINES)
    assert fast == pure
    assert fast[:6] == [("a", "b"), ("", ""), ("", ""), ("", ""), (" ", ""), (" a", "b")]
    with pytest.raises(TypeError):
        wire.merge_pairs(["a b", 3])
    with pytest.raises(TypeError):
        wire.merge_pairs(("a b",))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.text(alphabet=st.sampled_from("ab \u00e9\U0001f600\u2581\0"), max_size=6), max_size=20))
def test_random_merge_lines(lines: list[str]) -> None:
    fast = compiled("wire").merge_pairs(lines)
    with kernels.pure_path():
        pure = _merge_pairs(lines)
    assert fast == pure


def _raw(lines: list[str] | list[bytes], order: str = "<") -> GGUFStrings:
    return GGUFStrings(b"".join(gp.pack_string(line, order) for line in lines), len(lines), order == ">")


def _merge_list_both(lines: list[str], order: str = "<") -> tuple[Any, list[tuple[str, str]]]:
    fast = _merge_list(_raw(lines, order))
    with kernels.pure_path():
        pure = _merge_list(_raw(lines, order))
    assert type(pure) is list and _merge_list(lines) == pure
    return fast, pure


@pytest.mark.parametrize("order", ["<", ">"])
def test_merge_list_alike(wire: Any, order: str) -> None:
    lines = [line for line in MERGE_LINES if line.find(" ", 1) >= 0] * 2 + ["é ü", "a b", "ab cd", "a bc"]
    fast, pure = _merge_list_both(lines, order)
    assert type(fast) is not list and list(fast) == pure and len(fast) == len(pure)
    assert [fast[i] for i in range(-len(fast), len(fast))] == pure + pure
    assert list(fast[1:3]) == pure[1:3] and fast[-1] == ("a", "bc")
    assert pure[:3] == [("a", "b"), (" ", ""), (" a", "b")] and ("a", "b") not in pure[1:]
    # the parts are shared: one str per distinct text
    assert fast[0][0] is fast[-1][0]
    # a line with no cut: the pure path, whose ("", "") the BPE model then refuses
    assert type(_merge_list(_raw(["a b", "ab", "a b"]))) is list
    raw = _raw(["a b", "\U0001f600 x", "é"])
    assert wire.gguf_merges(raw.data, 3, False) is None
    assert wire.gguf_merges(raw.data, 2, False) is None  # bytes left over
    assert wire.gguf_merges(raw.data[:-1], 3, False) is None
    assert wire.gguf_merges(raw.data, 4, False) is None and wire.gguf_merges(raw.data, -1, False) is None
    assert wire.gguf_merges(raw.data[:-10], 2, False) == (["a", "\U0001f600"], ["b", "x"])
    assert wire.gguf_merges(b"", 0, False) == ([], [])
    # bytes that are not UTF-8 (gguf_string_array_end refuses them first): handed over, never read
    assert wire.gguf_merges(_raw([b"a \xff"]).data, 1, False) is None
    assert wire.gguf_merges(_raw([b"\xff b"]).data, 1, False) is None


@settings(max_examples=300, deadline=None)
@given(st.lists(st.text(alphabet=st.sampled_from("ab \u00e9\U0001f600\u2581\u0120\0"), min_size=0, max_size=5),
                max_size=40), st.booleans())
def test_random_merge_lists(lines: list[str], big: bool) -> None:
    fast, pure = _merge_list_both(lines, ">" if big else "<")
    assert list(fast) == pure
    raw = _raw(lines, ">" if big else "<")
    found = compiled("wire").gguf_merges(raw.data, len(lines), big)
    assert (found is None) == any(line.find(" ", 1) < 0 for line in lines)


@settings(max_examples=500, deadline=None)
@given(st.binary(max_size=12) | st.text(max_size=4).map(lambda t: t.encode("utf-8", "surrogatepass")))
def test_utf8_check_is_pythons(data: bytes) -> None:
    try:
        data.decode()
        valid = True
    except UnicodeDecodeError:
        valid = False
    packed = gp.pack_string(data)
    assert (compiled("wire").gguf_string_array_end(packed, 0, len(packed), 1, False) == len(packed)) == valid


@pytest.mark.parametrize("name", GGUF_VOCAB_NAMES)
def test_gguf_merge_lists_alike(wire: Any, name: str) -> None:
    lines = read_gguf_vocab(gguf_vocab_path(name)).merges
    if lines is None:
        pytest.skip("no merges")
    assert isinstance(lines, GGUFStrings)
    fast = _merge_list(lines)
    with kernels.pure_path():
        pure = _merge_list(lines)
    assert type(fast) is not list and list(fast) == pure


@settings(max_examples=300, deadline=None)
@given(st.lists(st.binary(max_size=6) | st.text(max_size=4).map(str.encode), max_size=8), st.booleans())
def test_random_string_arrays(items: list[bytes], big: bool) -> None:
    compiled("wire")
    order = ">" if big else "<"
    data = gp.pack_gguf([("k", (gp.ARRAY, gp.STRING), items)], order=order)
    fast, pure = _both(_meta, data)
    assert fast == pure


# -- the load checks that walk the non-NORMAL pieces alone -----------------------------------


@settings(max_examples=400, deadline=None)
@given(st.lists(st.tuples(st.text(alphabet=st.sampled_from("a\u2581\0b"), min_size=1, max_size=5),
                          st.sampled_from([sp.NORMAL, sp.NORMAL, sp.CONTROL, sp.UNKNOWN, sp.BYTE, sp.USER_DEFINED,
                                           sp.UNUSED])), max_size=12))
def test_space_run_check_equals_the_regex(entries: list[tuple[str, int]]) -> None:
    import regex

    from polytok.formats._sentencepiece_build import _joins_space_to_text, _odd_ids
    from polytok.formats.sentencepiece import ModelProto

    proto = ModelProto("x.model")
    proto.pieces, proto.types = [p for p, _ in entries], [t for _, t in entries]
    usable = "\0".join(p for p, t in entries if t not in (sp.CONTROL, sp.UNKNOWN, sp.BYTE))
    want = regex.search("[^\0\u2581]\u2581", usable) is not None
    assert _joins_space_to_text(proto, _odd_ids(proto.types)) == want


def test_space_run_check_long_runs() -> None:
    from polytok.formats._sentencepiece_build import _joins_space_to_text, _odd_ids
    from polytok.formats.sentencepiece import ModelProto

    for pieces, want in ((["\u2581" * 100, "a"], False), (["\u2581" * 100 + "a\u2581"], True),
                         (["a" + "\u2581" * 70], True), (["\u2581" * 65, "\u2581a"], False)):
        proto = ModelProto("x.model")
        proto.pieces, proto.types = pieces, [sp.NORMAL] * len(pieces)
        assert _joins_space_to_text(proto, _odd_ids(proto.types)) is want


# -- tokenizer.json's Unigram scores as serde_json reads them ------------------------------


def _serde_alike(wire: Any, values: list[Any]) -> None:
    from polytok.models.unigram import serde_f64

    got = wire.serde_f64s(values)
    assert got is not None
    assert _floats(got) == _floats([serde_f64(v) for v in values])


def _unigram_scores() -> list[tuple[str, list[Any]]]:
    import json

    from fixtures import ALL_HF_JSON

    found = []
    for fixture in ALL_HF_JSON:
        model = json.loads(fixture_path(fixture.name, fixture.files[0]).read_text(encoding="utf-8")).get("model")
        if isinstance(model, dict) and model.get("type") == "Unigram":
            found.append((fixture.name, [score for _, score in model["vocab"]]))
    return found


def test_serde_scores_of_every_fixture(wire: Any) -> None:
    scores = _unigram_scores()
    assert {name for name, _ in scores} >= {"albert-base-v2-tf5"}
    for _, values in scores:
        _serde_alike(wire, values)
        _serde_alike(wire, [-v for v in values])


def test_serde_edges(wire: Any) -> None:
    values: list[Any] = [0.0, -0.0, 5e-324, 2.2250738585072014e-308, 2.225073858507201e-308, 1.7976931348623157e308,
                         1e-5, 9.999999999999999e-06, 1e-4, 1e15, 1e16, 1e17, 2.0**52, 2.0**52 - 0.5, 2.0**53,
                         8023570816025716.0, 9999999999999998.0, 0.1, 0.5, 123.0, 3, -7, 0, 10**300, -(2**80)]
    for k in range(-1074, 1024):
        p = 2.0**k
        values += [p, math.nextafter(p, 0.0), math.nextafter(p, math.inf)]
    for k in range(-323, 309):
        t = float(f"1e{k}")
        values += [t, math.nextafter(t, 0.0), math.nextafter(t, math.inf)]
    _serde_alike(wire, values + [-v for v in values])


def test_serde_random_bits(wire: Any) -> None:
    rng = random.Random(11)
    values = [struct.unpack("<d", struct.pack("<Q", rng.getrandbits(64)))[0] for _ in range(200_000)]
    values += [float(f"{rng.uniform(-40, 0):.{rng.randint(1, 17)}g}") for _ in range(100_000)]
    values += [struct.unpack("<f", struct.pack("<f", -rng.expovariate(0.1)))[0] for _ in range(100_000)]
    _serde_alike(wire, [v for v in values if math.isfinite(v)])


@settings(max_examples=500, deadline=None)
@given(st.lists(st.floats(allow_nan=False, allow_infinity=False) | st.integers(-(2**70), 2**70)
                | st.floats(min_value=1e-6, max_value=2.0**53, allow_subnormal=False), max_size=20))
def test_serde_random_numbers(values: list[Any]) -> None:
    _serde_alike(compiled("wire"), values)


def test_serde_hands_back_what_it_does_not_read(wire: Any) -> None:
    for values in ([1.0, math.inf], [math.nan], [10**400], [True], [1.0, "x"], (1.0,)):
        assert wire.serde_f64s(values) is None
    assert wire.serde_f64s([]) == []


def _unigram_config(raw: Any) -> tuple[Any, ...]:
    """A Unigram model read from a tokenizer.json ``model`` whose ``vocab`` is `raw`: its pieces and
    scores (bit-exact), or the error."""
    from polytok.models.unigram import Unigram

    def read(data: Any) -> Any:
        model = Unigram.from_config({"type": "Unigram", "vocab": data}, "model")
        return model.get_vocab(), [model.id_to_token(i) for i in range(model.vocab_size())], _floats(model._scores)

    return _outcome(read, raw)


def _unigram_both(raw: Any) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
    fast = _unigram_config(raw)
    with kernels.pure_path():
        pure = _unigram_config(raw)
    return fast, pure


def test_unigram_vocab_of_every_fixture(wire: Any) -> None:
    import json

    from fixtures import ALL_HF_JSON

    seen = 0
    for fixture in ALL_HF_JSON:
        model = json.loads(fixture_path(fixture.name, fixture.files[0]).read_text(encoding="utf-8")).get("model")
        if isinstance(model, dict) and model.get("type") == "Unigram":
            raw = model["vocab"]
            read = wire.unigram_vocab(raw)  # the kernel reads every real file itself
            assert read is not None
            assert read[0] == [piece for piece, _ in raw]
            assert _floats(read[1]) == _floats(wire.serde_f64s([score for _, score in raw]))
            fast, pure = _unigram_both(raw)
            assert fast == pure and fast[0] == "ok"
            seen += 1
    assert seen


ODD_VOCABS = [
    [], [["a", 0]], [["a", -1.5], ["a", -0.5], ["b", 2]],  # a repeated piece keeps its last id
    [["a", 0.1], ["b", 1e-300], ["c", -0.0], ["d", 2**60 + 1], ["e", 1.7976931348623157e308]],
    [["a", 1e308], ["b", 1e308]],  # each finite, their sum not: read
    [["a", 0.5], ["b", math.inf]], [["a", math.nan]], [["a", -math.inf]], [["a", 10**400]],
    [["a", True]], [["a", "1"]], [["a", None]], [[1, 0.5]], [["a"]], [["a", 1.0, 2]], [("a", 1.0)],
    [["a", 1.0], "b"], [["a", 1.0], None], [["a", 1.0], ["b", 1.0], ["c"]],
]


@pytest.mark.parametrize("raw", ODD_VOCABS, ids=range(len(ODD_VOCABS)))
def test_unigram_vocab_answers_as_the_pure_checks(raw: Any) -> None:
    fast, pure = _unigram_both(raw)
    assert fast == pure


def test_unigram_vocab_hands_back_what_it_does_not_read(wire: Any) -> None:
    for raw in ([["a", math.inf]], [["a", math.nan]], [["a", 10**400]], [["a", True]], [[1, 0.5]], [["a"]],
                [("a", 1.0)], [["a", 1.0], None], ((("a", 1.0),)), [["a", 1.0, 2]]):
        assert wire.unigram_vocab(raw) is None, raw
    assert wire.unigram_vocab([]) == ([], [])
    assert wire.unigram_vocab([["a", 2], ["b", -0.25]]) == (["a", "b"], [2.0, -0.25])


def _scan_last(pieces: list[Any], token: Any) -> int:
    return max((i for i, piece in enumerate(pieces) if piece == token), default=-1)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(["", "a", "ab", "é", "aé", "日", "a日", "😀", "😀a", "\x00", "\ud800"]), max_size=12),
       st.sampled_from(["", "a", "ab", "é", "aé", "日", "a日", "😀", "😀a", "\x00", "\ud800", "b"]))
def test_last_index_answers_as_a_scan(pieces: list[str], token: str) -> None:
    wire = compiled("wire")
    assert wire.last_index(pieces, token) == _scan_last(pieces, token)
    copies = [(piece + "x")[:-1] for piece in pieces]  # equal strings, not the same objects
    assert wire.last_index(copies, (token + "x")[:-1]) == _scan_last(pieces, token)


def test_last_index_hands_back_what_it_does_not_read(wire: Any) -> None:
    assert wire.last_index(["a", 1], "b") is None and wire.last_index(("a",), "a") is None
    assert wire.last_index(["a"], 5) is None and wire.last_index([], "a") == -1
