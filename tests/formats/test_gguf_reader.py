"""GGUF metadata reader: hand-packed files (valid and hostile) and llama.cpp's 19 vocab files.

Oracles: gguf-py 0.19.0 (GGUFReader) live on the small packed files and, in the
slow test, on the real files; for the default run its reading of the real files
is frozen in gguf_expected.json by gen_gguf_expected.py.  Rejections follow
llama.cpp ggml/src/gguf.cpp (gguf_init_from_reader).
"""

from __future__ import annotations

import hashlib
import json
import math
import struct
import time
from array import array
from pathlib import Path
from typing import Any

import fixtures
import pytest

from formats.gguf_pack import (
    ARRAY,
    BOOL,
    FLOAT32,
    FLOAT64,
    INT8,
    INT16,
    INT32,
    INT64,
    STRING,
    UINT8,
    UINT16,
    UINT32,
    UINT64,
    pack_gguf,
    pack_header,
    pack_kv,
    pack_string,
)  # fmt: skip
from polytok.errors import FormatError
from polytok.formats.gguf_reader import (
    GGUFMetadata,
    ValueType,
    parse_gguf_metadata,
    read_gguf_metadata,
)

EXPECTED = json.loads((Path(__file__).with_name("gguf_expected.json")).read_text(encoding="utf-8"))
EXPECTED_BY_NAME = {row["file"]: row for row in EXPECTED["files"]}

SCALARS = [
    ("u8", UINT8, 255), ("i8", INT8, -128), ("u16", UINT16, 65535), ("i16", INT16, -32768),
    ("u32", UINT32, 2**32 - 1), ("i32", INT32, -(2**31)), ("f32", FLOAT32, 1.5), ("bool", BOOL, True),
    ("str", STRING, "héllo ▁ 🦙"), ("u64", UINT64, 2**64 - 1), ("i64", INT64, -(2**63)), ("f64", FLOAT64, -0.1),
    ("empty", STRING, ""),
]  # fmt: skip
ARRAYS = [
    ("a.u8", (ARRAY, UINT8), [0, 7, 255]), ("a.i8", (ARRAY, INT8), [-1, 1]), ("a.u16", (ARRAY, UINT16), [1, 2]),
    ("a.i16", (ARRAY, INT16), [-5]), ("a.u32", (ARRAY, UINT32), [4, 2**32 - 1]), ("a.i32", (ARRAY, INT32), [-3, 3]),
    ("a.f32", (ARRAY, FLOAT32), [0.25, -2.0]), ("a.bool", (ARRAY, BOOL), [True, False]),
    ("a.str", (ARRAY, STRING), ["a", "", "ü", "<0x0A>"]), ("a.u64", (ARRAY, UINT64), [2**64 - 1]),
    ("a.i64", (ARRAY, INT64), [-7]), ("a.f64", (ARRAY, FLOAT64), [math.pi]), ("a.none", (ARRAY, STRING), []),
]  # fmt: skip
NESTED = [
    ("n.u8", (ARRAY, ARRAY, UINT8), [[1, 2], [], [3]]),
    ("n.str", (ARRAY, ARRAY, ARRAY, STRING), [[["x", "yz"]], [[]]]),
    ("n.none", (ARRAY, ARRAY, INT32), []),
]
ALL_KVS = SCALARS + ARRAYS + NESTED


def _types(vtype: Any) -> tuple[ValueType, ...]:
    return tuple(ValueType(t) for t in (vtype if isinstance(vtype, tuple) else (vtype,)))


def _plain(value: Any) -> Any:
    """A kv dict or value with its compact numeric arrays (array.array) as lists, to compare with Python lists."""
    if isinstance(value, dict):
        return {key: _plain(v) for key, v in value.items()}
    if isinstance(value, (list, array)):
        return [_plain(v) for v in value]
    return value


def _failure(data: bytes) -> FormatError:
    with pytest.raises(FormatError) as info:
        parse_gguf_metadata(data, file="t.gguf")
    return info.value


# --- valid files ---------------------------------------------------------------------


