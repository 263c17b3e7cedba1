"""`diagnose`: every check of `polytok.doctor` over one model folder, in a fixed order."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from ..errors import FormatError, PolytokError
from .disagree import files_disagree
from .double_bos import double_bos
from .embedding import past_embedding
from .files import read_folder
from .finding import Finding
from .forgeable import forgeable_markers
from .prefix import template_prefix
from .redefined import redefined_tokens

__all__ = ["diagnose"]


def diagnose(folder: str | Path) -> list[Finding]:
    """What is wrong with the tokenizer files of `folder` (an empty list: nothing found).

    Raises:
        FormatError: `folder` is not a folder, or holds no tokenizer file polytok reads.
    """
    path = Path(folder)
    if not path.is_dir():
        raise FormatError("not a folder (doctor reads a model folder)", file=str(path))
    read = read_folder(path)
    found = [Finding("unreadable-file", "error", f"{p.name} cannot be read: {error}", (str(p),), {"error": error})
             for p, error in read.unreadable.items()]
    found += files_disagree(read.files)
    tok = read.main
    if tok is None:
        return found
    files = tuple(tok.facts.files)
    checks: list[tuple[str, Callable[[], list[Finding]]]] = [
        ("double-bos", lambda: double_bos(tok, files)),
        ("forgeable-markers", lambda: forgeable_markers(tok, files)),
        ("template-not-prefix-preserving", lambda: template_prefix(tok, files)),
        ("redefined-tokens", lambda: redefined_tokens(tok, path, files)),
        ("past-embedding-size", lambda: past_embedding(tok, path, files)),
    ]
    for code, check in checks:
        try:
            found += check()
        except PolytokError as exc:  # e.g. a vocabulary that cannot encode the check's text, as its engine cannot
            found.append(Finding("check-failed", "error", f"the {code} check could not run: {exc}", files,
                                 {"check": code, "error": str(exc)}))
    return found
