"""sentencepiece's decoder: ids to text, as ``SentencePieceProcessor.decode(ids)``.

Stage: decode (a detokenizer: it takes over `Tokenizer.decode`). Built by the
sentencepiece reader from the pieces, their types and the specs.

Reproduces sentencepiece 0.2.3, ``sentencepiece_processor.cc``
(``DecodeOptimized`` for ids, with ``IsValidDecodeUTF8`` of ``util.cc``):

* an id outside the vocabulary raises (sentencepiece: ``OUT_OF_RANGE``); here
  `DecodeError` names the position;
* ``BYTE`` pieces queue their byte; the queue is flushed before any other
  piece and at the end, decoded one character at a time, each byte of an
  invalid sequence becoming one U+FFFD (not Python's one per maximal subpart);
* ``CONTROL`` pieces give nothing; ``UNKNOWN`` gives `unk_surface`
  (``trainer_spec.unk_surface`` when the file sets it, else ``" ⁇ "``);
* other pieces give their text with every ``"▁"`` as a space; while nothing has
  been written yet and no leading ``"▁"`` was taken, a piece's leading ``"▁"``
  is dropped when add_dummy_prefix or remove_extra_whitespaces is set. With
  remove_extra_whitespaces the drop does not count as taken, so every piece
  until the first visible text loses its leading ``"▁"``. treat_whitespace_as_suffix
  and escape_whitespaces play no part;
* the denormalizer (``denormalizer_spec``, when it has a charsmap) runs last
  over the whole text.

``token_bytes(id)``, which sentencepiece has no call for, is the piece
(``id_to_piece``) as llama.cpp's ``token_to_piece(id, lstrip=0, special=true)``
renders the same vocabulary (``llama-vocab.cpp``, SPM case): a ``BYTE`` piece is
its byte, a ``CONTROL`` or ``UNKNOWN`` piece its own text (``"<s>"``, ``"<unk>"``),
any other piece its text with every ``"▁"`` as a space (what decode writes for it
after other text; llama.cpp keeps a ``USER_DEFINED`` piece's ``"▁"``, sentencepiece's
decode does not, and this follows sentencepiece).
"""

from __future__ import annotations

import codecs
import operator
from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..errors import DecodeError

if TYPE_CHECKING:  # a Protocol class costs its creation at import, on every .model load
    from typing import Protocol

    class _Normalizer(Protocol):
        def normalize(self, text: str) -> str: ...

NORMAL, UNKNOWN, CONTROL, USER_DEFINED, UNUSED, BYTE = 1, 2, 3, 4, 5, 6
_SPACE = "\u2581"
_ERRORS = "polytok-sentencepiece-bytes"


def _one_byte_replaced(exc: UnicodeError) -> tuple[str, int]:
    """Each byte that does not start a valid character is one U+FFFD (``IsValidDecodeUTF8``)."""
    assert isinstance(exc, UnicodeDecodeError)
    return "\ufffd", exc.start + 1


codecs.register_error(_ERRORS, _one_byte_replaced)


class SentencePieceDetokenizer:
    """``SentencePieceProcessor.decode(ids)``: an `IdsDecoder` by its members, not by subclassing
    (a subclass of a Protocol costs its creation at import, on every .model load).

    Args:
        pieces: the piece of each id.
        types: the ``ModelProto.SentencePiece.Type`` of each id.
        unk_surface: the text of an unknown piece.
        strip_first_space: add_dummy_prefix or remove_extra_whitespaces.
        remove_extra_whitespaces: the normalizer flag (see the module notes).
        denormalizer: the ``denormalizer_spec`` normalizer, or None.
    """

    def __init__(self, pieces: Sequence[str], types: Sequence[int], *, unk_surface: str, strip_first_space: bool,
                 remove_extra_whitespaces: bool, denormalizer: _Normalizer | None = None) -> None:
        self._pieces = pieces
        self._types = types
        self._unk_surface = unk_surface
        self._strip_first = strip_first_space
        self._remove_extra = remove_extra_whitespaces
        self._denormalizer = denormalizer

    @property
    def clean_spaces(self) -> bool:
        """False: sentencepiece's decode deletes no space (`IdsDecoder.clean_spaces`)."""
        return False

    def token_bytes(self, id: int) -> bytes:
        if not 0 <= id < len(self._pieces):
            raise DecodeError(f"token id {id} is outside the vocabulary (0..{len(self._pieces) - 1})")
        piece, kind = self._pieces[id], self._types[id]
        if kind == BYTE:
            return bytes([int(piece[3:5], 16)])
        if kind in (CONTROL, UNKNOWN):
            return piece.encode("utf-8")
        return piece.replace(_SPACE, " ").encode("utf-8")

    def decode(self, ids: list[int], *, skip_special: bool) -> str:
        """The text of `ids`; `skip_special` has no effect (control pieces never show)."""
        pieces, types, size = self._pieces, self._types, len(self._pieces)
        out: list[str] = []
        queue = bytearray()
        written = False  # sentencepiece's !detokenized->empty()
        at_start = True  # is_bos_ws
        for position, item in enumerate(ids):
            id_ = _index(item)
            if id_ is None or not 0 <= id_ < size:
                raise DecodeError(f"position {position}: invalid id {item!r} (the vocabulary has {size} pieces)")
            kind = types[id_]
            if kind == BYTE:
                queue.append(int(pieces[id_][3:5], 16))
                continue
            if queue:
                written = _flush(queue, out) or written
            if written:
                at_start = False
            if kind == CONTROL:
                continue
            piece = pieces[id_]
            took_space = False
            if at_start and self._strip_first and piece.startswith(_SPACE):
                piece = piece[1:]
                took_space = not self._remove_extra
            text = self._unk_surface if kind == UNKNOWN else piece.replace(_SPACE, " ")
            if text:
                out.append(text)
                written = True
            if took_space or written:
                at_start = False
        if queue:
            _flush(queue, out)
        result = "".join(out)
        return self._denormalizer.normalize(result) if self._denormalizer is not None else result


def _index(item: object) -> int | None:
    """`item` as an int id (ints and integer types such as numpy's), or None."""
    if isinstance(item, bool):
        return None
    try:
        return operator.index(item)  # type: ignore[arg-type]
    except TypeError:
        return None


def _flush(queue: bytearray, out: list[str]) -> bool:
    """Decode and empty the byte queue; True when it gave text."""
    text = queue.decode("utf-8", _ERRORS)
    queue.clear()
    if text:
        out.append(text)
    return bool(text)
