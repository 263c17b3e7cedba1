"""Shared checks for the normalizer tests: polytok against the live `tokenizers`.

`check(reference, ours, texts)` asserts, for every text, that
- ``ours.normalize(text)`` (fast path) equals ``reference.normalize_str(text)``;
- ``ours.normalize_aligned`` on a fresh `NormalizedString` gives the same text;
- each normalized character's original offsets equal the reference's (and are
  shifted as a whole for a piece that starts further into the input). Those
  come from a tiny `tokenizers.Tokenizer` with the reference normalizer, a
  pre-tokenizer that isolates every character (``(?m:.)`` is dot-all in
  Oniguruma) and a WordLevel model that makes each of them one unk token.
"""

from __future__ import annotations

import random
from typing import Any

import fixtures
import pytest

from polytok.normalized import NormalizedString

tokenizers = pytest.importorskip("tokenizers")

_ONE_CHAR = tokenizers.pre_tokenizers.Split(tokenizers.Regex("(?m:.)"), behavior="isolated")


def edge_texts() -> list[str]:
    return fixtures.edge_texts()


def reference_tokenizer(reference: Any) -> Any:
    tok = tokenizers.Tokenizer(tokenizers.models.WordLevel({"[UNK]": 0}, unk_token="[UNK]"))
    tok.normalizer = reference
    tok.pre_tokenizer = _ONE_CHAR
    return tok


def aligned(ours: Any, text: str, start: int = 0) -> tuple[str, list[tuple[int, int]]]:
    ns = NormalizedString.from_original(text, start)
    ours.normalize_aligned(ns)
    return ns.text, [ns.offsets(i, i + 1) for i in range(len(ns.text))]


def check(reference: Any, ours: Any, texts: list[str], *, offsets: bool = True) -> None:
    tok = reference_tokenizer(reference) if offsets else None
    for text in texts:
        want = reference.normalize_str(text)
        assert ours.normalize(text) == want, f"fast path on {text!r}"
        got_text, got_offsets = aligned(ours, text)
        assert got_text == want, f"aligned path on {text!r}"
        if tok is not None:
            ref_offsets = tok.encode(text, add_special_tokens=False).offsets
            assert got_offsets == ref_offsets, f"offsets on {text!r} -> {want!r}"
        # a piece cut from further into the input: the same offsets, shifted
        shifted = [(a + 7, b + 7) for a, b in got_offsets]
        assert aligned(ours, text, start=7) == (want, shifted), f"offsets from 7 on {text!r}"


def random_texts(pool: str, n: int, max_len: int = 12, seed: int = 0) -> list[str]:
    rng = random.Random(seed)
    return ["".join(rng.choice(pool) for _ in range(rng.randint(1, max_len))) for _ in range(n)]


def all_code_points(step: int = 1) -> str:
    return "".join(chr(c) for c in range(0, 0x110000, step) if not 0xD800 <= c < 0xE000)


def spm_charsmap(path: Any) -> bytes:
    """``normalizer_spec.precompiled_charsmap`` of a SentencePiece ``.model`` (protobuf fields 3, then 2)."""
    return _field(_field(path.read_bytes(), 3), 2)


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            return value, pos


def _field(message: bytes, wanted: int) -> bytes:
    pos = 0
    while pos < len(message):
        tag, pos = _varint(message, pos)
        number, wire = tag >> 3, tag & 7
        if wire == 0:
            _, pos = _varint(message, pos)
        elif wire == 1:
            pos += 8
        elif wire == 5:
            pos += 4
        elif wire == 2:
            size, pos = _varint(message, pos)
            if number == wanted:
                return message[pos:pos + size]
            pos += size
        else:
            raise ValueError(f"unsupported protobuf wire type {wire}")
    raise KeyError(wanted)
