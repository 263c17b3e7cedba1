"""A one-line progress meter on stderr: percentage, rate and time left when the total is known."""

from __future__ import annotations

import sys
import time
from typing import TextIO

__all__ = ["Progress", "percent", "render"]


def percent(done: int, total: int) -> float:
    """`done` of `total` in percent, at most 100 (a total can be an estimate)."""
    if total <= 0:
        return 0.0
    return min(100.0 * done / total, 100.0)


def render(done: int, total: int | None, elapsed: float, counted: str = "") -> str:
    """The meter's text: ``<counted>  42.0%  12.6/30.0 MB  3.10 MB/s  ETA 0:06``, without a
    percentage or ETA when `total` is unknown (None or 0)."""
    rate = done / max(elapsed, 1e-9)
    parts = [counted] if counted else []
    if total:
        parts.append(f"{percent(done, total):.1f}%")
        parts.append(f"{done / 1e6:.1f}/{total / 1e6:.1f} MB")
    else:
        parts.append(f"{done / 1e6:.1f} MB")
    parts.append(f"{rate / 1e6:.2f} MB/s")
    if total and done and done < total:
        parts.append("ETA " + _clock((total - done) / max(rate, 1e-9)))
    return "  ".join(parts)


def _clock(seconds: float) -> str:
    seconds = int(seconds + 0.5)
    hours, rest = divmod(seconds, 3600)
    return f"{hours}:{rest // 60:02d}:{rest % 60:02d}" if hours else f"{rest // 60}:{rest % 60:02d}"


class Progress:
    """The meter for `total` input bytes (None: unknown). ``enabled=None`` shows it only when
    `out` is a terminal; True or False force it (``--progress`` / ``--no-progress``)."""

    def __init__(self, total: int | None, enabled: bool | None = None, out: TextIO | None = None,
                 interval: float = 0.1) -> None:
        self.out = out if out is not None else sys.stderr  # the stderr of the call, not of the import
        self.total, self.done, self.interval = total, 0, interval
        self.enabled = self.out.isatty() if enabled is None else enabled
        self.start = time.monotonic()
        self.last = -interval
        self.width = 0
        self.counted, self.drawn = "", True

    def update(self, n: int, counted: str = "") -> None:
        """`n` more bytes done; `counted` (e.g. ``"1,234 tokens"``) is shown after the rate."""
        self.set(self.done + n, counted)

    def set(self, done: int, counted: str = "") -> None:
        """`done` bytes done in all (shown at most every `interval` seconds, and when all is done)."""
        self.done, self.counted, self.drawn = done, counted, False
        now = time.monotonic()
        finished = self.total is not None and done >= self.total
        if self.enabled and (finished or now - self.last >= self.interval):
            self.last = now
            self._draw(now)

    def _draw(self, now: float) -> None:
        self._write(render(self.done, self.total, now - self.start, self.counted))
        self.drawn = True

    def _write(self, line: str) -> None:
        pad = " " * max(0, self.width - len(line))
        self.width = len(line)
        self.out.write(f"\r{line}{pad}")
        self.out.flush()

    def close(self) -> None:
        """Draw the last state if it was skipped, then clear the line."""
        if self.enabled and not self.drawn:
            self._draw(time.monotonic())
        if self.enabled and self.width:
            self.out.write("\r" + " " * self.width + "\r")
            self.out.flush()
