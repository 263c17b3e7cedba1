"""``past-embedding-size``: added-token ids at or past ``config.json``'s ``vocab_size``.

The model has ``vocab_size`` embedding rows; an id the tokenizer can emit at or past it
indexes no row (an index error, or a row nobody trained when the matrix is resized).
transformers 5.24 gives each ``added_tokens_decoder`` / ``added_tokens.json`` entry its
listed id, and appends texts it cannot place (a redefinition, `polytok.doctor.redefined`)
after the vocabulary; polytok's folder read gives the same ids. The ids checked are the
config's entries and every added token of the folder as polytok reads it.
"""

from __future__ import annotations

from pathlib import Path

from ..tokenizer import Tokenizer
from .config import added_entries, embedding_rows
from .finding import Finding

__all__ = ["past_embedding"]


def past_embedding(tok: Tokenizer, folder: Path, files: tuple[str, ...]) -> list[Finding]:
    """The finding for ids at or past the folder's ``config.json`` ``vocab_size``."""
    rows = embedding_rows(folder)
    if rows is None:
        return []
    ids = {e.id: e.text for e in added_entries(folder) if e.id >= rows}
    ids.update({i: e.content for i, e in tok.added.id_to_entry.items() if i >= rows and i not in ids})
    if not ids:
        return []
    ordered = sorted(ids)
    shown = ", ".join(f"{i} {ids[i]!r}" for i in ordered[:8]) + (f" and {len(ids) - 8} more" if len(ids) > 8 else "")
    message = (f"{len(ids)} added-token ids at or past config.json's vocab_size {rows} (no embedding row): {shown}")
    details = {"vocab_size": rows, "ids": [{"id": i, "text": ids[i]} for i in ordered]}
    return [Finding("past-embedding-size", "error", message, files, details)]
