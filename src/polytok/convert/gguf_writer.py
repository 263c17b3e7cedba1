"""GGUF writing for ``polytok convert``: a vocab-only file, or a copy of a GGUF with new tokenizer keys.

Writes through gguf-py's ``GGUFWriter`` (the format's official library, the
optional extra ``polytok[convert]``, ``gguf==0.19.0``). Value types follow what
llama.cpp's converter writes through the same writer (gguf-py 0.19.0
``gguf_writer.py``: strings, UINT32 ids, BOOL flags, INT32 token types, FLOAT32
scores, string arrays). The copy reproduces the approach of gguf-py's
``scripts/gguf_new_metadata.py`` ``copy_with_new_metadata``: every field but the
old ``tokenizer.*`` keys is copied with its type, then the tensors, byte for byte.
The base file is first read and checked by `polytok.formats.gguf_tensors` (the
bounds and offset checks of llama.cpp's gguf.cpp), since gguf-py's reader trusts
the counts and offsets it reads.
Key names come from `polytok.formats.gguf_keys` only.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from ..errors import FormatError, PolytokError
from ..formats.gguf_keys import General
from ..formats.gguf_tensors import read_gguf_tensors

__all__ = ["KeyValue", "write_gguf", "require_gguf"]


@dataclass(frozen=True)
class KeyValue:
    """One key to write; `kind` is ``str``, ``u32``, ``bool``, ``i32[]``, ``f32[]`` or ``str[]``."""

    key: str
    value: Any
    kind: str


def require_gguf() -> Any:
    """The ``gguf`` module, or a `PolytokError` naming the extra that installs it."""
    try:
        import gguf
    except ImportError:
        raise PolytokError("polytok convert writes GGUF through the gguf package: "
                           "pip install 'polytok[convert]' (gguf==0.19.0)") from None
    return gguf


def _add(writer: Any, gguf: Any, kv: KeyValue) -> None:
    t = gguf.GGUFValueType
    kinds = {"str": (t.STRING, None), "u32": (t.UINT32, None), "bool": (t.BOOL, None),
             "i32[]": (t.ARRAY, t.INT32), "f32[]": (t.ARRAY, t.FLOAT32), "str[]": (t.ARRAY, t.STRING)}
    vtype, sub = kinds[kv.kind]
    writer.add_key_value(kv.key, kv.value, vtype, sub_type=sub)


def write_gguf(out_path: str | os.PathLike[str], architecture: str, keys: list[KeyValue],
               base_gguf: str | os.PathLike[str] | None = None) -> None:
    """Write `keys` to a new vocab-only GGUF, or to a copy of `base_gguf` that loses its tokenizer keys.

    Raises:
        PolytokError: the gguf package is not installed.
        FormatError: `base_gguf` cannot be read as GGUF.
    """
    gguf = require_gguf()
    if base_gguf is None:
        writer = gguf.GGUFWriter(os.fspath(out_path), architecture)
        for kv in keys:
            _add(writer, gguf, kv)
        writer.write_header_to_file()
        writer.write_kv_data_to_file()
        writer.close()
        return
    # polytok's own bounded reading first: every count, length, tensor offset and size is checked
    # against the file before gguf-py's reader (which trusts them) sees it
    read_gguf_tensors(base_gguf)
    try:
        reader = gguf.GGUFReader(os.fspath(base_gguf))
    except (OSError, ValueError, KeyError, IndexError, TypeError, OverflowError) as exc:
        raise FormatError(f"cannot read the base GGUF: {exc}", file=os.fspath(base_gguf)) from None
    _copy(gguf, reader, out_path, keys)


def _copy(gguf: Any, reader: Any, out_path: str | os.PathLike[str], keys: list[KeyValue]) -> None:
    arch_field = reader.get_field(General.ARCHITECTURE)
    arch = arch_field.contents() if arch_field is not None else "llama"
    writer = gguf.GGUFWriter(os.fspath(out_path), arch=arch, endianess=reader.endianess)
    align = reader.get_field(General.ALIGNMENT)
    if align is not None:
        writer.data_alignment = align.contents()
    for name, field in reader.fields.items():
        if name.startswith("GGUF.") or name == General.ARCHITECTURE or name.startswith("tokenizer."):
            continue
        vtype = field.types[0]
        sub = field.types[-1] if vtype == gguf.GGUFValueType.ARRAY else None
        writer.add_key_value(name, field.contents(), vtype, sub_type=sub)
    for kv in keys:
        _add(writer, gguf, kv)
    for tensor in reader.tensors:
        writer.add_tensor_info(tensor.name, tensor.data.shape, tensor.data.dtype, tensor.data.nbytes,
                               tensor.tensor_type)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_ti_data_to_file()
    for tensor in reader.tensors:
        writer.write_tensor_data(tensor.data, tensor_endianess=reader.endianess)
    writer.close()
