"""Ids as callers hand them in: any integer, numpy's included, read as the references read them.

HF tokenizers 0.23.3 (the Python binding's ``Tokenizer.decode(ids: Vec<u32>)`` and
``id_to_token(id: u32)``, converted by pyo3) and tiktoken 0.14.0 (``Encoding.decode``
→ ``CoreBPE::decode_bytes(tokens: Vec<u32>)``, also through pyo3) both read an id
through Python's ``__index__`` protocol (`operator.index`), checked against 0.23.3 and
0.14.0 with numpy 2:

- taken: ``int``, every numpy integer type (``np.int64``, ``np.uint8`` …), and
  ``bool`` (``True`` is id 1, an ``int`` subclass);
- refused: ``float`` (even ``1.0``), ``numpy.float64``, ``str``, ``numpy.bool_``
  (which has no ``__index__``), each with ``TypeError``;
- a negative id: ``OverflowError`` in both.

polytok takes the same ids and raises `DecodeError` (naming the position) where they
raise ``TypeError`` or ``OverflowError``.
"""

from __future__ import annotations

from collections.abc import Iterable
from operator import index
from typing import Any

from .errors import DecodeError

__all__ = ["as_id", "as_ids"]


def as_id(value: Any) -> int:
    """`value` as an int id (any integer type); `DecodeError` for anything else (float, str …)."""
    try:
        return index(value)
    except TypeError:
        raise DecodeError(f"token ids must be integers, not {value!r} ({type(value).__name__})") from None


def as_ids(ids: Iterable[Any]) -> list[int]:
    """`ids` as a list of non-negative ints; `DecodeError` naming the position of the first bad one."""
    if isinstance(ids, (str, bytes)):
        raise DecodeError(f"token ids must be a sequence of integers, not {type(ids).__name__}")
    try:
        items = ids if isinstance(ids, list) else list(ids)
    except TypeError:
        raise DecodeError(f"token ids must be a sequence of integers, not {type(ids).__name__}") from None
    try:
        out = list(map(index, items))
    except TypeError:
        pass
    else:
        if not out or min(out) >= 0:
            return out
    for position, value in enumerate(items):
        try:
            id_ = index(value)
        except TypeError:
            raise DecodeError(f"position {position}: token ids must be integers, not {value!r} "
                              f"({type(value).__name__})") from None
        if id_ < 0:
            raise DecodeError(f"position {position}: token ids must be non-negative, not {id_}")
    raise AssertionError("unreachable: a bad id was found above")
