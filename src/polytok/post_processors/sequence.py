"""Sequence post-processor: several post-processors piped.

Stage: post-processor. JSON: ``{"type": "Sequence", "processors": [post_processor, ...]}``.

Reproduces HF tokenizers 0.23.3 ``tokenizers/src/processors/sequence.rs``
(``Sequence::process_encodings``, ``added_tokens``): the list of encodings
goes through each processor's ``process_encodings`` in turn (so a processor
after TemplateProcessing sees one encoding per template piece), and
``added_tokens`` is the sum. Llama-3.1 uses
``[ByteLevel(trim_offsets=false), TemplateProcessing]``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .._config import join, required
from ..encoding import Encoding
from .base import PostProcessorBase

if TYPE_CHECKING:
    from . import PostProcessor


class Sequence(PostProcessorBase):
    def __init__(self, processors: list[PostProcessor]) -> None:
        self.processors = list(processors)

    @classmethod
    def from_config(cls, d: dict[str, Any], path: str) -> Sequence:
        from . import from_config

        items: list[Any] = required(d, "processors", list, path)
        key = join(path, "processors")
        return cls([from_config(item, join(key, i)) for i, item in enumerate(items)])

    def added_tokens(self, is_pair: bool) -> int:
        return sum(p.added_tokens(is_pair) for p in self.processors)

    def process_id_lists(self, sequences: list[list[int]], add_special: bool) -> list[list[int]]:
        for p in self.processors:
            sequences = p.process_id_lists(sequences, add_special)
        return sequences

    def process_encodings(self, encodings: list[Encoding], add_special: bool) -> list[Encoding]:
        for p in self.processors:
            encodings = p.process_encodings(encodings, add_special)
        return encodings