@pytest.mark.parametrize("version", [2, 3])
@pytest.mark.parametrize("order", ["<", ">"])
def test_every_value_type_round_trips(version: int, order: str) -> None:
    data = pack_gguf(ALL_KVS, version=version, order=order, tensor_count=5)
    meta = parse_gguf_metadata(data + b"\xee" * 40, file="t.gguf")
    assert (meta.version, meta.tensor_count, meta.alignment) == (version, 5, 32)
    assert meta.byte_order == ("little" if order == "<" else "big")
    assert list(meta.kv) == [key for key, _, _ in ALL_KVS]
    assert _plain(meta.kv) == {key: value for key, _, value in ALL_KVS}
    types = {key: _types(vtype) for key, vtype, _ in ALL_KVS}
    # An empty array of arrays has no element to declare the inner type, as in gguf-py.
    types["n.none"] = (ValueType.ARRAY, ValueType.ARRAY)
    assert meta.types == types
    assert meta.kv_end == len(data)


def test_against_gguf_py_on_a_packed_file(tmp_path: Path) -> None:
    gguf = pytest.importorskip("gguf")
    path = tmp_path / "t.gguf"
    path.write_bytes(pack_gguf(SCALARS + ARRAYS + [("general.alignment", UINT32, 64)]))
    meta = read_gguf_metadata(path)
    reader = gguf.GGUFReader(path)
    fields = {f.name: f for f in reader.fields.values() if not f.name.startswith("GGUF.")}
    assert list(fields) == list(meta.kv)
    for key, field in fields.items():
        theirs = field.contents()
        theirs = [t.item() if hasattr(t, "item") else t for t in theirs] if isinstance(theirs, list) else theirs
        assert _plain(meta.kv[key]) == (theirs.item() if hasattr(theirs, "item") else theirs), key
        theirs_types = tuple(ValueType(int(t)) for t in field.types)
        # gguf-py keeps no element type for an empty array; the file declares one, and polytok keeps it.
        assert meta.types[key][: len(theirs_types)] == theirs_types, key
        assert len(meta.types[key]) == len(theirs_types) + (_plain(meta.kv[key]) == []), key
    assert meta.alignment == reader.alignment == 64


def test_bool_is_any_non_zero_byte() -> None:
    data = pack_header(2) + pack_string("b") + struct.pack("<IB", BOOL, 2)
    data += pack_string("a") + struct.pack("<IIQ", ARRAY, BOOL, 3) + bytes([0, 1, 255])
    assert _plain(parse_gguf_metadata(data).kv) == {"b": True, "a": [False, True, True]}


def test_empty_file_has_no_kv_and_ends_after_header() -> None:
    meta = parse_gguf_metadata(pack_header(0))
    assert (meta.kv, meta.kv_end) == ({}, 24)


def test_reads_from_a_path_through_a_map(tmp_path: Path) -> None:
    path = tmp_path / "m.gguf"
    path.write_bytes(pack_gguf(ALL_KVS) + b"\0" * 4096)
    meta = read_gguf_metadata(path)
    assert isinstance(meta, GGUFMetadata) and meta.file == str(path)
    assert _plain(meta.kv) == {key: value for key, _, value in ALL_KVS}


# --- hostile files -------------------------------------------------------------------

SMALL = pack_gguf([("general.name", STRING, "x"), ("t", (ARRAY, STRING), ["ab", "c"]), ("n", UINT32, 3)])


@pytest.mark.parametrize("cut", range(len(SMALL)))
def test_truncated_at_every_byte(cut: int) -> None:
    err = _failure(SMALL[:cut])
    assert err.file == "t.gguf" and err.key and err.offset is not None
    assert 0 <= err.offset <= cut
    assert "truncated" in err.reason or "cannot fit" in err.reason or "magic" in err.reason


def test_truncation_names_the_key_being_read() -> None:
    assert (_failure(SMALL[:30]).key, _failure(SMALL[:30]).offset) == ("header", 16)
    err = _failure(pack_header(1) + pack_string("k" * 40)[:30])
    assert (err.key, err.offset) == ("kv[0]", 32) and "40" in str(err)
    cut_in_strings = SMALL.index(b"c")
    err = _failure(SMALL[:cut_in_strings])
    assert err.key == "t[1]" and err.offset == cut_in_strings
    err = _failure(SMALL[: cut_in_strings - 1])  # inside t[1]'s length
    assert err.key == "t[1]" and err.offset == cut_in_strings - 8
    err = _failure(SMALL[: cut_in_strings - 3])  # too short for two strings at all
    assert err.key == "t" and "cannot fit" in str(err)
    assert _failure(SMALL[:-2]).key == "n"


