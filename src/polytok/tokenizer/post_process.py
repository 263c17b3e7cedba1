"""The last stage on ids: truncation, the post-processor's additions and padding.

HF tokenizers 0.23.3 ``tokenizers/src/tokenizer/mod.rs`` ``post_process``: each
sequence is truncated first (leaving room for what the post-processor adds), then
the post-processor adds its tokens, then the result is padded. `encode` and the
long-text counter use it on plain id lists; `encode_full` runs the same order on
`Encoding`s (`offsets`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..encoding import window_ranges
from ..errors import EncodeError

if TYPE_CHECKING:
    from ..post_processors import PostProcessor
    from ..truncation import Padding, Truncation

__all__ = ["PostProcess"]


class PostProcess:
    """`Tokenizer`'s post-processing stage on id lists (a part of the class, in its own module)."""

    truncation: Truncation | None
    padding: Padding | None
    post_processor: PostProcessor | None

    def post_process(self, ids: list[int], pair_ids: list[int] | None = None, *,
                     add_special: bool = True) -> list[int]:
        """The last stage on a sequence's ids (and its pair's): truncation, the post-processor's
        additions and padding, as `encode` applies them (HF ``post_process``)."""
        return self._finish_ids(ids, pair_ids, add_special)

    def added_count(self, is_pair: bool = False, *, add_special: bool = True) -> int:
        """How many ids the post-processor adds to any sequence (or pair), before truncation and padding."""
        return self._reserved(is_pair, add_special)

    def _finish_ids(self, ids_a: list[int], ids_b: list[int] | None, add_special: bool) -> list[int]:
        if self.truncation is not None:
            la, lb = self.truncation.lengths(len(ids_a), None if ids_b is None else len(ids_b),
                                             self._reserved(ids_b is not None, add_special))
            ids_a = self._first_window(ids_a, la)
            if ids_b is not None and lb is not None:
                ids_b = self._first_window(ids_b, lb)
        if self.post_processor is not None:
            ids = self.post_processor.process_ids(ids_a, ids_b, add_special)
        else:
            ids = ids_a + ids_b if ids_b is not None else ids_a
        if self.padding is not None:
            ids = self._pad_ids(ids, self.padding.target([len(ids)]))
        return ids

    def _first_window(self, ids: list[int], keep: int) -> list[int]:
        assert self.truncation is not None
        if keep >= len(ids):
            return ids
        if keep == 0:
            return []
        if self.truncation.stride >= keep:
            raise EncodeError(f"truncation stride ({self.truncation.stride}) must be less than the "
                              f"length left for the sequence ({keep})")
        start, stop = window_ranges(len(ids), keep, self.truncation.stride, self.truncation.direction)[0]
        return ids[start:stop]

    def _reserved(self, is_pair: bool, add_special: bool) -> int:
        if not add_special or self.post_processor is None:
            return 0
        return self.post_processor.added_tokens(is_pair)

    def _pad_ids(self, ids: list[int], target: int) -> list[int]:
        assert self.padding is not None
        k = target - len(ids)
        if k <= 0:
            return ids
        fill = [self.padding.pad_id] * k
        return fill + ids if self.padding.direction == "left" else ids + fill
