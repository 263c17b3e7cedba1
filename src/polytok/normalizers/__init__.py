"""Normalizers: the stage that rewrites the text of each piece between added tokens.

Every normalizer offers two entry points with the same result text:
``normalize(text) -> str`` (the fast path of `Tokenizer.encode`) and
``normalize_aligned(ns)`` (in place on a `NormalizedString`, keeping each
character's original offsets for `encode_full`, HF ``transform_range`` rules).

``from_config(d, path)`` builds one from its ``tokenizer.json`` object; an
unknown ``type`` raises `FormatError` naming the key path. Every normalizer
inherits `NormalizerBase` (``normalizers/base.py``).
"""

from __future__ import annotations

from typing import Any, Protocol

from .._config import as_object, join
from ..errors import FormatError
from ..normalized import NormalizedString


class Normalizer(Protocol):
    def normalize(self, text: str) -> str: ...

    def normalize_aligned(self, ns: NormalizedString) -> None: ...

    def batch_kernel(self) -> tuple[Any, str, bool, bool, bool] | None: ...


REGISTRY: dict[str, Any] = {}


def from_config(d: Any, path: str = "normalizer") -> Normalizer:
    d = as_object(d, path)
    kind = d.get("type")
    if kind is None:
        kind = _guess_untyped(d, path)
    cls = REGISTRY.get(kind) if isinstance(kind, str) else None
    if cls is None:
        raise FormatError(f"unknown normalizer type {kind!r}", key=join(path, "type"))
    return cls.from_config(d, path)  # type: ignore[no-any-return]


# Old files may omit "type"; HF then tries the variants in this order, and a
# variant matches when its required fields are present (normalizers/mod.rs,
# NormalizerUntagged). Types without fields cannot be recognised this way.
_UNTAGGED = (
    ("BertNormalizer", ("clean_text", "handle_chinese_chars", "lowercase")),
    ("Strip", ("strip_left", "strip_right")),
    ("Sequence", ("normalizers",)),
    ("Precompiled", ("precompiled_charsmap",)),
    ("Replace", ("pattern", "content")),
    ("Prepend", ("prepend",)),
)


def _guess_untyped(d: dict[str, Any], path: str) -> str:
    for kind, fields in _UNTAGGED:
        if all(f in d for f in fields):
            return kind
    raise FormatError("missing required key 'type' (and the fields match no normalizer)", key=path)


from .bert_normalizer import BertNormalizer  # noqa: E402
from .byte_level import ByteLevel  # noqa: E402
from .lowercase import Lowercase  # noqa: E402
from .nfc import NFC  # noqa: E402
from .nfd import NFD  # noqa: E402
from .nfkc import NFKC  # noqa: E402
from .nfkd import NFKD  # noqa: E402
from .nmt import Nmt  # noqa: E402
from .precompiled import Precompiled  # noqa: E402
from .prepend import Prepend  # noqa: E402
from .replace import Replace  # noqa: E402
from .sequence import Sequence  # noqa: E402
from .strip import Strip  # noqa: E402
from .strip_accents import StripAccents  # noqa: E402

REGISTRY.update({
    "BertNormalizer": BertNormalizer,
    "Bert": BertNormalizer,
    "ByteLevel": ByteLevel,
    "Lowercase": Lowercase,
    "NFC": NFC,
    "NFD": NFD,
    "NFKC": NFKC,
    "NFKD": NFKD,
    "Nmt": Nmt,
    "Precompiled": Precompiled,
    "Prepend": Prepend,
    "Replace": Replace,
    "Sequence": Sequence,
    "Strip": Strip,
    "StripAccents": StripAccents,
})
