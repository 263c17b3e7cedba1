"""Text layout of a `polytok.parity.compare.CompareReport` (``polytok compare`` prints it)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .reasons import REASONS

if TYPE_CHECKING:
    from .compare import CompareReport, TextResult

_SENTENCES = {r.name: r.sentence for r in REASONS}


def _short(text: str, width: int = 80) -> str:
    shown = repr(text[:width])
    return shown + ("…" if len(text) > width else "")


def _window(window: list[tuple[int, str, bool]]) -> str:
    out: list[str] = []
    inside = False
    for id_, piece, hit in window:
        if hit != inside:
            out.append("|")
            inside = hit
        out.append(f"{piece!r}={id_}")
    if inside:
        out.append("|")
    if not any(hit for _, _, hit in window):
        out.append("| (nothing) |")
    return " ".join(out)


def _result_lines(r: TextResult) -> list[str]:
    if r.region is None:
        return [f"text {r.name}: {_short(r.text)}", f"  {r.kind}: {r.error}"]
    g = r.region
    where = f"chars {g.start}..{g.end}" if g.end is not None else f"from char {g.start}, never re-synchronised"
    lines = [f"text {r.name}: {_short(r.text)}",
             f"  first divergence: A tokens {g.a_start}:{g.a_end} / B tokens {g.b_start}:{g.b_end}, "
             f"{where} — {r.kind}",
             f"    A: {_window(r.window_a)}",
             f"    B: {_window(r.window_b)}"]
    if g.text_a != g.text_b:
        lines.append(f"    decoded: A {_short(g.text_a, 40)} / B {_short(g.text_b, 40)}")
    for name in r.reasons:
        lines.append(f"  reason {name}: {_SENTENCES[name]}")
    if not r.reasons:
        lines.append("  reason: none known")
    if r.stage is not None:
        lines.append(f"  first differing stage: {r.stage} — {r.stage_detail}")
    elif r.stage_detail is not None:
        lines.append(f"  stages: {r.stage_detail}")
    return lines


def render(report: CompareReport, limit: int) -> str:
    lines = [f"A: {report.a}", f"B: {report.b}", f"mode: {report.mode}", ""]
    diverging = report.diverging
    for r in diverging[:limit]:
        lines.extend(_result_lines(r))
        lines.append("")
    if len(diverging) > limit:
        lines.append(f"… {len(diverging) - limit} more diverging texts (--limit, or --json for all)")
        lines.append("")
    s = report.summary()
    lines.append(f"texts {s['texts']}  identical {s['identical']}  diverging {s['diverging']}")
    for title in ("kinds", "reasons", "stages"):
        if s[title]:
            rows = sorted(s[title].items(), key=lambda kv: (-kv[1], kv[0]))
            lines.append(f"  {title}: " + ", ".join(f"{k} {v}" for k, v in rows))
    return "\n".join(lines)
