"""Hostile GGUF sizes, offsets and types: bounded memory, no wrap-around, only FormatErrors.

Files are packed by hand (formats/gguf_pack.py).  Which files llama.cpp refuses comes from
ggml/src/gguf.cpp gguf_init_from_reader and src/llama-vocab.cpp load (llama-cpp-python
0.3.36): tensor offsets must follow each other exactly, padded to the alignment; arrays
of arrays are refused; keys have strict types.  Peak memory is measured in a subprocess
(ru_maxrss), never time.
"""

from __future__ import annotations

import json
import struct
import subprocess
import sys
from pathlib import Path

import pytest
from formats.gguf_pack import (
    ARRAY,
    BOOL,
    FLOAT32,
    INT8,
    INT32,
    STRING,
    UINT8,
    UINT32,
    pack_gguf,
    pack_header,
    pack_kv,
    pack_string,
)  # fmt: skip

import polytok
from polytok.errors import FormatError
from polytok.formats.gguf_reader import MAX_INNER_ARRAYS, parse_gguf_metadata

SRC = Path(polytok.__file__).resolve().parents[1]
ARCH = ("general.architecture", STRING, "llama")
VOCAB = [("tokenizer.ggml.model", STRING, "llama"),
         ("tokenizer.ggml.tokens", (ARRAY, STRING), ["<unk>", "<s>", "</s>", "a"]),
         ("tokenizer.ggml.scores", (ARRAY, FLOAT32), [0.0, 0.0, 0.0, -1.0]),
         ("tokenizer.ggml.token_type", (ARRAY, INT32), [2, 3, 3, 1])]  # fmt: skip


def _peak_mb(code: str) -> tuple[float, str]:
    """Run `code` in a fresh interpreter; (peak RSS growth in MB while it runs, its last stdout line)."""
    script = (f"import resource, sys\nsys.path.insert(0, {str(SRC)!r})\nimport polytok\n"
              f"before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n{code}\n"
              "print((resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024)\n")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    lines = out.stdout.strip().splitlines()
    return float(lines[-1]), lines[0] if len(lines) > 1 else ""


def test_64_mib_uint8_array_costs_its_bytes_not_a_list_of_ints(tmp_path):
    path = tmp_path / "u8.gguf"
    n = 64 << 20
    path.write_bytes(pack_header(1) + pack_string("x.blob") + struct.pack("<IIQ", ARRAY, UINT8, n) + b"\x07" * n)
    code = (f"from polytok.formats.gguf_reader import read_gguf_metadata\n"
            f"v = read_gguf_metadata({str(path)!r}).kv['x.blob']\nprint(len(v), v[0], v[-1])")
    grown, head = _peak_mb(code)
    assert head == f"{n} 7 7"
    assert grown < 300, f"{grown:.0f} MB for a 64 MiB array"  # a list of Python ints took ~1100 MB


def _base_with_kv(tmp_path: Path, tail: bytes, kv_count: int = 2) -> Path:
    path = tmp_path / "base.gguf"
    data = pack_header(kv_count) + pack_kv(*ARCH) + tail
    path.write_bytes(data + b"\0" * max(0, 200 - len(data)))
    return path


def test_convert_base_with_a_2_62_element_array_is_refused_in_bounded_memory(tmp_path):
    pytest.importorskip("gguf")
    base = _base_with_kv(tmp_path, pack_string("x.big") + struct.pack("<IIQ", ARRAY, UINT8, 2**62))
    folder = Path(__file__).resolve().parents[1] / "data" / "convert" / "arctic"
    code = (f"from polytok.convert.converter import to_gguf\ntry:\n"
            f"    to_gguf({str(folder)!r}, {str(tmp_path / 'o.gguf')!r}, base_gguf={str(base)!r})\n"
            "except polytok.FormatError as e:\n    print(json.dumps([e.key, str(e)]))")
    grown, head = _peak_mb("import json\n" + code)
    key, message = json.loads(head)
    assert key == "x.big" and "cannot fit" in message
    assert grown < 200, f"{grown:.0f} MB"  # gguf-py's reader allocated ~4 GB for this file


def test_millions_of_empty_inner_arrays_are_refused():
    n = MAX_INNER_ARRAYS + 1
    body = pack_string("x.nest") + struct.pack("<IIQ", ARRAY, ARRAY, n) + struct.pack("<IQ", UINT8, 0) * n
    with pytest.raises(FormatError) as info:
        parse_gguf_metadata(pack_header(1) + body, file="n.gguf")
    assert info.value.key == "x.nest" and "nested" in str(info.value)
    ok = pack_string("x.nest") + struct.pack("<IIQ", ARRAY, ARRAY, 3) + struct.pack("<IQ", UINT8, 0) * 3
    assert [list(a) for a in parse_gguf_metadata(pack_header(1) + ok).kv["x.nest"]] == [[], [], []]


def _tensor_file(tmp_path: Path, tensors: list[tuple[str, list[int], int, int]], data: bytes) -> Path:
    """A GGUF with `tensors` (name, dims, ggml type, offset) and `data` as its (aligned) data section."""
    out = pack_gguf([ARCH], tensor_count=len(tensors))
    for name, dims, ggml_type, offset in tensors:
        out += pack_string(name) + struct.pack("<I", len(dims)) + struct.pack(f"<{len(dims)}q", *dims)
        out += struct.pack("<IQ", ggml_type, offset)
    out += b"\0" * (-len(out) % 32) + data
    path = tmp_path / "t.gguf"
    path.write_bytes(out)
    return path


