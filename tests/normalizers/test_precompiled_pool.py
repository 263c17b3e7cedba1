"""The charsmap's replacement pool is checked as UTF-8 without building its text
(`precompiled._is_utf8`, chunked): it accepts exactly what ``bytes.decode("utf-8")`` accepts, and a
pool it refuses gives the whole decode's reason."""

from __future__ import annotations

import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from polytok.normalizers.precompiled import _UTF8_CHUNK, Charsmap, _is_utf8

EDGES = [b"", b"a", "é日😀".encode(), b"\xe2\x96", b"\xe2\x96\x81", b"\xed\xa0\x80", b"\xc0\xaf", b"\xf4\x90\x80\x80",
         b"\xff", b"\x80", b"\xf0\x9f\x98"]


def _decodes(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


@pytest.mark.parametrize("tail", EDGES)
@pytest.mark.parametrize("offset", [0, 1, 2, 3])
def test_a_character_across_a_chunk_boundary_is_judged_as_a_whole_decode_judges_it(tail, offset):
    """Every edge sequence placed so that it straddles the first chunk boundary."""
    data = b"x" * (_UTF8_CHUNK - offset) + tail + b"y"
    assert _is_utf8(memoryview(data)) == _decodes(data)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(EDGES + [b"x" * 1000, "\u2581".encode() * 700]), max_size=40))
def test_random_pools_are_judged_as_a_whole_decode_judges_them(parts):
    data = b"".join(parts)
    assert _is_utf8(memoryview(data)) == _decodes(data)


@pytest.mark.parametrize("tail", [t for t in EDGES if not _decodes(b"x" + t)])
def test_a_pool_that_is_not_utf8_names_the_whole_decodes_reason(tail):
    pool = b"x" * (_UTF8_CHUNK - 1) + tail
    blob = struct.pack("<I", 1024) + b"\0" * 1024 + pool
    try:
        pool.decode("utf-8")
    except UnicodeDecodeError as exc:
        reason = exc.reason
    with pytest.raises(ValueError, match=f"replacement pool is not UTF-8 \\({reason}\\)"):
        Charsmap(blob)


def test_the_pool_is_sliced_on_first_use():
    blob = struct.pack("<I", 1024) + b"\0" * 1024 + "a\0é\0".encode()
    charsmap = Charsmap(blob)
    assert "pool" not in charsmap.__dict__
    assert charsmap.pool == "a\0é\0".encode() and len(charsmap.units) == 256
