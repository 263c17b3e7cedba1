"""A message repeated many times in a `.model` loads in linear time (protobuf MergeFrom semantics).

protobuf's parser merges a singular message field seen again into the one it has
(later scalars win, repeated fields append). Copying the fields gathered so far at
each repeat made a file of N repeated ``trainer_spec`` messages load in time
quadratic in N; the merge now extends in place. The result is checked against
sentencepiece 0.2.3 run live on the same file.
"""

from __future__ import annotations

import pytest
from formats.sentencepiece_pack import UNKNOWN, USER_DEFINED, field, piece

import polytok
from polytok.formats.protobuf_wire import merge_fields

spm = pytest.importorskip("sentencepiece")


def _repeated_trainer_spec(repeats: int) -> bytes:
    pieces = [piece("<unk>", 0.0, UNKNOWN), piece("a", -1.0), piece("b", -2.0), piece("ab", -0.5),
              piece("x", 0.0, USER_DEFINED)]
    spec = field(30, b"x") + field(3, 2)  # user_defined_symbols: "x"; model_type: BPE
    return b"".join(pieces) + field(2, spec) * repeats + field(3, field(3, 1))


def test_a_repeated_message_merges_as_sentencepiece_reads_it(tmp_path):
    path = tmp_path / "repeated.model"
    path.write_bytes(_repeated_trainer_spec(5_000))
    sp = spm.SentencePieceProcessor(model_file=str(path))
    tok = polytok.load(path)
    for text in ["abxab", "ba x", "xxab", ""]:
        assert tok.encode(text) == sp.encode(text), text
        assert tok.decode(tok.encode(text)) == sp.decode(sp.encode(text))


def test_repeated_fields_are_extended_in_place():
    # The mechanism that keeps the merge linear: the lists gathered so far are
    # extended, never copied (a copy per repeat is the quadratic load).
    gathered: dict = {"user_defined_symbols": ["x"], "model_type": 1}
    first = gathered["user_defined_symbols"]
    for i in range(3):
        merged = merge_fields(gathered, {"user_defined_symbols": [f"s{i}"], "model_type": 2})
        assert merged is gathered and merged["user_defined_symbols"] is first
    assert first == ["x", "s0", "s1", "s2"] and gathered["model_type"] == 2
