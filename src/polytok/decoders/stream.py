"""Incremental decoding: text comes out as soon as it is complete.

HF tokenizers 0.23.3 ``tokenizers/src/tokenizer/mod.rs`` (``step_decode_stream``,
``DecodeStream``): the stream re-decodes a small window of ids, keeping the
previous chunk's tokens as left context so decoders that treat the first token
specially (Metaspace, Strip) do not eat spaces, and holds text back while it
ends in U+FFFD (an incomplete UTF-8 sequence). Lengths are compared in UTF-8
bytes, as in Rust. Where HF returns None, `step` returns "".

For a llama.cpp vocabulary whose decoder cleans spaces (`IdsDecoder.clean_spaces`:
a space before ``?!.,`` or ``'s``, and around a lone ``'``, is removed once the
next token shows it), text ending in a space, `` '``, `` 'r`` or `` 'v`` is held
back too, so the stream never emits a space ``llama_detokenize`` would delete.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..errors import DecodeError
from ..token_ids import as_ids

if TYPE_CHECKING:
    from ..tokenizer import Tokenizer


# endings that llama.cpp's clean_spaces may still rewrite when the next token comes
_MAY_BE_CLEANED = (" ", " '", " 'r", " 'v")


def _utf8_len(s: str) -> int:
    return len(s.encode("utf-8", "surrogatepass"))


class DecodeStream:
    """Feed ids one at a time with `step`; each call returns the text they completed."""

    def __init__(self, tokenizer: Tokenizer, skip_special: bool = False) -> None:
        self._tokenizer = tokenizer
        self._skip = skip_special
        self._ids: list[int] = []
        self._prefix = ""
        self._prefix_index = 0
        self._hold_spaces = tokenizer.decoder.clean_spaces

    def step(self, id: int | list[int]) -> str:
        """Add one id (or several); return the new text, or "" while it is incomplete.

        An id may be of any integer type, as for `Tokenizer.decode`; a float, a string or
        a negative id is a `DecodeError` (naming its position among the ids given), and
        the stream is left as it was.
        """
        new_ids = as_ids(id if hasattr(id, "__iter__") and not isinstance(id, (str, bytes)) else [id])
        decode = self._tokenizer.decode
        if not self._prefix and self._ids:
            candidate = decode(self._ids, self._skip)
            if not candidate.endswith("\ufffd") and not (self._hold_spaces and candidate.endswith(_MAY_BE_CLEANED)):
                self._prefix = candidate
                self._prefix_index = len(self._ids)
        self._ids.extend(new_ids)
        text = decode(self._ids, self._skip)
        if _utf8_len(text) <= _utf8_len(self._prefix) or text.endswith("\ufffd"):
            return ""
        if self._hold_spaces and text.endswith(_MAY_BE_CLEANED):
            return ""
        if not text.startswith(self._prefix):
            raise DecodeError(f"decode stream: the text so far {text!r} no longer starts with the "
                              f"text already emitted {self._prefix!r} (at id {self._ids[-1]})")
        new_text = text[len(self._prefix):]
        next_index = len(self._ids) - self._prefix_index
        self._ids = self._ids[self._prefix_index:]
        self._prefix = decode(self._ids, self._skip)
        self._prefix_index = next_index
        return new_text

    def flush(self) -> str:
        """The text still held back, at the end of a stream (HF's stream has no such call).

        What it returns is final: the stream then starts afresh.
        """
        text = self._tokenizer.decode(self._ids, self._skip)
        rest = text[len(self._prefix):] if text.startswith(self._prefix) else ""
        self._ids, self._prefix, self._prefix_index = [], "", 0
        return rest
