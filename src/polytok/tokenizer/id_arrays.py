"""Ids handed in as arrays: numpy arrays and torch tensors (1-d for one sequence, 2-d for a batch).

transformers 5.24.0 ``PreTrainedTokenizerBase.decode`` / ``batch_decode`` turn an
array or tensor into Python lists first (``utils/generic.py`` ``to_py_obj``: its
``tolist()``), then hand the ints to HF tokenizers. polytok does the same, by duck
typing (an object with ``ndim`` and ``tolist``), so neither numpy nor torch is
imported; the lists then go through `polytok.token_ids.as_ids`, which names the
position of a value that is not an integer. What follows from ``tolist``:

- any integer dtype is taken (``int8`` … ``uint64``; values become Python ints);
- a bool array gives ``True``/``False``, taken as ids 1 and 0 — as transformers takes
  them (its ``tolist`` makes Python bools, which are ints);
- a float array gives floats: refused, naming the position, as transformers refuses
  them (``TypeError``); an empty float array is an empty sequence, as there.

polytok refuses what transformers reshapes silently: a 0-d array or a 2-d one given
to `Tokenizer.decode` (transformers decodes the first as one id and returns a list for
the second) and anything but a 2-d array or a sequence of sequences given to
`Tokenizer.decode_batch`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..errors import DecodeError

__all__ = ["sequence_ids", "batch_ids", "decode_batch"]


def _is_array(value: Any) -> bool:
    return hasattr(value, "ndim") and hasattr(value, "tolist")


def sequence_ids(value: Any) -> Any:
    """`value` with a 1-d array or tensor made a list (anything else as it is, for `as_ids`)."""
    if not _is_array(value):
        return value
    if value.ndim != 1:
        hint = "; decode_batch takes a 2-d one" if value.ndim == 2 else ""
        raise DecodeError(f"token ids must be a 1-d array, not a {value.ndim}-d {type(value).__name__}{hint}")
    return value.tolist()


def batch_ids(value: Any) -> list[Any]:
    """The rows of `value`: a 2-d array or tensor, or a sequence whose items are sequences of ids."""
    if _is_array(value):
        if value.ndim != 2:
            hint = "; decode takes a 1-d one" if value.ndim == 1 else ""
            raise DecodeError(f"a batch of token ids must be a 2-d array, not a {value.ndim}-d "
                              f"{type(value).__name__}{hint}")
        return value.tolist()  # type: ignore[no-any-return]
    if isinstance(value, (str, bytes)) or not hasattr(value, "__iter__"):
        raise DecodeError(f"a batch of token ids must be a sequence of sequences, not {type(value).__name__}")
    rows = list(value)
    for i, row in enumerate(rows):
        if isinstance(row, (str, bytes)) or not (hasattr(row, "__iter__") or _is_array(row)):
            raise DecodeError(f"sequence {i}: expected a sequence of token ids, not {row!r:.40} "
                              f"({type(row).__name__}); decode takes one sequence")
    return rows


def decode_batch(decode: Callable[[Any, bool], str], sequences: Any, skip_special: bool) -> list[str]:
    """`decode` of each row of `sequences` (`batch_ids`); an error names the row."""
    out = []
    for i, ids in enumerate(batch_ids(sequences)):
        try:
            out.append(decode(ids, skip_special))
        except DecodeError as exc:
            raise DecodeError(f"sequence {i}: {exc}") from None
    return out