F32 = 0
GOOD = [("a", [8], F32, 0), ("b", [4, 2], F32, 32)]  # 32 bytes each, b right after a


@pytest.mark.parametrize("tensors,data,reason", [
    ([("a", [8], F32, 2**64 - 32)], b"\1" * 32, "expected 0"),  # wraps onto the header
    ([("a", [8], F32, 0), ("b", [8], F32, 0)], b"\1" * 64, "expected 32"),  # overlap
    ([("a", [8], F32, 0), ("b", [8], F32, 64)], b"\1" * 96, "expected 32"),  # gap
    ([("a", [8], F32, 0)], b"\1" * 31, "past the end"),
    ([("a", [2**30, 2**30], F32, 0)], b"\1" * 32, "past the end"),
    ([("a", [2**62, 2**62], F32, 0)], b"\1" * 32, "INT64_MAX"),
    ([("a", [-1], F32, 0)], b"", "negative"),
    ([("a", [1, 1, 1, 1, 1], F32, 0)], b"", "dimensions"),
    ([("a", [8], 4, 0)], b"\1" * 32, "unknown ggml type"),  # Q4_2: removed from ggml
    ([("a", [8], 2, 0)], b"\1" * 32, "block size"),  # Q4_0 rows are multiples of 32
    ([("a", [8], F32, 0), ("a", [8], F32, 32)], b"\1" * 64, "duplicate"),
    ([("x" * 64, [8], F32, 0)], b"\1" * 32, "name"),
])  # fmt: skip
def test_tensor_infos_are_checked_as_llama_cpp_does(tmp_path, tensors, data, reason):
    from polytok.formats.gguf_tensors import read_gguf_tensors

    path = _tensor_file(tmp_path, tensors, data)
    with pytest.raises(FormatError) as info:
        read_gguf_tensors(path)
    assert reason in str(info.value) and str(path) in str(info.value)


def test_well_formed_tensor_infos_read(tmp_path):
    from polytok.formats.gguf_tensors import read_gguf_tensors

    _, infos = read_gguf_tensors(_tensor_file(tmp_path, GOOD, b"\1" * 64))
    assert [(t.name, t.offset, t.nbytes) for t in infos] == [("a", 0, 32), ("b", 32, 32)]


def test_too_many_tensor_infos_for_the_file(tmp_path):
    from polytok.formats.gguf_tensors import read_gguf_tensors

    path = tmp_path / "n.gguf"
    path.write_bytes(pack_gguf([ARCH], tensor_count=2**40) + b"\0" * 100)
    with pytest.raises(FormatError, match="cannot fit"):
        read_gguf_tensors(path)


def test_convert_base_with_a_wrapping_offset_is_refused(tmp_path):
    pytest.importorskip("gguf")
    from polytok.convert.converter import to_gguf

    base = _tensor_file(tmp_path, [("w", [8], F32, 2**64 - 32)], b"\1" * 32)
    folder = Path(__file__).resolve().parents[1] / "data" / "convert" / "arctic"
    with pytest.raises(FormatError) as info:
        to_gguf(folder, tmp_path / "o.gguf", base_gguf=base)
    assert info.value.key == "tensor 'w'" and not (tmp_path / "o.gguf").exists()


def _vocab_file(tmp_path: Path, kvs: list) -> Path:
    path = tmp_path / "v.gguf"
    path.write_bytes(pack_gguf(kvs))
    return path


def test_byte_token_not_written_as_a_byte_is_refused_at_load(tmp_path):
    kvs = [*VOCAB[:3], ("tokenizer.ggml.token_type", (ARRAY, INT32), [2, 3, 3, 6])]
    with pytest.raises(FormatError) as info:
        polytok.load(_vocab_file(tmp_path, kvs))
    assert info.value.key == "tokenizer.ggml.token_type[3]" and "token 3" in str(info.value)
    kvs[1] = ("tokenizer.ggml.tokens", (ARRAY, STRING), ["<unk>", "<s>", "</s>", "<0x0A>"])
    assert polytok.load(_vocab_file(tmp_path, kvs)).decode([3]) == "\n"


WRONG = {"str": (STRING, "x"), "u32": (UINT32, 1), "bool": (BOOL, True), "i8": (INT8, -1),
         "a.str": ((ARRAY, STRING), ["x"]), "a.u8": ((ARRAY, UINT8), [1]), "a.f32": ((ARRAY, FLOAT32), [1.0])}
READ_KEYS = {  # key -> the WRONG entries llama.cpp accepts for it
    "tokenizer.ggml.pre": {"str"}, "tokenizer.ggml.model": {"str"}, "tokenizer.ggml.tokens": {"a.str"},
    "tokenizer.ggml.scores": {"a.f32"}, "tokenizer.ggml.token_type": set(),
    "tokenizer.ggml.precompiled_charsmap": {"a.u8"}, "tokenizer.ggml.bos_token_id": {"u32"},
    "tokenizer.ggml.add_bos_token": {"bool"}, "general.name": {"str"},
}  # fmt: skip


@pytest.mark.parametrize("key", READ_KEYS)
@pytest.mark.parametrize("wrong", WRONG)
def test_every_read_key_is_type_checked(tmp_path, key, wrong):
    if wrong in READ_KEYS[key]:
        pytest.skip("a type llama.cpp accepts for this key")
    vtype, value = WRONG[wrong]
    kvs = [kv for kv in VOCAB if kv[0] != key] + [(key, vtype, value)]
    with pytest.raises(FormatError) as info:
        polytok.load(_vocab_file(tmp_path, kvs))
    assert info.value.key == key and "expected" in str(info.value) and "found" in str(info.value)
