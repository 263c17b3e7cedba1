"""A writer of SentencePiece ``.model`` files (a serialized ``ModelProto``).

The counterpart of the reader (`polytok.formats.sentencepiece`, `protobuf_wire`):
`model_bytes` serializes pieces and the three spec messages with the field
numbers and wire types of sentencepiece 0.2.3's ``sentencepiece_model.proto``.
Encoding rules (https://protobuf.dev/programming-guides/encoding/), as
protobuf's C++ serializer applies them to proto2 messages:

* fields are written in field-number order, and only those given (a spec
  mapping's missing key, or a value of None, leaves the field unset, so the
  reader applies the proto default: proto2 presence is kept);
* ``int32`` and enum values are varints, a negative one sign-extended to 64
  bits (ten bytes); ``bool`` is the varint 0 or 1; ``float`` is 4
  little-endian bytes; strings are UTF-8, length-delimited; a repeated string
  field is one field per value;
* a piece's ``type`` is left out when it is NORMAL (the default), as
  sentencepiece's trainer leaves it out.

A spec key that is not a field of its message, or a value of the wrong kind
(a float for an ``int32``, a str for a ``bytes``), raises `ValueError` naming
the message and the key.
"""

from __future__ import annotations

import math
import struct
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["model_bytes", "TRAINER_FIELDS", "NORMALIZER_FIELDS"]

_VARINT, _LENGTH, _FIXED32 = 0, 2, 5
_FLOAT = struct.Struct("<f")
_NORMAL = 1
_PIECE_TYPES = range(1, 7)
_MODEL_TYPES = range(1, 5)

#: ``TrainerSpec``'s fields, name -> (field number, kind); kinds as in `protobuf_wire.Field`,
#: a repeated field's kind ends in ``[]``
TRAINER_FIELDS: dict[str, tuple[int, str]] = {
    "input": (1, "string[]"), "model_prefix": (2, "string"), "model_type": (3, "enum"),
    "vocab_size": (4, "int32"), "accept_language": (5, "string[]"), "self_test_sample_size": (6, "int32"),
    "input_format": (7, "string"), "character_coverage": (10, "float"), "input_sentence_size": (11, "uint64"),
    "mining_sentence_size": (12, "int32"), "training_sentence_size": (13, "int32"),
    "seed_sentencepiece_size": (14, "int32"), "shrinking_factor": (15, "float"), "num_threads": (16, "int32"),
    "num_sub_iterations": (17, "int32"), "max_sentence_length": (18, "int32"),
    "shuffle_input_sentence": (19, "bool"), "max_sentencepiece_length": (20, "int32"),
    "split_by_unicode_script": (21, "bool"), "split_by_whitespace": (22, "bool"), "split_by_number": (23, "bool"),
    "treat_whitespace_as_suffix": (24, "bool"), "split_digits": (25, "bool"),
    "allow_whitespace_only_pieces": (26, "bool"), "control_symbols": (30, "string[]"),
    "user_defined_symbols": (31, "string[]"), "vocabulary_output_piece_score": (32, "bool"),
    "hard_vocab_limit": (33, "bool"), "use_all_vocab": (34, "bool"), "byte_fallback": (35, "bool"),
    "required_chars": (36, "string"), "unk_id": (40, "int32"), "bos_id": (41, "int32"), "eos_id": (42, "int32"),
    "pad_id": (43, "int32"), "unk_surface": (44, "string"), "unk_piece": (45, "string"),
    "bos_piece": (46, "string"), "eos_piece": (47, "string"), "pad_piece": (48, "string"),
    "train_extremely_large_corpus": (49, "bool"), "enable_differential_privacy": (50, "bool"),
    "differential_privacy_noise_level": (51, "float"), "differential_privacy_clipping_threshold": (52, "uint64"),
    "pretokenization_delimiter": (53, "string"), "seed_sentencepieces_file": (54, "string"),
    "auto_character_coverage": (55, "bool"),
}

#: ``NormalizerSpec``'s fields (the denormalizer's too), as `TRAINER_FIELDS`
NORMALIZER_FIELDS: dict[str, tuple[int, str]] = {
    "name": (1, "string"), "precompiled_charsmap": (2, "bytes"), "add_dummy_prefix": (3, "bool"),
    "remove_extra_whitespaces": (4, "bool"), "escape_whitespaces": (5, "bool"),
    "normalization_rule_tsv": (6, "string"),
}


