"""``redefined-tokens``: a config giving an id the base vocabulary already holds a new text.

A chat fine-tune may keep the base vocabulary and rename some of its entries in
``tokenizer_config.json`` (``added_tokens_decoder``) or ``added_tokens.json``: Snowflake
Arctic turns 弘/给 into ``<|im_start|>``/``<|im_end|>``, InternLM2 its
``[UNUSED_TOKEN_…]`` entries (`polytok.formats.redefinitions`, docs/convert.md). The
engines part ways:

- beside a ``tokenizer.model``: polytok's folder read and llama.cpp's converter replace
  the piece in place (the model's trained id); transformers 5.24's ``AutoTokenizer``
  appends the text as a new id after the base vocabulary, a row the model never trained
  (compare's ``redefined-token-appended``), and past the embedding when ``config.json``'s
  ``vocab_size`` is the vocabulary's size, as it usually is (said in the message);
- beside a ``tokenizer.json``: transformers 5.24 appends the text as a new id (polytok's
  folder read does as transformers does, so the id it gives is reported), while the id
  the fine-tune trained keeps its old piece.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..tokenizer import Tokenizer
from .config import added_entries, embedding_rows
from .finding import Finding

__all__ = ["redefined_tokens"]

_SPM = ("polytok and llama.cpp's converter replace each piece in place; transformers 5.24 appends the new texts "
        "as new ids after the base vocabulary")
_JSON = ("transformers 5.24 (and polytok's folder read) append the new texts as new ids; the trained ids keep "
         "their pieces")


def _from_tokenizer_json(tok: Tokenizer, folder: Path) -> list[dict[str, Any]]:
    size, found = tok.model.vocab_size(), []
    for entry in added_entries(folder):
        old = tok.model.id_to_token(entry.id) if entry.id < size else None
        if old is None or entry.text in (old, tok.decode([entry.id], skip_special=False)):
            continue
        found.append({"id": entry.id, "old": old, "new": entry.text, "source": entry.source,
                      "appended_as": tok.token_to_id(entry.text)})
    return found


def redefined_tokens(tok: Tokenizer, folder: Path, files: tuple[str, ...]) -> list[Finding]:
    """The finding for the ids `folder`'s configs give a new text (`tok`: the folder as polytok reads it)."""
    listed = tok.facts.details.get("redefinitions")
    if listed is not None:  # a tokenizer.model folder: the reader applied llama.cpp's rule
        found = [{k: r[k] for k in ("id", "old", "new", "type", "source")} for r in listed if r["old"] is not None]
        treatment = _SPM + f" (from {tok.model.vocab_size()})"
        rows = embedding_rows(folder)
        if found and rows is not None and rows <= tok.model.vocab_size():
            treatment += f", past config.json's vocab_size {rows}"
    elif tok.facts.format == "tokenizer.json":
        found, treatment = _from_tokenizer_json(tok, folder), _JSON
    else:
        return []
    if not found:
        return []
    shown = ", ".join(f"{r['id']} {r['old']!r} → {r['new']!r}" for r in found[:6])
    more = f" and {len(found) - 6} more" if len(found) > 6 else ""
    message = f"{len(found)} ids given a new text by the config: {shown}{more}; {treatment}"
    details = {"redefinitions": found, "treatment": treatment, "reasons": ["redefined-token-appended"]}
    return [Finding("redefined-tokens", "warning", message, files, details)]
