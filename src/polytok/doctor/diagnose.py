"""`diagnose`: every check of `polytok.doctor` over one model folder, in a fixed order."""

from __future__ import annotations

from pathlib import Path

from ..errors import FormatError
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
    found += double_bos(tok, files)
    found += forgeable_markers(tok, files)
    found += template_prefix(tok, files)
    found += redefined_tokens(tok, path, files)
    found += past_embedding(tok, path, files)
    return found
