"""polytok.formats.sentencepiece_writer.model_bytes against sentencepiece 0.2.3, run live.

For each real ``.model`` fixture: the pieces and specs polytok's reader takes from it,
written back by `model_bytes`, load in ``SentencePieceProcessor`` and give the original's
ids on every edge text (and on bench slices, behind ``slow``); sentencepiece's own
``ModelProto`` (``sentencepiece_model_pb2``) parses the written bytes to the original's
pieces and to the same spec fields, presence included. Every field of the proto (all
that sentencepiece's ``ModelProto`` parses from a real file) written from its parsed
values serializes byte for byte as protobuf's serializer does.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from fixtures import bench_slice, edge_texts, fixture_path

from polytok.formats.sentencepiece import read_model_proto
from polytok.formats.sentencepiece_writer import NORMALIZER_FIELDS, TRAINER_FIELDS, model_bytes

spm = pytest.importorskip("sentencepiece")
model_pb2 = pytest.importorskip("sentencepiece.sentencepiece_model_pb2")

FILES = [("spm-botchan-bpe-1000", "spm.model"), ("spm-botchan-unigram-1000", "spm.model"),
         ("spm-kyoto-ja-unigram-8000", "spm.model"), ("spm-bpemb-en-100k", "spm.model"),
         ("spm-mistral-v1", "tokenizer.model"), ("spm-mistral-v3", "tokenizer.model"),
         ("marian-nmt", "vocab.joint.spm")]
IDS = [name for name, _ in FILES]


def _written(path: Any) -> bytes:
    data = path.read_bytes()
    proto = read_model_proto(data, str(path))
    return model_bytes(list(zip(proto.pieces, proto.scores, proto.types, strict=True)),
                       trainer_spec=proto.trainer_spec, normalizer_spec=proto.normalizer_spec,
                       denormalizer_spec=proto.denormalizer_spec)


def _parsed(data: bytes) -> Any:
    message = model_pb2.ModelProto()
    message.ParseFromString(data)
    return message


def _fields(message: Any) -> dict[str, Any]:
    return {f.name: (list(value) if f.is_repeated else value) for f, value in message.ListFields()}


def _ids(sp: Any, text: str) -> list[int] | None:
    try:
        return list(sp.encode(text))
    except RuntimeError:  # a lone surrogate
        return None


def _assert_same_ids(name: str, filename: str, texts: list[str]) -> None:
    path = fixture_path(name, filename)
    original = spm.SentencePieceProcessor(model_file=str(path))
    written = spm.SentencePieceProcessor(model_proto=_written(path))
    bad = [text for text in texts if _ids(original, text) != _ids(written, text)]
    assert not bad, f"{path}: {len(bad)} texts encode differently, first {bad[:3]!r}"


@pytest.mark.parametrize(("name", "filename"), FILES, ids=IDS)
def test_written_model_gives_the_original_ids(name, filename):
    _assert_same_ids(name, filename, edge_texts())


@pytest.mark.slow
@pytest.mark.parametrize(("name", "filename"), FILES, ids=IDS)
def test_written_model_gives_the_original_ids_on_bench_text(name, filename):
    _assert_same_ids(name, filename, [bench_slice(corpus, 20000) for corpus in ("en", "code", "multi")])


@pytest.mark.parametrize(("name", "filename"), FILES, ids=IDS)
def test_protobuf_parses_the_written_bytes_to_the_same_fields(name, filename):
    path = fixture_path(name, filename)
    original, written = _parsed(path.read_bytes()), _parsed(_written(path))
    assert [(p.piece, p.score, p.type) for p in written.pieces] == \
        [(p.piece, p.score, p.type) for p in original.pieces]
    read = read_model_proto(path.read_bytes(), str(path))
    for spec in ("trainer_spec", "normalizer_spec", "denormalizer_spec"):
        expected = {key: value for key, value in _fields(getattr(original, spec)).items()
                    if key in (getattr(read, spec) or {})}  # the fields polytok's reader keeps
        assert _fields(getattr(written, spec)) == expected, spec
    assert written.HasField("denormalizer_spec") == original.HasField("denormalizer_spec")


@pytest.mark.parametrize(("name", "filename"), FILES[:1] + FILES[-1:], ids=[IDS[0], IDS[-1]])
def test_every_field_serializes_as_protobuf_does(name, filename):
    original = _parsed(fixture_path(name, filename).read_bytes())
    original.DiscardUnknownFields()
    assert set(_fields(original.trainer_spec)) <= set(TRAINER_FIELDS)
    data = model_bytes([(p.piece, p.score, p.type) for p in original.pieces],
                       trainer_spec=_fields(original.trainer_spec), normalizer_spec=_fields(original.normalizer_spec),
                       denormalizer_spec=_fields(original.denormalizer_spec)
                       if original.HasField("denormalizer_spec") else None)
    assert data == original.SerializeToString(deterministic=True)


def test_field_tables_match_sentencepiece_model_proto():
    for table, message in ((TRAINER_FIELDS, model_pb2.TrainerSpec), (NORMALIZER_FIELDS, model_pb2.NormalizerSpec)):
        assert {f.name: f.number for f in message.DESCRIPTOR.fields} == \
            {name: number for name, (number, _) in table.items()}


def test_negative_ids_and_every_kind_round_trip():
    trainer = {"model_type": 2, "vocab_size": 3, "pad_id": -1, "unk_id": 0, "bos_id": -1, "eos_id": -1,
               "byte_fallback": False, "character_coverage": 0.5, "input_sentence_size": 1 << 40,
               "control_symbols": ["<a>", "<b>"], "unk_surface": "?"}
    normalizer = {"name": "identity", "precompiled_charsmap": b"", "add_dummy_prefix": False,
                  "normalization_rule_tsv": "41\t61\n"}
    data = model_bytes([("<unk>", 0.0, 2), ("a", -1.5, 1), ("b", -2.0, 5)], trainer_spec=trainer,
                       normalizer_spec=normalizer, denormalizer_spec={"add_dummy_prefix": True})
    message = _parsed(data)
    assert _fields(message.trainer_spec) == trainer
    assert _fields(message.normalizer_spec) == normalizer
    assert _fields(message.denormalizer_spec) == {"add_dummy_prefix": True}
    assert [(p.piece, p.score, p.type) for p in message.pieces] == [("<unk>", 0.0, 2), ("a", -1.5, 1), ("b", -2.0, 5)]
    assert not message.pieces[1].HasField("type")  # NORMAL is the default, left out


@pytest.mark.parametrize(("trainer", "normalizer", "pieces", "message"), [
    ({"vocab_sise": 3}, {}, [], "trainer_spec: no field named 'vocab_sise'"),
    ({}, {"escape_whitespace": True}, [], "normalizer_spec: no field named 'escape_whitespace'"),
    ({"vocab_size": 1.0}, {}, [], "trainer_spec.vocab_size: expected an int"),
    ({"byte_fallback": 1}, {}, [], "trainer_spec.byte_fallback: expected a bool"),
    ({"model_type": 7}, {}, [], "trainer_spec.model_type: 7 is not a TrainerSpec.ModelType"),
    ({"unk_id": 1 << 31}, {}, [], "trainer_spec.unk_id: 2147483648 is outside int32"),
    ({"control_symbols": "<s>"}, {}, [], "trainer_spec.control_symbols: expected a list"),
    ({}, {"precompiled_charsmap": "x"}, [], "normalizer_spec.precompiled_charsmap: expected bytes"),
    ({}, {}, [("a", 0.0, 7)], "pieces[0].type: 7 is not a SentencePiece.Type"),
    ({}, {}, [("a", 0.0)], "pieces[0]: expected (piece, score, type)"),
    ({}, {}, [("\ud800", 0.0, 1)], "pieces[0].piece: not encodable as UTF-8"),
])
def test_bad_fields_are_value_errors(trainer, normalizer, pieces, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        model_bytes(pieces, trainer_spec=trainer, normalizer_spec=normalizer)
