"""Truncation (with stride and overflows) and padding through encode_full / encode / encode_batch,
against tokenizers with enable_truncation / enable_padding on real files."""

from __future__ import annotations

import functools

import pytest
from fixtures import HF_JSON_FIXTURES, fixture_path

import polytok

tokenizers = pytest.importorskip("tokenizers")

A = "The quick brown fox jumps over the lazy dog, twice: the quick brown fox!"
B = "Pack my box with five dozen liquor jugs."


@functools.lru_cache(maxsize=1)
def _pair(name):
    path = fixture_path(name, HF_JSON_FIXTURES[name])
    return str(path), polytok.load(path)


def _fields(enc):
    return (list(enc.ids), list(enc.tokens), [tuple(o) for o in enc.offsets], list(enc.type_ids),
            list(enc.special_tokens_mask), list(enc.attention_mask), list(enc.word_ids),
            [_fields(o) for o in enc.overflowing])


SETTINGS = [
    dict(max_length=12, stride=0, strategy="longest_first", direction="right"),
    dict(max_length=12, stride=3, strategy="longest_first", direction="left"),
    dict(max_length=16, stride=2, strategy="only_first", direction="right"),
    dict(max_length=16, stride=0, strategy="only_second", direction="left"),
    dict(max_length=2, stride=0, strategy="longest_first", direction="right"),
]
PADDING = [None, dict(length=None, pad_to_multiple_of=8, direction="left"), dict(length=40, direction="right")]


@pytest.mark.parametrize("name", ["bert-base-uncased", "roberta-base", "llama3"])
@pytest.mark.parametrize("trunc", SETTINGS)
@pytest.mark.parametrize("padding", PADDING)
def test_truncation_and_padding_match_reference(name, trunc, padding):
    path, ours = _pair(name)
    ref = tokenizers.Tokenizer.from_file(path)
    ref.enable_truncation(**trunc)
    pad = None
    if padding is not None:
        ref.enable_padding(length=padding["length"], direction=padding["direction"],
                           pad_to_multiple_of=padding.get("pad_to_multiple_of"), pad_id=3, pad_token="[P]")
        pad = polytok.Padding(length=padding["length"], direction=padding["direction"],
                              pad_to_multiple_of=padding.get("pad_to_multiple_of"), pad_id=3, pad_token="[P]")
    ours_trunc = polytok.Truncation(**trunc)
    for a, b in [(A, B), (A, None), (B, A)]:
        for add_special in (True, False):
            try:
                expected = ref.encode(a, b, add_special_tokens=add_special)
            except (KeyboardInterrupt, SystemExit):
                raise
            except BaseException:  # the reference raises (or panics): polytok raises a clear error
                with pytest.raises(polytok.PolytokError):
                    ours.encode_full(a, pair=b, add_special=add_special, truncation=ours_trunc, padding=pad)
                continue
            got = ours.encode_full(a, pair=b, add_special=add_special, truncation=ours_trunc, padding=pad)
            assert _fields(got) == _fields(expected), (a, b, add_special)
    texts = [A, B, "short"]
    ours.truncation, ours.padding = ours_trunc, pad
    try:
        try:
            batch = ref.encode_batch(texts)
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException:
            with pytest.raises(polytok.PolytokError):
                ours.encode_batch(texts)
            return
        assert ours.encode_batch(texts) == [e.ids for e in batch]
        assert ours.encode(A) == ref.encode(A).ids
    finally:
        ours.truncation = ours.padding = None
