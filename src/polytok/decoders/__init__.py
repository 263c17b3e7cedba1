"""Decoders: the stage that turns ids back into text.

Two levels, as in the references:

- `IdsDecoder`, the decode stage of every `Tokenizer`, whatever the format:
  ``decode(ids, skip_special=...)`` and ``token_bytes(id)``. One class per
  reference: `ChainDecoder` (HF tokenizers: ids → pieces → a `Decoder` chain),
  `LlamaDetokenizer` (llama.cpp), `SentencePieceDetokenizer`, `TokenBytes`
  (tiktoken, tekken) and `RWKVDetokenizer` (rwkv's trie tokenizer).
- `Decoder`, HF's components (``tokenizer.json`` ``decoder``): each transforms a
  list of token strings, ``decode_chain(tokens) -> list[str]`` (HF's name and
  contract); `ChainDecoder` joins the result.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from .._config import as_object, join
from ..errors import FormatError


class Decoder(Protocol):
    """An HF decoder component (``tokenizer.json`` ``decoder``)."""

    def decode_chain(self, tokens: list[str]) -> list[str]: ...


class IdsDecoder(Protocol):
    """Ids back to text: the decode stage of a `Tokenizer`. Implementations subclass it
    (`SentencePieceDetokenizer` provides every member instead: its class is made on each .model load).

    ``token_bytes(id)`` is the bytes the token stands for: what decoding writes for it
    in the middle of a sequence, with special tokens written out, before the bytes are
    read as UTF-8 (so a piece of a character is its raw bytes). It is tiktoken's
    ``decode_single_token_bytes`` and llama.cpp's ``token_to_piece(id, lstrip=0,
    special=true)``; each implementation says what it is for its format.
    """

    def decode(self, ids: list[int], *, skip_special: bool) -> str:
        """The text of `ids` (checked: non-negative ints), as the format's reference decodes them.

        Raises:
            DecodeError: an id the reference refuses (naming its position).
        """
        ...

    def token_bytes(self, id: int) -> bytes:
        """The bytes token `id` stands for (see the class notes).

        Raises:
            DecodeError: `id` is outside the vocabulary (naming it).
        """
        ...

    @property
    def clean_spaces(self) -> bool:
        """Whether decoding deletes a space that a later token shows to be before ``?!.,``
        or a contraction (llama.cpp's ``clean_spaces``): a stream then holds text that ends
        in such a space back (`polytok.decoders.stream`). False unless an implementation
        says otherwise."""
        return False


REGISTRY: dict[str, Any] = {}


def from_config(d: Any, path: str = "decoder") -> Decoder:
    d = as_object(d, path)
    kind = d.get("type")
    cls = REGISTRY.get(kind) if isinstance(kind, str) else None
    if cls is None:
        raise FormatError(f"unknown decoder type {kind!r}", key=join(path, "type"))
    return cls.from_config(d, path)  # type: ignore[no-any-return]


class DeferredDecoder:
    """An `IdsDecoder` made the first time it is used: a load that never decodes neither
    imports nor builds it (the `.model` reader's `SentencePieceDetokenizer`). Every member is
    the made decoder's (`IdsDecoder`'s); it pickles and copies as the made decoder."""

    def __init__(self, make: Callable[[], IdsDecoder]) -> None:
        self._make = make

    def made(self) -> IdsDecoder:
        """The decoder, made now if it is not yet (two threads may both make it: the same one)."""
        found = self.__dict__.get("_made")
        if found is None:
            found = self.__dict__["_made"] = self._make()
        return found

    def decode(self, ids: list[int], *, skip_special: bool) -> str:
        return self.made().decode(ids, skip_special=skip_special)

    def token_bytes(self, id: int) -> bytes:
        return self.made().token_bytes(id)

    @property
    def clean_spaces(self) -> bool:
        return self.made().clean_spaces

    def __reduce__(self) -> tuple[Any, ...]:
        return (_same, (self.made(),))


def _same(decoder: IdsDecoder) -> IdsDecoder:
    return decoder


from .bpe_decoder import BPEDecoder  # noqa: E402
from .byte_fallback import ByteFallback  # noqa: E402
from .byte_level import ByteLevel  # noqa: E402
from .ctc import CTC  # noqa: E402
from .fuse import Fuse  # noqa: E402
from .metaspace import Metaspace  # noqa: E402
from .replace import Replace  # noqa: E402
from .sequence import Sequence  # noqa: E402
from .strip import Strip  # noqa: E402
from .wordpiece import WordPiece  # noqa: E402

REGISTRY.update({
    "BPEDecoder": BPEDecoder,
    "ByteFallback": ByteFallback,
    "ByteLevel": ByteLevel,
    "CTC": CTC,
    "Fuse": Fuse,
    "Metaspace": Metaspace,
    "Replace": Replace,
    "Sequence": Sequence,
    "Strip": Strip,
    "WordPiece": WordPiece,
})
