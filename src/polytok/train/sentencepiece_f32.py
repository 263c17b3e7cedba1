"""float32 rounding, the way sentencepiece's C++ stores a float.

Rounding each double result to float32 reproduces float32 arithmetic exactly for
``+ - * /`` of float32 operands (double has more than twice float32's precision),
and a float expression mixed with doubles (``std::log``, ``static_cast<double>``)
is rounded only where C++ stores it in a float.
"""

from __future__ import annotations

import math
import struct

__all__ = ["f32"]

_F32 = struct.Struct("<f")
_pack, _unpack = _F32.pack, _F32.unpack


def f32(value: float) -> float:
    """`value` rounded to the nearest float32 (overflow gives an infinity, as in C++)."""
    try:
        return float(_unpack(_pack(value))[0])
    except OverflowError:
        return math.copysign(math.inf, value)

