"""Decoders: the stage that turns token strings back into text.

``decode_chain(tokens) -> list[str]`` transforms the list (HF's name and
contract); the tokenizer joins the result.
"""

from __future__ import annotations

from typing import Any, Protocol

from .._config import as_object, join
from ..errors import FormatError


class Decoder(Protocol):
    def decode_chain(self, tokens: list[str]) -> list[str]: ...


REGISTRY: dict[str, Any] = {}


def from_config(d: Any, path: str = "decoder") -> Decoder:
    d = as_object(d, path)
    kind = d.get("type")
    cls = REGISTRY.get(kind) if isinstance(kind, str) else None
    if cls is None:
        raise FormatError(f"unknown decoder type {kind!r}", key=join(path, "type"))
    return cls.from_config(d, path)  # type: ignore[no-any-return]


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
