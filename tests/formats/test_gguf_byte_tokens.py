"""The GGUF reader's check that every BYTE token is written ``<0xNN>`` (llama.cpp's token_to_byte
reads the byte from the text), whatever the layout of the BYTE types: one run or scattered."""

from __future__ import annotations

from array import array
from typing import Any

import pytest

from polytok.errors import FormatError
from polytok.formats.gguf import _check_byte_tokens


@pytest.mark.parametrize(("types", "texts", "bad"), [
    ([1, 6, 6, 1], ["a", "<0x41>", "<0xff>", "b"], None),  # one run
    ([6, 1, 6], ["<0x41>", "b", "<0x0A>"], None),  # scattered
    ([1, 1], ["a", "b"], None),
    ([1, 6, 6, 1], ["a", "<0x41>", "<0x4G>", "b"], 2),
    ([6, 1, 6, 1], ["<0x41>", "b", "x", "<0x41>"], 2),  # scattered: the run from the first is not all BYTE
    ([1, 6, 1, 6], ["<0x41>", "b<0x41>", "c", "<0x42>"], 1),
    ([6, 6, 1, 6], ["<0x41>", "<0x42>", "c", "<0x4"], 3),
])
@pytest.mark.parametrize("kind", [list, lambda t: array("i", t)])
def test_byte_texts(types: list[int], texts: list[str], bad: int | None, kind: Any) -> None:
    if bad is None:
        _check_byte_tokens(texts, kind(types), "x.gguf")
        return
    with pytest.raises(FormatError, match=rf"token {bad} .* has type BYTE") as info:
        _check_byte_tokens(texts, kind(types), "x.gguf")
    assert info.value.key == f"tokenizer.ggml.token_type[{bad}]"