def test_wrong_magic() -> None:
    err = _failure(b"GGML" + SMALL[4:])
    assert (err.key, err.offset) == ("header", 0) and "magic" in str(err)


@pytest.mark.parametrize(("version", "words"), [(1, "v1 is obsolete"), (4, "version 4"), (0, "version 0")])
def test_unsupported_versions(version: int, words: str) -> None:
    err = _failure(pack_gguf([("a", UINT8, 1)], version=version))
    assert (err.key, err.offset) == ("header", 4) and words in str(err)


def test_big_endian_version_one_is_rejected_as_version_one() -> None:
    assert "v1 is obsolete" in str(_failure(pack_gguf([], version=1, order=">")))


def test_string_length_past_the_end() -> None:
    data = pack_header(1) + pack_string("k") + struct.pack("<IQ", STRING, 2**40) + b"abc"
    err = _failure(data)
    assert (err.key, err.offset) == ("k", 24 + 9 + 4 + 8)


@pytest.mark.parametrize("count", [2**63, 2**64 - 1, 2**40])
@pytest.mark.parametrize("item", [STRING, UINT8, FLOAT64, ARRAY])
def test_huge_array_count_fails_fast(count: int, item: int) -> None:
    data = pack_header(1) + pack_string("big") + struct.pack("<IIQ", ARRAY, item, count) + b"\0" * 64
    start = time.perf_counter()
    err = _failure(data)
    assert time.perf_counter() - start < 0.05
    assert (err.key, err.offset) == ("big", 24 + 11 + 8) and "cannot fit" in str(err)


def test_huge_kv_and_tensor_counts() -> None:
    assert "cannot fit" in str(_failure(pack_header(2**40) + b"\0" * 100))
    err = _failure(pack_header(0, tensor_count=2**63))
    assert (err.key, err.offset) == ("header", 8) and "negative" in str(err)


@pytest.mark.parametrize("where", ["value", "element"])
def test_unknown_value_type(where: str) -> None:
    body = struct.pack("<I", 13) if where == "value" else struct.pack("<IIQ", ARRAY, 99, 1)
    err = _failure(pack_header(1) + pack_string("odd") + body + b"\0" * 16)
    assert (err.key, err.offset) == ("odd", 24 + 11 + (0 if where == "value" else 4))
    assert "unknown GGUF value type" in str(err)


def test_invalid_utf8_in_a_key_a_value_and_an_array_element(tmp_path: Path) -> None:
    err = _failure(pack_header(1) + pack_string(b"k\xff") + struct.pack("<IB", UINT8, 1))
    assert (err.key, err.offset) == ("kv[0]", 24 + 8 + 1)
    err = _failure(pack_header(1) + pack_kv("s", STRING, b"ok\xc3("))
    assert (err.key, err.offset) == ("s", 24 + 9 + 4 + 8 + 2)
    data = pack_gguf([("x", UINT8, 0), ("toks", (ARRAY, STRING), ["a", b"ok\xed\xa0\x80", "b"])])
    err = _failure(data)
    assert err.key == "toks[1]" and data[err.offset : err.offset + 3] == b"\xed\xa0\x80"
    assert "invalid UTF-8" in str(err) and "toks[1]" in str(err) and f"byte offset {err.offset}" in str(err)
    path = tmp_path / "bad.gguf"
    path.write_bytes(data)
    with pytest.raises(FormatError, match=r"toks\[1\]"):
        read_gguf_metadata(path)


def test_duplicate_and_empty_keys_are_rejected_as_llama_cpp_does() -> None:
    # gguf.cpp gguf_init_from_reader: "duplicate key ..." / "key ... is empty" fail the load.
    data = pack_gguf([("a", UINT8, 1), ("b", UINT8, 2), ("a", UINT8, 3)])
    err = _failure(data)
    assert (err.key, err.offset) == ("a", 24 + 2 * 14) and "duplicate" in str(err)
    assert _failure(pack_gguf([("", UINT8, 1)])).key == "kv[0]"


@pytest.mark.parametrize(("vtype", "value"), [(UINT64, 32), (UINT32, 0), (UINT32, 48)])
def test_bad_alignment(vtype: int, value: int) -> None:
    err = _failure(pack_gguf([("a", UINT8, 1), ("general.alignment", vtype, value)]))
    assert (err.key, err.offset) == ("general.alignment", 24 + 14)


