"""What a reference engine reads for ``compare --ref``: the input polytok read, in a form the engine opens.

polytok reads a model folder through `polytok.formats.folder` (each file as
``NAME`` or ``NAME.gz``) and a lone ``.json.gz``; the engines open plain files only
(tokenizers ``Tokenizer.from_file``, transformers ``from_pretrained``,
sentencepiece ``SentencePieceProcessor(model_file=)``, tiktoken
``load_tiktoken_bpe``, mistral-common ``Tekkenizer.from_file``, llama.cpp
``llama_model_load_from_file``). So:

- a folder is resolved, for an engine that reads one file, to the file polytok
  read (its ``source``), else to the file `load` would pick;
- gzip data is decompressed into a temporary folder under the plain name, and for
  transformers the whole folder is mirrored there (links to the plain files,
  decompressed copies of the ``.gz`` ones), as it would load the plain folder;
- once loaded, the engine's base vocabulary must be the size of polytok's: an
  engine that loaded something else (transformers builds a tokenizer of the added
  tokens alone from a folder whose tokenizer.json it cannot see) is an error that
  says so, never a list of divergences.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

from ..errors import PolytokError
from ..formats import folder as folder_files
from ..formats.compressed import GZIP_MAGIC, read_bytes
from ..tokenizer import Tokenizer

__all__ = ["EngineInput", "engine_input", "check_same_input"]

# the file an engine reads in a folder (after polytok's own source), as `load` picks it
_FOLDER_FILE = {"sentencepiece": ("tokenizer.model",), "mistral": ("tekken.json",),
                "tiktoken": ("tokenizer.model",), "llama.cpp": ()}


class EngineInput:
    """A plain path for the engine, and the temporary folder that holds it (None when it is the user's)."""

    def __init__(self, path: str, tmp: tempfile.TemporaryDirectory[str] | None = None) -> None:
        self.path = path
        self.tmp = tmp


def engine_input(engine: str, path: str, proxy: Tokenizer | None) -> EngineInput:
    """The path `engine` should load for the user's `path` (module notes)."""
    p = Path(path)
    if engine in ("hf", "transformers") and p.is_dir():
        return _mirror(p) if folder_files.compressed_files(p) else EngineInput(path)
    if p.is_dir():
        p = _file_in_folder(engine, p, proxy)
    return _plain(p)


def check_same_input(engine: str, path: str, side: Any, proxy: Tokenizer | None) -> None:
    """Refuse an engine whose base vocabulary is not half the size of polytok's reading of `path`."""
    if proxy is None or side.base_size is None:
        return
    ours = proxy.model.vocab_size()
    if 2 * side.base_size <= ours:  # not a few rows more or less: another vocabulary
        raise PolytokError(f"{path}: {engine} did not load the tokenizer polytok read ({side.base_size} base "
                           f"tokens where polytok read {ours}): there is nothing to compare")


def _file_in_folder(engine: str, folder: Path, proxy: Tokenizer | None) -> Path:
    source = proxy.facts.source if proxy is not None else None
    if isinstance(source, str) and Path(source).is_file():
        return Path(source)
    for name in _FOLDER_FILE.get(engine, ()):
        found = folder_files.find(folder, name)
        if found is not None:
            return found
    if engine == "llama.cpp":
        ggufs = sorted(folder.glob("*.gguf"))
        if ggufs:
            return ggufs[0]
    raise PolytokError(f"{folder}: no file in this folder that --ref {engine} reads")


def _plain(p: Path) -> EngineInput:
    """`p` itself, or its decompressed data in a temporary folder (the name without ``.gz``)."""
    try:
        with p.open("rb") as f:
            packed = f.read(2) == GZIP_MAGIC
    except OSError:
        return EngineInput(str(p))  # the engine says what is wrong with it
    if not packed:
        return EngineInput(str(p))
    tmp = tempfile.TemporaryDirectory(prefix="polytok-ref-")
    target = Path(tmp.name) / (p.name[:-3] if p.name.endswith(".gz") else p.name)
    target.write_bytes(read_bytes(p))
    return EngineInput(str(target), tmp)


def _mirror(folder: Path) -> EngineInput:
    """The folder as transformers would find it unpacked: links to its files, its ``.gz`` files decompressed."""
    tmp = tempfile.TemporaryDirectory(prefix="polytok-ref-")
    packed = {p.name for p in folder_files.compressed_files(folder)}
    for entry in sorted(folder.iterdir()):
        target = Path(tmp.name) / entry.name
        if entry.name in packed:
            Path(tmp.name, entry.name[:-3]).write_bytes(read_bytes(entry))
        else:
            os.symlink(entry.resolve(), target)
    return EngineInput(tmp.name, tmp)
