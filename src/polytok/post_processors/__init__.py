"""Post-processors: the stage that adds special tokens and sets type ids.

``process_ids(a, b, add_special) -> list[int]`` is the fast path;
``process(a, b, add_special) -> Encoding`` is the full path (HF
``PostProcessor::process``: sets sequence ids and type ids, then
``process_encodings``, then concatenates, overflows included).
``added_tokens(is_pair)`` is the count truncation reserves.

Every processor also offers HF's list-to-list step, ``process_encodings``,
and its id-only twin ``process_id_lists``, which ``Sequence`` pipes; every
processor inherits `PostProcessorBase` (``post_processors/base.py``), which
defines ``process`` and ``process_ids`` from them.

``from_config`` follows HF's untagged parsing (``processors/mod.rs``,
``PostProcessorWrapper``): the variants are tried in the order
RobertaProcessing, BertProcessing, ByteLevel, TemplateProcessing, Sequence, and
only ByteLevel and Sequence compare the ``type`` value, so the first variant
whose keys fit wins (a ``BertProcessing`` object that also has
``trim_offsets`` and ``add_prefix_space`` loads as RobertaProcessing; a
``RobertaProcessing`` without them loads as BertProcessing). polytok also
requires ``type`` to name one of the five, as every real file does.
"""

from __future__ import annotations

from typing import Any, Protocol

from .._config import as_object, join
from ..encoding import Encoding
from ..errors import FormatError


class PostProcessor(Protocol):
    def added_tokens(self, is_pair: bool) -> int: ...

    def process_ids(self, a: list[int], b: list[int] | None, add_special: bool) -> list[int]: ...

    def process(self, a: Encoding, b: Encoding | None, add_special: bool) -> Encoding: ...

    def process_encodings(self, encodings: list[Encoding], add_special: bool) -> list[Encoding]: ...

    def process_id_lists(self, sequences: list[list[int]], add_special: bool) -> list[list[int]]: ...


REGISTRY: dict[str, Any] = {}

_UNTAGGED_ORDER = ("RobertaProcessing", "BertProcessing", "ByteLevel", "TemplateProcessing", "Sequence")
_TAG_CHECKED = frozenset({"ByteLevel", "Sequence"})


def from_config(d: Any, path: str = "post_processor") -> PostProcessor:
    d = as_object(d, path)
    kind = d.get("type")
    if not isinstance(kind, str) or kind not in REGISTRY:
        raise FormatError(f"unknown post-processor type {kind!r}", key=join(path, "type"))
    declared_error: FormatError | None = None
    for name in _UNTAGGED_ORDER:
        if name in _TAG_CHECKED and name != kind:
            continue
        try:
            return REGISTRY[name].from_config(d, path)  # type: ignore[no-any-return]
        except FormatError as exc:
            if name == kind:
                declared_error = exc
    assert declared_error is not None
    raise declared_error


from .bert import BertProcessing  # noqa: E402
from .byte_level import ByteLevel  # noqa: E402
from .roberta import RobertaProcessing  # noqa: E402
from .sequence import Sequence  # noqa: E402
from .template import TemplateProcessing  # noqa: E402

REGISTRY.update({
    "BertProcessing": BertProcessing,
    "ByteLevel": ByteLevel,
    "RobertaProcessing": RobertaProcessing,
    "Sequence": Sequence,
    "TemplateProcessing": TemplateProcessing,
})
