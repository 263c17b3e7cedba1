"""The normalizer sentencepiece's trainer runs over every sentence, by rule name.

sentencepiece 0.2.3 (src/sentencepiece_trainer.cc ``PopulateNormalizerSpec``,
src/builder.cc ``GetPrecompiledCharsMap``) fills ``normalizer_spec.precompiled_charsmap``
from the rule named by ``normalization_rule_name``: ``identity`` is the empty
charsmap, the others (``nmt_nfkc``, ``nfkc``, ``nmt_nfkc_cf``, ``nfkc_cf``) are the
compiled tables shipped in ``polytok/data/sentencepiece_charsmaps.bin.xz``
(see its SOURCE note). The trainer's normalizer is the one a loaded model uses,
without user-defined pass-through (src/normalizer.cc, built from the normalizer
and trainer specs only): `Precompiled` with ``match="longest"``.
"""

from __future__ import annotations

import lzma
import struct
from functools import cache
from importlib import resources

from ..normalizers.precompiled import Precompiled

__all__ = ["RULE_NAMES", "charsmap", "trainer_normalizer"]

#: every ``normalization_rule_name`` sentencepiece 0.2.3 knows
RULE_NAMES = ("nmt_nfkc", "nfkc", "nmt_nfkc_cf", "nfkc_cf", "identity")


@cache
def _charsmaps() -> dict[str, bytes]:
    data = lzma.decompress(resources.files("polytok").joinpath("data", "sentencepiece_charsmaps.bin.xz")
                           .read_bytes())
    (count,) = struct.unpack_from("<I", data)
    at = 4
    sizes: list[tuple[str, int]] = []
    for _ in range(count):
        end = data.index(b"\0", at)
        name = data[at:end].decode()
        (size,) = struct.unpack_from("<I", data, end + 1)
        sizes.append((name, size))
        at = end + 5
    maps: dict[str, bytes] = {}
    for name, size in sizes:
        maps[name] = data[at:at + size]
        at += size
    return maps


def charsmap(rule: str) -> bytes:
    """The precompiled charsmap sentencepiece records for `rule` (``identity``: empty).

    Raises:
        ValueError: `rule` is not one of `RULE_NAMES`.
    """
    if rule == "identity":
        return b""
    maps = _charsmaps()
    if rule not in maps:
        raise ValueError(f"normalization_rule_name: no rule named {rule!r} "
                         f"(sentencepiece knows {', '.join(RULE_NAMES)})")
    return maps[rule]


def trainer_normalizer(precompiled_charsmap: bytes, *, add_dummy_prefix: bool, remove_extra_whitespaces: bool,
                       escape_whitespaces: bool, treat_whitespace_as_suffix: bool) -> Precompiled:
    """sentencepiece's ``normalizer::Normalizer(normalizer_spec, trainer_spec)``."""
    return Precompiled(precompiled_charsmap, match="longest", passthrough_walk=False, whitespace="sentencepiece",
                       add_space_prefix=add_dummy_prefix, remove_extra_whitespaces=remove_extra_whitespaces,
                       escape_whitespaces=escape_whitespaces,
                       treat_whitespace_as_suffix=treat_whitespace_as_suffix)