def model_bytes(pieces: Sequence[tuple[str, float, int]], *, trainer_spec: Mapping[str, Any],
                normalizer_spec: Mapping[str, Any], denormalizer_spec: Mapping[str, Any] | None = None) -> bytes:
    """The ``ModelProto`` bytes of `pieces` and the specs (what sentencepiece's ``.model`` holds).

    Args:
        pieces: ``(piece, score, type)`` per id, type the proto enum (NORMAL=1, UNKNOWN=2,
            CONTROL=3, USER_DEFINED=4, UNUSED=5, BYTE=6).
        trainer_spec: ``TrainerSpec`` fields by their proto names (`TRAINER_FIELDS`).
        normalizer_spec: ``NormalizerSpec`` fields by their proto names (`NORMALIZER_FIELDS`).
        denormalizer_spec: likewise; None writes no denormalizer (sentencepiece's usual).

    Raises:
        ValueError: an unknown field name, a value of the wrong kind, a piece type or
            ``model_type`` outside its enum.
    """
    out = bytearray()
    for index, entry in enumerate(pieces):
        out += _length_field(1, _piece(index, entry))
    out += _length_field(2, _message("trainer_spec", trainer_spec, TRAINER_FIELDS))
    out += _length_field(3, _message("normalizer_spec", normalizer_spec, NORMALIZER_FIELDS))
    if denormalizer_spec is not None:
        out += _length_field(5, _message("denormalizer_spec", denormalizer_spec, NORMALIZER_FIELDS))
    return bytes(out)


def _piece(index: int, entry: tuple[str, float, int]) -> bytes:
    where = f"pieces[{index}]"
    try:
        text, score, kind = entry
    except (TypeError, ValueError):
        raise ValueError(f"{where}: expected (piece, score, type), got {entry!r}") from None
    out = _length_field(1, _encode_str(where + ".piece", text))
    out += _tag(2, _FIXED32) + _float(where + ".score", score)
    if _int(where + ".type", kind) not in _PIECE_TYPES:
        raise ValueError(f"{where}.type: {kind} is not a SentencePiece.Type (1..6)")
    if kind != _NORMAL:
        out += _tag(3, _VARINT) + _varint(kind)
    return out


def _message(name: str, spec: Mapping[str, Any], fields: Mapping[str, tuple[int, str]]) -> bytes:
    unknown = sorted(key for key in spec if key not in fields)
    if unknown:
        raise ValueError(f"{name}: no field named {', '.join(map(repr, unknown))} in this message")
    out = bytearray()
    for key in sorted((key for key in spec if spec[key] is not None), key=lambda key: fields[key][0]):
        number, kind = fields[key]
        where = f"{name}.{key}"
        value = spec[key]
        if kind.endswith("[]"):
            if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
                raise ValueError(f"{where}: expected a list of strings, got {type(value).__name__}")
            for item_index, item in enumerate(value):
                out += _length_field(number, _encode_str(f"{where}[{item_index}]", item))
        else:
            out += _scalar(where, number, kind, value)
    return bytes(out)


def _scalar(where: str, number: int, kind: str, value: Any) -> bytes:
    if kind == "string":
        return _length_field(number, _encode_str(where, value))
    if kind == "bytes":
        if not isinstance(value, (bytes, bytearray, memoryview)):
            raise ValueError(f"{where}: expected bytes, got {type(value).__name__}")
        return _length_field(number, bytes(value))
    if kind == "float":
        return _tag(number, _FIXED32) + _float(where, value)
    if kind == "bool":
        if not isinstance(value, bool):
            raise ValueError(f"{where}: expected a bool, got {type(value).__name__}")
        return _tag(number, _VARINT) + _varint(int(value))
    integer = _int(where, value)
    if kind == "uint64":
        if not 0 <= integer < 1 << 64:
            raise ValueError(f"{where}: {integer} is outside uint64")
        return _tag(number, _VARINT) + _varint(integer)
    if not -(1 << 31) <= integer < 1 << 31:
        raise ValueError(f"{where}: {integer} is outside int32")
    if kind == "enum" and integer not in _MODEL_TYPES:
        raise ValueError(f"{where}: {integer} is not a TrainerSpec.ModelType (1..4)")
    return _tag(number, _VARINT) + _varint(integer & 0xFFFFFFFFFFFFFFFF)


def _int(where: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{where}: expected an int, got {type(value).__name__}")
    return value


def _float(where: str, value: Any) -> bytes:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"{where}: expected a float, got {type(value).__name__}")
    try:
        return _FLOAT.pack(value)
    except OverflowError:  # beyond float32: the C++ float conversion gives an infinity
        return _FLOAT.pack(math.copysign(math.inf, value))


def _encode_str(where: str, value: Any) -> bytes:
    if not isinstance(value, str):
        raise ValueError(f"{where}: expected a str, got {type(value).__name__}")
    try:
        return value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ValueError(f"{where}: not encodable as UTF-8 ({exc.reason} at {exc.start})") from None


def _tag(number: int, wire: int) -> bytes:
    return _varint(number << 3 | wire)


def _length_field(number: int, payload: bytes) -> bytes:
    return _tag(number, _LENGTH) + _varint(len(payload)) + payload


def _varint(value: int) -> bytes:
    out = bytearray()
    while value >= 0x80:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)
