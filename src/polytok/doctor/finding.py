"""`Finding`: one thing `polytok doctor` found wrong with a model folder's tokenizer files."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = ["Finding", "Severity"]

Severity = Literal["error", "warning"]


@dataclass(frozen=True)
class Finding:
    """A finding: a stable `code`, how bad it is, one line saying what and where, the files it
    concerns and the particulars (``details``: ids, texts, the turn, ``reasons`` — the names of
    `polytok.parity.reasons` that explain it, where they apply)."""

    code: str
    severity: Severity
    message: str
    files: tuple[str, ...] = ()
    details: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {"code": self.code, "severity": self.severity, "message": self.message, "files": list(self.files),
                "details": self.details}
