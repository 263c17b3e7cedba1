"""`PostProcessorBase`: what every post-processor inherits.

A post-processor writes HF's list-to-list step twice, ``process_encodings`` (full
path) and ``process_id_lists`` (ids only), and ``added_tokens``; the calls on one
sequence and its pair are defined here from them, as HF ``PostProcessor::process``
does (`_common.process_with`, `_common.ids_with`): ``process(a, b, add_special)``
and ``process_ids(a, b, add_special)``. BertProcessing and TemplateProcessing
override ``process_ids`` with a direct build of the list.
"""

from __future__ import annotations

from abc import ABC, abstractmethod

from ..encoding import Encoding
from ._common import ids_with, process_with


class PostProcessorBase(ABC):
    __slots__ = ()

    @abstractmethod
    def added_tokens(self, is_pair: bool) -> int: ...

    @abstractmethod
    def process_encodings(self, encodings: list[Encoding], add_special: bool) -> list[Encoding]: ...

    @abstractmethod
    def process_id_lists(self, sequences: list[list[int]], add_special: bool) -> list[list[int]]: ...

    def process_ids(self, a: list[int], b: list[int] | None, add_special: bool) -> list[int]:
        return ids_with(self, a, b, add_special)

    def process(self, a: Encoding, b: Encoding | None, add_special: bool) -> Encoding:
        return process_with(self, a, b, add_special)
