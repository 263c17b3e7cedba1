"""Pre-tokenizers: the stage that cuts each normalized piece into words for the model.

Every pre-tokenizer offers two entry points with the same pieces:
``pre_tokenize(text, at_origin) -> list[str]`` (fast path; `at_origin` tells
whether the piece starts at original offset 0, which only Metaspace's
``prepend_scheme="first"`` reads) and
``pre_tokenize_aligned(ns) -> list[NormalizedString]`` (offsets path).
Empty pieces are dropped, as HF ``PreTokenizedString::split`` does.

``exact_without_alignment`` is False for the rare pipelines whose fast path
cannot know a piece's original offset (Metaspace ``first`` after a splitting
pre-tokenizer); the tokenizer then encodes through the aligned path.
Sequence computes it from two attributes of its members: ``splits_pieces``
(the member re-slices its input, so a piece's original start can move) and
``reads_origin`` (the member looks at it). ``splits_empty_text`` says an empty
text is cut into pieces too. ``pre_tokenize_each(pieces)`` pre-tokenizes several
pieces, none at the origin, in one call (Sequence's call for a member that ignores
`at_origin`), and ``caches()`` hands out the bounded word caches `polytok.parallel`
fills from its workers. Every pre-tokenizer inherits `PreTokenizerBase`
(``pre_tokenizers/base.py``), which gives each of these its default.
"""

from __future__ import annotations

from typing import Any, Protocol

from .._config import as_object, join
from ..bounded_cache import BoundedCache
from ..errors import FormatError
from ..normalized import NormalizedString


class PreTokenizer(Protocol):
    exact_without_alignment: bool
    splits_pieces: bool
    reads_origin: bool
    splits_empty_text: bool

    def pre_tokenize(self, text: str, at_origin: bool) -> list[str]: ...

    def pre_tokenize_aligned(self, ns: NormalizedString) -> list[NormalizedString]: ...

    def pre_tokenize_each(self, pieces: list[str]) -> list[str]: ...

    def caches(self) -> list[BoundedCache[Any]]: ...

    def batch_split(self) -> str | int | None: ...


REGISTRY: dict[str, Any] = {}


def from_config(d: Any, path: str = "pre_tokenizer") -> PreTokenizer:
    d = as_object(d, path)
    kind = d.get("type")
    if kind is None:
        raise FormatError("missing required key 'type'", key=path)
    cls = REGISTRY.get(kind) if isinstance(kind, str) else None
    if cls is None:
        raise FormatError(f"unknown pre-tokenizer type {kind!r}", key=join(path, "type"))
    return cls.from_config(d, path)  # type: ignore[no-any-return]


from .bert_pre_tokenizer import BertPreTokenizer  # noqa: E402
from .byte_level import ByteLevel  # noqa: E402
from .char_delimiter_split import CharDelimiterSplit  # noqa: E402
from .digits import Digits  # noqa: E402
from .fixed_length import FixedLength  # noqa: E402
from .metaspace import Metaspace  # noqa: E402
from .punctuation import Punctuation  # noqa: E402
from .sequence import Sequence  # noqa: E402
from .split import Split  # noqa: E402
from .unicode_scripts import UnicodeScripts  # noqa: E402
from .whitespace import Whitespace  # noqa: E402
from .whitespace_split import WhitespaceSplit  # noqa: E402

REGISTRY.update({
    "BertPreTokenizer": BertPreTokenizer,
    "ByteLevel": ByteLevel,
    "CharDelimiterSplit": CharDelimiterSplit,
    "Digits": Digits,
    "FixedLength": FixedLength,
    "Metaspace": Metaspace,
    "Punctuation": Punctuation,
    "Sequence": Sequence,
    "Split": Split,
    "UnicodeScripts": UnicodeScripts,
    "Whitespace": Whitespace,
    "WhitespaceSplit": WhitespaceSplit,
})
