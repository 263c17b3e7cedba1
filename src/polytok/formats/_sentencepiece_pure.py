"""The sentencepiece reader's builds and checks for the pure reader's lists (`ModelProto` without
``vocab``): loaded only when they run, since a load read by ``spm_model`` has its pieces checked in C
(``Vocab.usual``, ``Vocab.joins_space``) and its models' arguments deferred to their first use.

Part of the sentencepiece reader (see `polytok.formats.sentencepiece` for the rules and their
sources; `_sentencepiece_build` for the rest of the build).
"""

from __future__ import annotations

import math
from typing import Any

import regex

from ._sentencepiece_build import _RESERVED, _SPACE, _fail
from .sentencepiece import UNUSED, USER_DEFINED, ModelProto, as_float32


def check_every_piece(proto: ModelProto) -> None:
    """The checks that look at every piece (empty, too long, NUL, defined twice)."""
    pieces, types = proto.pieces, proto.types
    if not all(pieces):
        raise _fail(proto, "piece must not be empty", f"pieces[{pieces.index('')}]")
    if max(map(len, pieces), default=0) >= 2000:
        long = next((i for i, p in enumerate(pieces) if len(p.encode("utf-8")) >= 8000), None)
        if long is not None:
            raise _fail(proto, "piece is too long", f"pieces[{long}]")
    if "\0" in "".join(pieces):
        nul = next((i for i, (p, t) in enumerate(zip(pieces, types)) if "\0" in p and (p != "\0" or t != UNUSED)),
                   None)
        if nul is not None:
            raise _fail(proto, "piece must not include a NUL character", f"pieces[{nul}]")
    if len(set(pieces)) != len(pieces):
        _check_duplicates(proto)


def _check_duplicates(proto: ModelProto) -> None:
    """A piece defined twice (BPE: anywhere; others: twice among the reserved or twice among the rest)."""
    reserved_map = proto.model_type != "bpe"
    seen: dict[tuple[bool, str], int] = {}
    for index, (piece, kind) in enumerate(zip(proto.pieces, proto.types)):
        if piece == "\0" and kind == UNUSED:
            continue
        group = (reserved_map and kind in _RESERVED, piece)
        if group in seen:
            raise _fail(proto, f"{piece!r} is already defined (pieces[{seen[group]}])", f"pieces[{index}]")
        seen[group] = index


def joins_space_to_text(proto: ModelProto, odd: list[int]) -> bool:
    """Whether a usable piece holds a "▁" right after another character (a piece such a cut would split).

    Weaker than sentencepiece's ``has_internal_space_symbol``: runs of "▁" alone (Mistral's
    whitespace pieces) do not count, since the cut goes before a whole run.
    """
    pieces, types = proto.pieces, proto.types
    kept: list[str] = []
    start = 0
    for i in odd:
        if types[i] in _RESERVED:
            kept += pieces[start:i]
            start = i + 1
    usable = "\0" + "\0".join(kept + pieces[start:] if start else pieces)
    # Every "▁" is in a run that starts a piece exactly when the runs after a "\0" hold them all:
    # the runs of k or more are counted by "\0" and k "▁" (str.count, no walk in Python).
    leading, run = 0, "\0\u2581"
    while len(run) <= 64:
        found = usable.count(run)
        if not found:
            return usable.count(_SPACE) != leading
        leading += found
        run += _SPACE
    return regex.search("[^\0\u2581]\u2581", usable) is not None


def bpe_arguments(proto: ModelProto, user_defined: list[str], odd: list[int]) -> dict[str, Any]:
    """`SPM`'s vocabulary and options of sentencepiece's rules (`_bpe`)."""
    types, n = proto.types, len(proto.types)
    # sentencepiece orders -0.0 below 0.0 (bit-pattern compare): the tiniest negative double keeps that order
    scores = proto.scores
    zeros = indices(scores, 0.0)  # == finds -0.0 too
    if any(math.copysign(1.0, scores[i]) < 0 for i in zeros):
        scores = list(scores)
        for i in zeros:
            scores[i] = -5e-324 if math.copysign(1.0, scores[i]) < 0 else scores[i]
    mergeable = [True] * n
    unused = [False] * n
    for i in odd:
        mergeable[i] = types[i] in (USER_DEFINED, UNUSED)
        unused[i] = types[i] == UNUSED
    return {"vocab": list(zip(proto.pieces, scores)), "mergeable": mergeable, "unused": unused,
            "whole_symbols": user_defined}


def indices(values: list[Any], value: Any) -> list[int]:
    """Every index of `value` in `values` (list.index: no Python step per other item)."""
    found: list[int] = []
    at = -1
    while True:
        try:
            at = values.index(value, at + 1)
        except ValueError:
            return found
        found.append(at)


def unigram_arguments(proto: ModelProto, odd: list[int]) -> dict[str, Any]:
    """`Unigram`'s vocabulary (user-defined pieces scored as sentencepiece scores them) and matchable pieces."""
    pieces, types = proto.pieces, proto.types
    scores = list(proto.scores)
    matchable = [True] * len(types)
    for index in odd:
        if types[index] == USER_DEFINED:
            scores[index] = as_float32(0.1 * (len(pieces[index].encode("utf-8")) - 1))
        else:
            matchable[index] = False
    return {"vocab": list(zip(pieces, scores)), "matchable": matchable, "zero_score": None}