def test_nesting_is_bounded() -> None:
    deep = pack_header(1) + pack_string("deep") + struct.pack("<I", ARRAY)
    deep += struct.pack("<IQ", ARRAY, 1) * 10_000 + struct.pack("<IQ", UINT8, 0)
    assert "nested deeper" in str(_failure(deep))


def test_missing_and_empty_files(tmp_path: Path) -> None:
    with pytest.raises(FormatError, match="cannot read"):
        read_gguf_metadata(tmp_path / "absent.gguf")
    (tmp_path / "empty.gguf").write_bytes(b"")
    with pytest.raises(FormatError, match="empty") as info:
        read_gguf_metadata(tmp_path / "empty.gguf")
    assert (info.value.key, info.value.offset) == ("header", 0)


# --- llama.cpp's vocab files -----------------------------------------------------------


def _type_name(types: tuple[ValueType, ...]) -> str:
    names = [t.name for t in types]
    return "".join(f"{n}[" for n in names[:-1]) + names[-1] + "]" * (len(names) - 1)


def _digest(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def test_expected_table_is_from_gguf_0_19_0() -> None:
    assert EXPECTED["engine"]["gguf"] == "0.19.0"
    assert sorted(EXPECTED_BY_NAME) == sorted(f"ggml-vocab-{n}.gguf" for n in fixtures.GGUF_VOCAB_NAMES)
    assert len(EXPECTED_BY_NAME) == 19


@pytest.mark.parametrize("name", fixtures.GGUF_VOCAB_NAMES)
def test_vocab_file_matches_frozen_gguf_py_reading(name: str) -> None:
    path = fixtures.gguf_vocab_path(name)
    row = EXPECTED_BY_NAME[path.name]
    meta = read_gguf_metadata(path)
    assert (meta.version, meta.tensor_count, len(meta.kv)) == (row["version"], row["tensor_count"], row["kv_count"])
    assert (meta.kv_end, meta.alignment, meta.byte_order) == (row["kv_end"], row["alignment"], "little")
    assert {k: _type_name(t) for k, t in meta.types.items()} == row["types"]
    assert list(meta.kv) == list(row["values"])
    for key, want in row["values"].items():
        got = _plain(meta.kv[key])
        if meta.types[key] == (ValueType.ARRAY, ValueType.BOOL):  # kept as 0/1 bytes
            got = [bool(v) for v in got]
        if isinstance(got, list):
            head, tail = got[: EXPECTED["head"]], got[-EXPECTED["tail"] :]
            got = {"len": len(got), "head": head, "tail": tail, "sha256": _digest(got)}
        assert got == want, key


@pytest.mark.parametrize("name", ["gemma-4", "nomic-bert-moe"])
def test_250k_vocab_reads_in_well_under_a_second(name: str) -> None:
    # CPU time, best of three, so a loaded machine does not make it flaky (~0.25 s for gemma-4 when idle).
    path = fixtures.gguf_vocab_path(name)
    best = math.inf
    for _ in range(3):
        start = time.process_time()
        meta = read_gguf_metadata(path)
        best = min(best, time.process_time() - start)
    assert len(meta.kv["tokenizer.ggml.tokens"]) >= 250_000
    assert best < 1.0, f"{name}: {best:.2f} s"


def test_vocab_fixture_brings_its_test_vectors() -> None:
    path = fixtures.gguf_vocab_path("llama-bpe")
    assert path.with_name(path.name + ".inp").is_file() and path.with_name(path.name + ".out").is_file()
    assert fixtures.sha256_file(path) == EXPECTED_BY_NAME[path.name]["sha256"]


@pytest.mark.slow
@pytest.mark.parametrize("name", fixtures.GGUF_VOCAB_NAMES)
def test_vocab_file_against_gguf_py_live(name: str) -> None:
    gguf = pytest.importorskip("gguf")
    path = fixtures.gguf_vocab_path(name)
    meta = read_gguf_metadata(path)
    reader = gguf.GGUFReader(path)
    for field in reader.fields.values():
        if field.name.startswith(("tokenizer.", "general.")):
            theirs = field.contents()
            if isinstance(theirs, list):
                theirs = [t.item() if hasattr(t, "item") else t for t in theirs]
            elif hasattr(theirs, "item"):
                theirs = theirs.item()
            assert _plain(meta.kv[field.name]) == theirs, field.name
