"""Truncation and padding parameters, and the length arithmetic HF applies before post-processing.

HF tokenizers 0.23.3: ``tokenizers/src/utils/truncation.rs``
(``truncate_encodings``: LongestFirst / OnlyFirst / OnlySecond) and
``tokenizers/src/utils/padding.rs`` (``pad_encodings``: BatchLongest / Fixed,
``pad_to_multiple_of``). The windows themselves are cut by
`polytok.encoding.truncate`.

`whole_documents` gives a tokenizer without either, for counting and corpus
tokenization: a file's ``max_length`` is about model inputs, not about how long a
document is (``polytok count`` of a long file would print ``max_length``).

Padding lengths are capped at `MAX_PADDING` (2**24 tokens), a deliberate departure:
HF takes any ``usize`` and then allocates it, so a file's ``Fixed: 1000000000``
costs gigabytes on the first ``encode``; polytok refuses it when the file is read
(`FormatError` naming the key) or when a `Padding` is made (`EncodeError`). No model
has a context near 16.7M tokens.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from ._config import optional, required
from .errors import EncodeError, FormatError

if TYPE_CHECKING:
    from .tokenizer import Tokenizer

Strategy = Literal["longest_first", "only_first", "only_second"]
Direction = Literal["left", "right"]

_STRATEGIES = {"LongestFirst": "longest_first", "OnlyFirst": "only_first", "OnlySecond": "only_second"}
_DIRECTIONS = {"Left": "left", "Right": "right"}
MAX_PADDING = 1 << 24  # tokens; see the module notes


@dataclass(frozen=True, slots=True)
class Truncation:
    """Cut encodings to `max_length` tokens (special tokens included), HF ``TruncationParams``."""

    max_length: int
    stride: int = 0
    strategy: Strategy = "longest_first"
    direction: Direction = "right"

    @classmethod
    def from_config(cls, d: dict[str, Any], path: str = "truncation") -> Truncation:
        strategy = optional(d, "strategy", str, path, "LongestFirst")
        direction = optional(d, "direction", str, path, "Right")
        if strategy not in _STRATEGIES:
            raise FormatError(f"unknown truncation strategy {strategy!r}", key=f"{path}.strategy")
        if direction not in _DIRECTIONS:
            raise FormatError(f"unknown truncation direction {direction!r}", key=f"{path}.direction")
        return cls(required(d, "max_length", int, path), optional(d, "stride", int, path, 0),
                   _STRATEGIES[strategy], _DIRECTIONS[direction])  # type: ignore[arg-type]

    def lengths(self, n_a: int, n_b: int | None, reserved: int) -> tuple[int, int | None]:
        """How many tokens of each sequence survive, given `reserved` special tokens."""
        max_length = self.max_length - reserved
        if max_length < 0:
            # subtle: HF subtracts in unsigned arithmetic, which wraps to a huge budget,
            # so nothing is truncated at all.
            return n_a, n_b
        if max_length == 0:
            return 0, (0 if n_b is not None else None)
        total = n_a + (n_b or 0)
        if total <= max_length:
            return n_a, n_b
        if self.strategy == "longest_first":
            if n_b is None:
                return max_length, None
            return _longest_first(n_a, n_b, max_length)
        excess = total - max_length
        if self.strategy == "only_second" and n_b is None:
            raise EncodeError("truncation strategy only_second needs a pair of sequences")
        target = n_a if self.strategy == "only_first" else n_b
        assert target is not None
        if target <= excess:
            raise EncodeError("the sequence to truncate is too short to respect max_length")
        if self.strategy == "only_first":
            return n_a - excess, n_b
        return n_a, target - excess


def _longest_first(n_a: int, n_b: int, max_length: int) -> tuple[int, int]:
    n1, n2, swap = (n_b, n_a, True) if n_a > n_b else (n_a, n_b, False)
    n2 = n1 if n1 > max_length else max(n1, max_length - n1)
    if n1 + n2 > max_length:
        n1 = max_length // 2
        n2 = n1 + max_length % 2
    return (n2, n1) if swap else (n1, n2)


@dataclass(frozen=True, slots=True)
class Padding:
    """Pad encodings, HF ``PaddingParams``. `length` None means the longest of the batch."""

    length: int | None = None
    direction: Direction = "right"
    pad_to_multiple_of: int | None = None
    pad_id: int = 0
    pad_type_id: int = 0
    pad_token: str = "[PAD]"

    def __post_init__(self) -> None:
        for name in ("length", "pad_to_multiple_of"):
            problem = _padding_problem(getattr(self, name))
            if problem:
                raise EncodeError(f"Padding {name} {problem}")

    @classmethod
    def from_config(cls, d: dict[str, Any], path: str = "padding") -> Padding:
        strategy = required(d, "strategy", (str, dict), path)
        if strategy == "BatchLongest":
            length = None
        elif isinstance(strategy, dict) and isinstance(strategy.get("Fixed"), int):
            length = strategy["Fixed"]
        else:
            raise FormatError(f"unknown padding strategy {strategy!r}", key=f"{path}.strategy")
        direction = required(d, "direction", str, path)
        if direction not in _DIRECTIONS:
            raise FormatError(f"unknown padding direction {direction!r}", key=f"{path}.direction")
        multiple = optional(d, "pad_to_multiple_of", int, path)
        for value, key in ((length, f"{path}.strategy.Fixed"), (multiple, f"{path}.pad_to_multiple_of")):
            problem = _padding_problem(value)
            if problem:
                raise FormatError(problem, key=key)
        return cls(length, _DIRECTIONS[direction],  # type: ignore[arg-type]
                   multiple, required(d, "pad_id", int, path),
                   required(d, "pad_type_id", int, path), required(d, "pad_token", str, path))

    def target(self, lengths: list[int]) -> int:
        """The padded length for a batch with these lengths."""
        n = self.length if self.length is not None else max(lengths, default=0)
        m = self.pad_to_multiple_of
        if m and n % m:
            n += m - n % m
        return n


def _padding_problem(value: int | None) -> str | None:
    if value is None or 0 <= value <= MAX_PADDING:
        return None
    if value < 0:
        return f"{value} is negative (HF reads an unsigned integer)"
    size = str(value) if value.bit_length() < 64 else f"2**{value.bit_length() - 1} or more"
    return f"{size} tokens is more than polytok pads to ({MAX_PADDING}, 2**24; HF would allocate it)"


def left_out(tok: Tokenizer) -> str | None:
    """`tok`'s truncation and padding in words ("truncation to 50 tokens"), or None when it has neither."""
    parts = []
    if tok.truncation is not None:
        parts.append(f"truncation to {tok.truncation.max_length} tokens")
    if tok.padding is not None:
        length = tok.padding.length
        parts.append("padding" + (f" to {length} tokens" if length is not None else ""))
    return " and ".join(parts) or None


def whole_documents(tok: Tokenizer) -> Tokenizer:
    """`tok` without truncation and padding: a shallow copy (`tok` is left as it is), or `tok`
    itself when it has neither. Its ids are HF's with ``no_truncation()`` and ``no_padding()``."""
    if tok.truncation is None and tok.padding is None:
        return tok
    whole = copy.copy(tok)
    whole.truncation = whole.padding = None
    return whole
