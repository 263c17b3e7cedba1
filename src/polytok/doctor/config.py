"""What the checks read from a model folder's config files, with errors naming file and key.

``tokenizer_config.json``'s ``added_tokens_decoder`` (id → token object), ``added_tokens.json``
(text → id) and ``config.json``'s ``vocab_size`` (the rows of the embedding matrix; a
multimodal config keeps it under ``text_config``), as transformers 5.24 reads them
(``PreTrainedTokenizerBase._from_pretrained``; ``PretrainedConfig``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..errors import FormatError
from ..formats import folder as folder_files

__all__ = ["AddedEntry", "added_entries", "embedding_rows"]


@dataclass(frozen=True)
class AddedEntry:
    """One id a config file gives a text: where (``file key``) and whether it is special."""

    id: int
    text: str
    special: bool
    source: str


def _decoder(folder: Path) -> list[AddedEntry]:
    config = folder_files.read_object(folder, "tokenizer_config.json") or {}
    decoder = config.get("added_tokens_decoder", {})
    file = str(folder_files.where(folder, "tokenizer_config.json"))
    if not isinstance(decoder, dict):
        raise FormatError("expected an object", file=file, key="added_tokens_decoder")
    found = []
    for key, entry in decoder.items():
        where = f"added_tokens_decoder.{key}"
        if not key.isascii() or not key.isdigit():
            raise FormatError("expected a token id", file=file, key=where)
        if not isinstance(entry, dict) or not isinstance(entry.get("content"), str):
            raise FormatError("expected an object with a string 'content'", file=file, key=where)
        special = bool(entry.get("special"))
        found.append(AddedEntry(int(key), entry["content"], special, f"tokenizer_config.json {where}"))
    return found


def _legacy(folder: Path) -> list[AddedEntry]:
    data = folder_files.read_object(folder, "added_tokens.json") or {}
    file = str(folder_files.where(folder, "added_tokens.json"))
    found = []
    for text, id_ in data.items():
        if not isinstance(id_, int) or isinstance(id_, bool) or id_ < 0:
            raise FormatError("expected a non-negative token id", file=file, key=text)
        found.append(AddedEntry(id_, text, False, f"added_tokens.json {text}"))
    return found


def added_entries(folder: Path) -> list[AddedEntry]:
    """The ids the folder's config files give texts: ``added_tokens_decoder``, then ``added_tokens.json``."""
    return _decoder(folder) + _legacy(folder)


def embedding_rows(folder: Path) -> int | None:
    """``config.json``'s ``vocab_size`` (``text_config.vocab_size`` where it has none); None when absent."""
    config = folder_files.read_object(folder, "config.json")
    if config is None:
        return None
    file, key = str(folder_files.where(folder, "config.json")), "vocab_size"
    size = config.get(key)
    if size is None and isinstance(config.get("text_config"), dict):
        size, key = config["text_config"].get(key), "text_config.vocab_size"
    if size is None:
        return None
    if not isinstance(size, int) or isinstance(size, bool) or size < 0:
        raise FormatError("expected a non-negative integer", file=file, key=key)
    return size
