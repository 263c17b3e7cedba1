"""Text layout of a `polytok.parity.explain.Explanation` (``polytok explain`` prints it)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .explain import Explanation, Segment

_MAX_LINES = 400


def _tokens(ids: list[int], pieces: list[str]) -> str:
    return " ".join(f"{p!r}={i}" for i, p in zip(ids, pieces)) or "(none)"


def render(ex: Explanation) -> str:
    lines = [f"source: {ex.source}",
             f"mode: add_special={ex.add_special} special={ex.special}",
             f"text: {ex.text!r}",
             "pipeline: " + ", ".join(f"{k}={v}" for k, v in ex.components.items()),
             "",
             f"1. special-token split ({ex.components['special split']}): {len(ex.segments)} segment(s)"]
    for seg in ex.segments:
        kind = f"special -> {seg.token_id}" if seg.token_id is not None else "text"
        lines.append(f"   [{seg.start}:{seg.end}] {kind:<16} {seg.text!r}")
    lines.append("2-4. per text segment: normalized text, pre-tokens [input offsets], model pieces=ids")
    for seg in ex.segments:
        if seg.token_id is None:
            lines.extend(_segment_lines(seg))
    lines.append(f"5. post-processor ({ex.components['post_processor']}): "
                 f"before {ex.added_before} after {ex.added_after}")
    lines.append(f"ids ({len(ex.ids)}): {ex.ids}")
    lines.append(f"pieces: {_tokens(ex.ids, ex.pieces)}")
    if len(lines) > _MAX_LINES:
        lines = lines[:_MAX_LINES - 1] + [f"… ({len(lines) - _MAX_LINES + 1} more lines; --json has all)"]
    return "\n".join(lines)


def _segment_lines(seg: Segment) -> list[str]:
    lines = [f"   segment [{seg.start}:{seg.end}] {seg.text!r}",
             f"     normalized: {seg.normalized!r}",
             f"     pre-tokens: {len(seg.pre_tokens)}"]
    for pre in seg.pre_tokens:
        tag = f" (added token {pre.added})" if pre.added is not None else ""
        lines.append(f"       [{pre.start}:{pre.end}] {pre.text!r}{tag} -> {_tokens(pre.ids, pre.pieces)}")
    return lines
