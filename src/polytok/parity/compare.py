"""`compare`: run two tokenizers (or a tokenizer and a reference engine) over texts and report
where they first diverge, aligned, with the known reasons (`polytok.parity.reasons`) and,
with ``explain=True``, the first pipeline stage that differs (`polytok.parity.stages`).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from typing import Any

from ..errors import EncodeError, PolytokError
from ..tokenizer import Tokenizer
from .align import Region, first_divergence
from .engines import PolytokSide, Side
from .reasons import Case, reasons_for
from .stages import first_stage

__all__ = ["TextResult", "CompareReport", "compare", "as_side"]

_CONTEXT = 2


@dataclass
class TextResult:
    """One text's result: identical, or its first divergence."""

    name: str
    text: str
    identical: bool
    n_a: int
    n_b: int
    region: Region | None = None
    kind: str | None = None
    reasons: list[str] = field(default_factory=list)
    stage: str | None = None
    stage_detail: str | None = None
    window_a: list[tuple[int, str, bool]] = field(default_factory=list)
    window_b: list[tuple[int, str, bool]] = field(default_factory=list)
    #: what a side raised instead of encoding (both raising counts as agreeing)
    error: str | None = None


@dataclass
class CompareReport:
    """Every text's result, and the two sides' labels."""

    a: str
    b: str
    mode: str
    results: list[TextResult]

    @property
    def diverging(self) -> list[TextResult]:
        return [r for r in self.results if not r.identical]

    def summary(self) -> dict[str, Any]:
        div = self.diverging
        return {"texts": len(self.results), "identical": len(self.results) - len(div), "diverging": len(div),
                "kinds": dict(Counter(r.kind or "?" for r in div)),
                "reasons": dict(Counter(x for r in div for x in (r.reasons or ["(none known)"]))),
                "stages": dict(Counter(r.stage for r in div if r.stage))}

    def to_json(self) -> str:
        return json.dumps({"a": self.a, "b": self.b, "mode": self.mode, "summary": self.summary(),
                           "diverging": [asdict(r) for r in self.diverging]}, ensure_ascii=False)

    def render(self, limit: int = 20) -> str:
        from ._compare_render import render

        return render(self, limit)


def as_side(x: Side | Tokenizer | str, label: str) -> Side:
    """A `Side` from a Side, a polytok Tokenizer, or a path (loaded by polytok)."""
    if isinstance(x, Side):
        return x
    if isinstance(x, Tokenizer):
        return PolytokSide(x, label)
    from ..formats import load

    return PolytokSide(load(x), label)


def compare(a: Side | Tokenizer | str, b: Side | Tokenizer | str, texts: Iterable[str | tuple[str, str]], *,
            explain: bool = False, add_special: bool = True, special: str | None = None) -> CompareReport:
    """Compare two tokenizers over `texts`.

    Args:
        a, b: polytok tokenizers, paths (loaded by polytok), or `Side` objects
            (reference engines, `polytok.parity.reference_side`).
        texts: strings, or (name, text) pairs.
        explain: for each divergence, find the first differing stage (both sides
            need a polytok pipeline; a reference side uses polytok's reading of
            its file when that gives the engine's ids on the text).
        add_special, special: the mode, as for `Tokenizer.encode`; special None is
            each side's default.

    Returns:
        A `CompareReport`.
    """
    side_a, side_b = as_side(a, "A"), as_side(b, "B")
    framing = (_framing(side_a, add_special, special), _framing(side_b, add_special, special))
    results = []
    for index, item in enumerate(texts):
        name, text = item if isinstance(item, tuple) else (str(index + 1), item)
        results.append(_one(side_a, side_b, name, text, explain, add_special, special, framing))
    mode = f"add_special={add_special} special={special or 'default'}"
    return CompareReport(_describe(side_a), _describe(side_b), mode, results)


def _describe(side: Side) -> str:
    return f"{side.path} ({side.engine}, {side.format})"


def _framing(side: Side, add_special: bool, special: str | None) -> frozenset[int]:
    """The ids a side puts around every text (its encode of the empty text)."""
    return frozenset(side.encode("", add_special, special)) if add_special else frozenset()


def _one(a: Side, b: Side, name: str, text: str, explain: bool, add_special: bool,
         special: str | None, framing: tuple[frozenset[int], frozenset[int]]) -> TextResult:
    ids_a, err_a = _encode(a, text, add_special, special)
    ids_b, err_b = _encode(b, text, add_special, special)
    if err_a is not None or err_b is not None:
        both = err_a is not None and err_b is not None
        error = " / ".join(f"{s.label} raised {e}" for s, e in ((a, err_a), (b, err_b)) if e is not None)
        return TextResult(name, text, both, len(ids_a), len(ids_b), kind=None if both else "error", error=error)
    region = first_divergence(ids_a, ids_b, a.decode, b.decode, framing[0], framing[1])
    result = TextResult(name, text, region is None, len(ids_a), len(ids_b), region)
    if region is None:
        return result
    result.window_a = _window(a, ids_a, region.a_start, region.a_end)
    result.window_b = _window(b, ids_b, region.b_start, region.b_end)
    result.kind = _kind(region, result.window_a, result.window_b)
    if explain:
        _explain(result, a, b, ids_a, ids_b, add_special, special)
    case = Case(text, a, b, region, ids_a, ids_b, framing[0], framing[1], result.stage)
    result.reasons = [r.name for r in reasons_for(case)]
    return result


def _encode(side: Side, text: str, add_special: bool, special: str | None) -> tuple[list[int], str | None]:
    """The side's ids, or the error it raised for this text (an engine's own exception included)."""
    try:
        return side.encode(text, add_special, special), None
    except Exception as exc:
        if isinstance(exc, PolytokError) and not isinstance(exc, EncodeError):
            raise  # a mode the engine cannot run: the whole comparison is meaningless
        return [], f"{type(exc).__name__}: {str(exc).strip().splitlines()[0] if str(exc).strip() else ''}"


def _kind(region: Region, window_a: list[tuple[int, str, bool]], window_b: list[tuple[int, str, bool]]) -> str:
    if region.a_end == region.a_start or region.b_end == region.b_start:
        return "extra tokens"
    if [p for _, p, hit in window_a if hit] == [p for _, p, hit in window_b if hit]:
        return "same pieces, other ids"
    if region.end is None:
        return "no resync"
    return "split" if region.text_a == region.text_b else "text"


def _window(side: Side, ids: list[int], start: int, end: int) -> list[tuple[int, str, bool]]:
    lo, hi = max(0, start - _CONTEXT), min(len(ids), end + _CONTEXT)
    return [(ids[k], side.piece(ids[k]), start <= k < end) for k in range(lo, hi)]


def _explain(result: TextResult, a: Side, b: Side, ids_a: list[int], ids_b: list[int], add_special: bool,
             special: str | None) -> None:
    pipelines = []
    for side, ids in ((a, ids_a), (b, ids_b)):
        tok = side.tokenizer
        if tok is None:
            result.stage_detail = f"{side.label}: no polytok pipeline to show the stages of"
            return
        try:
            same = tok.encode(result.text, add_special=add_special, special=special) == ids
        except PolytokError:
            same = False
        if not same:
            result.stage_detail = (f"{side.label}: polytok's reading of {side.path} does not give "
                                   f"{side.engine}'s ids on this text, so its stages cannot stand for the engine's")
            return
        pipelines.append(tok)
    diff = first_stage(pipelines[0], pipelines[1], result.text, add_special, special)
    if diff is not None:
        result.stage, result.stage_detail = diff.stage, diff.detail
