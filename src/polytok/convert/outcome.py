"""What a conversion to another format writes, and why one is refused.

Every writer of a target format (a Hugging Face folder, a GGUF vocabulary, a
SentencePiece ``.model``, tiktoken ranks, a tekken.json) returns a `Written`
naming the files it wrote and what the reader of that format has to be told
(a tiktoken pattern, for one). A source the target format cannot express
exactly raises `ConversionRefused`, with every reason found, so nothing that
would tokenize differently is ever written without ``--force``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..errors import PolytokError

__all__ = ["Written", "ConversionRefused", "TARGET_FORMATS"]

#: the formats a conversion writes, by the name ``polytok convert --to`` takes
TARGET_FORMATS = ("hf", "gguf", "sentencepiece", "tiktoken", "tekken")


@dataclass
class Written:
    """The files one conversion wrote, and what reading them back needs."""

    #: one of `TARGET_FORMATS`
    target: str
    #: the path a reader of the target format opens (a folder for ``hf``, else the file)
    path: str
    #: every file written, the main one included
    files: list[str] = field(default_factory=list)
    #: what the writer had to decide or approximate, one line each (printed in the report)
    notes: list[str] = field(default_factory=list)
    #: load options the target's reader needs (tiktoken's ``pattern``, for one): ``polytok.load(path, **options)``
    load_options: dict[str, Any] = field(default_factory=dict)


class ConversionRefused(PolytokError, ValueError):
    """The source has a behaviour the target format cannot express; ``reasons`` names each one."""

    def __init__(self, source: str, target: str, reasons: list[str]) -> None:
        self.source = source
        self.target = target
        self.reasons = list(reasons)
        listed = "; ".join(self.reasons) if self.reasons else "no reason given"
        super().__init__(f"{source}: cannot be written as {target} exactly: {listed}")
