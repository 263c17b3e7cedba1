"""Models: the stage that turns one pre-token into ids.

``tokenize(piece) -> list[int]`` is the fast path; ``tokenize_spans(piece)``
returns ``(id, start, end)`` with character offsets into `piece` for
`encode_full` (a token covering part of a character, e.g. a byte-fallback
piece, covers that whole character, as HF's char offsets do; sentencepiece's
byte fallback instead gives the last byte piece the character and the ones
before it an empty span at its start: `_vocab.spell_bytes`).
``token_value(id, piece, start, end)`` is the string HF shows for that token in
``Encoding.tokens``: usually ``id_to_token(id)``, but e.g. a Unigram unknown
token shows the text it covers.
``tokenize_all(words)`` and ``tokenize_each(words)`` take a piece's words at once
(concatenated ids, or one list per word), and ``caches()`` hands out the bounded word
caches `polytok.parallel` fills from its workers. Every model inherits `ModelBase`
(``models/base.py``), which defines these from the per-word calls.
"""

from __future__ import annotations

from typing import Any, Protocol

from .._config import as_object, join
from ..bounded_cache import BoundedCache
from ..errors import FormatError


class Model(Protocol):
    def tokenize(self, piece: str) -> list[int]: ...

    def tokenize_spans(self, piece: str) -> list[tuple[int, int, int]]: ...

    def tokenize_all(self, words: list[str]) -> list[int]: ...

    def tokenize_each(self, words: list[str]) -> list[list[int]]: ...

    def token_value(self, id: int, piece: str, start: int, end: int) -> str: ...

    def token_to_id(self, token: str) -> int | None: ...

    def id_to_token(self, id: int) -> str | None: ...

    def get_vocab(self) -> dict[str, int]: ...

    def vocab_size(self) -> int: ...

    def caches(self) -> list[BoundedCache[Any]]: ...

    def batch_kernel(self) -> Any: ...


REGISTRY: dict[str, Any] = {}


def from_config(d: Any, path: str = "model") -> Model:
    d = as_object(d, path)
    kind = d.get("type")
    if kind is None:
        kind = _guess_untyped(d)
    cls = REGISTRY.get(kind) if isinstance(kind, str) else None
    if cls is None:
        raise FormatError(f"unknown model type {kind!r}", key=join(path, "type"))
    return cls.from_config(d, path)  # type: ignore[no-any-return]


def _guess_untyped(d: dict[str, Any]) -> str:
    """Old files carry no ``type``; HF then tries each model's fields in turn."""
    if "merges" in d:
        return "BPE"
    if isinstance(d.get("vocab"), list):
        return "Unigram"
    if "continuing_subword_prefix" in d or "max_input_chars_per_word" in d:
        return "WordPiece"
    return "WordLevel"


from .bpe import BPE  # noqa: E402
from .unigram import Unigram  # noqa: E402
from .word_level import WordLevel  # noqa: E402
from .wordpiece import WordPiece  # noqa: E402

REGISTRY.update({"BPE": BPE, "Unigram": Unigram, "WordPiece": WordPiece, "WordLevel": WordLevel})
