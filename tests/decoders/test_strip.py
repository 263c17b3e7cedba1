"""Strip decoder vs tokenizers.decoders.Strip, including the inputs where HF panics."""

from __future__ import annotations

import pytest

from polytok.decoders import Strip
from polytok.errors import DecodeError

from ._data import assert_same, ours_like

tokenizers = pytest.importorskip("tokenizers")
D = tokenizers.decoders

TOKENS = ["", " ", "  ", "   ", " a", "a ", "  a  ", " a b ", "ab", "xx", "xax", " x"]
PARAMS = [(c, start, stop) for c in (" ", "x") for start in range(4) for stop in range(4)]


def _reference(params, token):
    try:
        return D.Strip(*params).decode([token])
    except BaseException:  # pyo3 PanicException derives from BaseException
        return None


@pytest.mark.parametrize("params", PARAMS)
def test_each_token(params):
    ours = ours_like(D.Strip(*params))
    for token in TOKENS:
        expected = _reference(params, token)
        if expected is None:
            with pytest.raises(DecodeError):
                ours.decode_chain([token])
        else:
            assert "".join(ours.decode_chain([token])) == expected, (params, token)


def test_lists():
    ref = D.Strip(" ", 1, 0)
    assert_same(ref, ours_like(ref), [[], [" Hello", " world"], ["  a", "b "], [""]])


def test_crossing_cuts_raise():
    with pytest.raises(DecodeError):
        Strip(" ", 1, 1).decode_chain([" "])
