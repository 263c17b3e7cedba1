"""The pure-Python reader of a SentencePiece ``.model`` (a serialized ``ModelProto``).

Part of the sentencepiece reader (see `polytok.formats.sentencepiece` for the rules and their
sources): `read_model_proto` walks the whole file with `protobuf_wire`, and `read_spec` reads
one spec message. A load whose pieces ``spm_model`` reads in C reads its specs there too
(``Vocab.spec_fields``, the same fields as `_schemas`) and imports neither this module nor
`protobuf_wire`.
"""

from __future__ import annotations

import struct
from functools import cache

from .. import kernels
from .protobuf_wire import LENGTH, Field, WireError, merge_fields, read_message, read_varint, skip_field
from .sentencepiece import MODEL_TYPES, NORMAL, ModelProto

_FLOAT = struct.Struct("<f")
_SPEC_NAMES = {2: "trainer_spec", 3: "normalizer_spec", 5: "denormalizer_spec"}


@cache
def _schemas() -> dict[str, dict[int, Field]]:
    """The schemas of the messages read (`protobuf_wire`): ``"piece"`` and each spec's, by name."""
    normalizer = {1: Field("name", "string"), 2: Field("precompiled_charsmap", "bytes"),
                  3: Field("add_dummy_prefix", "bool"), 4: Field("remove_extra_whitespaces", "bool"),
                  5: Field("escape_whitespaces", "bool")}
    trainer = {
        3: Field("model_type", "enum", values=frozenset(MODEL_TYPES)), 4: Field("vocab_size", "int32"),
        24: Field("treat_whitespace_as_suffix", "bool"), 35: Field("byte_fallback", "bool"),
        40: Field("unk_id", "int32"), 41: Field("bos_id", "int32"), 42: Field("eos_id", "int32"),
        43: Field("pad_id", "int32"), 44: Field("unk_surface", "string"), 45: Field("unk_piece", "string"),
        46: Field("bos_piece", "string"), 47: Field("eos_piece", "string"), 48: Field("pad_piece", "string"),
        30: Field("control_symbols", "string", repeated=True),
        31: Field("user_defined_symbols", "string", repeated=True),
    }
    piece = {1: Field("piece", "string"), 2: Field("score", "float"),
             3: Field("type", "enum", values=frozenset(range(1, 7)))}
    return {"piece": piece, "trainer_spec": trainer, "normalizer_spec": normalizer, "denormalizer_spec": normalizer}


def read_spec(proto: ModelProto, data: bytes, number: int, start: int, end: int) -> None:
    """Merge the spec message ``data[start:end]`` (field `number`) into `proto`."""
    name = _SPEC_NAMES[number]
    fields = read_message(data, start, end, _schemas()[name], file=proto.file, path=name)
    setattr(proto, name, merge_fields(getattr(proto, name) or {}, fields))


def read_model_proto(data: bytes, file: str) -> ModelProto:
    """Parse the ``ModelProto`` fields polytok uses (see `protobuf_wire` for the wire rules)."""
    proto = ModelProto(file)
    pos, end = 0, len(data)
    kernel = kernels.kernel("wire")  # the pieces in one call; None: _read_usual_pieces
    while pos < end:
        if kernel is not None:
            pos = kernel.read_pieces(data, pos, end, proto.pieces, proto.scores, proto.types)
        else:
            pos = _read_usual_pieces(data, pos, end, proto)
        if pos >= end:
            break
        tag_at = pos
        tag, pos = read_varint(data, pos, end, file, "ModelProto")
        number, wire = tag >> 3, tag & 7
        if number in (1, 2, 3, 5):
            if wire != LENGTH:
                raise WireError(f"field {number} should be length-delimited, found wire type {wire}",
                                file=file, key=_FIELD_NAMES[number], offset=tag_at)
            size_at = pos
            size, pos = read_varint(data, pos, end, file, _FIELD_NAMES[number])
            if pos + size > end:
                raise WireError(f"length {size} runs {pos + size - end} bytes past the end of the file",
                                file=file, key=_FIELD_NAMES[number], offset=size_at)
            if number == 1:
                _read_piece(data, pos, pos + size, proto)
            else:
                read_spec(proto, data, number, pos, pos + size)
            pos += size
        else:
            pos = _skip_one(data, tag_at, end, file)
    return proto


_FIELD_NAMES = {1: "pieces", 2: "trainer_spec", 3: "normalizer_spec", 5: "denormalizer_spec"}


def _skip_one(data: bytes, tag_at: int, end: int, file: str) -> int:
    """Position after the one (unknown) field that starts at `tag_at`."""
    tag, pos = read_varint(data, tag_at, end, file, "ModelProto")
    if tag >> 3 == 0:
        raise WireError("field number 0: not a SentencePiece model, or a corrupt one", file=file,
                        key="ModelProto", offset=tag_at)
    return skip_field(data, pos, end, tag & 7, tag >> 3, file, "ModelProto")


def _read_usual_pieces(data: bytes, pos: int, end: int, proto: ModelProto) -> int:
    """Read consecutive ``pieces`` entries of the usual short layout; returns where the first other field starts.

    The layout: tag 0x0A, a one-byte length, then ``0A <len> piece 15 <float32>``
    and optionally ``18 <type>``. Anything else is left to the generic walk.
    """
    pieces, scores, types = proto.pieces, proto.scores, proto.types
    unpack = _FLOAT.unpack_from
    while pos + 9 <= end and data[pos] == 0x0A and data[pos + 1] < 0x80 and data[pos + 2] == 0x0A:
        stop = pos + 2 + data[pos + 1]
        a = pos + 4
        b = a + data[pos + 3]
        if data[pos + 3] >= 0x80 or stop > end or b + 5 > stop or data[b] != 0x15:
            break
        c = b + 5
        if c == stop:
            kind = NORMAL
        elif c + 2 == stop and data[c] == 0x18 and 1 <= data[c + 1] <= 6:
            kind = data[c + 1]
        else:
            break
        try:
            pieces.append(data[a:b].decode("utf-8"))
        except UnicodeDecodeError:
            break
        scores.append(unpack(data, b + 1)[0])
        types.append(kind)
        pos = stop
    return pos


def _read_piece(data: bytes, pos: int, stop: int, proto: ModelProto) -> None:
    """One ``SentencePiece``: the usual layout (piece, score, optional type) fast, else the generic walk."""
    if stop - pos >= 7 and data[pos] == 0x0A and data[pos + 1] < 0x80:
        a = pos + 2
        b = a + data[pos + 1]
        if b + 5 <= stop and data[b] == 0x15:
            c = b + 5
            kind = 1 if c == stop else data[c + 1] if c + 2 == stop and data[c] == 0x18 else 0
            if kind:
                try:
                    text = data[a:b].decode("utf-8")
                except UnicodeDecodeError:
                    pass
                else:
                    proto.pieces.append(text)
                    proto.scores.append(_FLOAT.unpack_from(data, b + 1)[0])
                    proto.types.append(kind if 1 <= kind <= 6 else NORMAL)
                    return
    fields = read_message(data, pos, stop, _schemas()["piece"], file=proto.file, path=f"pieces[{len(proto.pieces)}]")
    proto.pieces.append(fields.get("piece", ""))
    proto.scores.append(fields.get("score", 0.0))
    proto.types.append(fields.get("type", NORMAL))
