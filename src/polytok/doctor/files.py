"""The tokenizer files of a model folder, each read by polytok's reader of its format.

Every file a format's reader opens in a model folder (`polytok.formats.registry.FORMATS`:
``tokenizer.json``, ``tekken.json``, ``tokenizer.model`` (SentencePiece or tiktoken),
``*.tiktoken``, ``vocab.json`` beside ``merges.txt``, ``vocab.txt``, ``rwkv_vocab*.txt``,
``*.gguf``, each also as ``NAME.gz``) and a GGUF next to the folder (``FOLDER*.gguf`` in
its parent). Each file is read alone (`polytok.load` of the file), as its own engine
reads it; the folder itself is read as `polytok.load` reads it (its tokenizer file with
the folder's config files: chat template, added tokens, redefinitions), or, where a
folder load finds no file (only a GGUF, a ``NAME.tiktoken``), as the first file read.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ..errors import PolytokError
from ..formats import folder as folder_files
from ..formats import load
from ..formats.registry import FORMATS, is_glob
from ..tokenizer import Tokenizer

__all__ = ["FolderFiles", "read_folder", "tokenizer_files"]


@dataclass
class FolderFiles:
    """A folder's tokenizer files as polytok reads them."""

    folder: Path
    #: the folder as `polytok.load` reads it (None when nothing in it can be read)
    main: Tokenizer | None
    #: each tokenizer file read alone, by path
    files: dict[Path, Tokenizer] = field(default_factory=dict)
    #: the files that could not be read, with the error
    unreadable: dict[Path, str] = field(default_factory=dict)


def tokenizer_files(folder: Path) -> list[Path]:
    """The tokenizer files in `folder` (and GGUF files named after it beside it), in registry order."""
    found: list[Path] = []
    for spec in FORMATS:
        for pattern in spec.folder_files:
            if is_glob(pattern):
                found.extend(sorted(p for p in folder.glob(pattern) if p.is_file()))
                continue
            path = folder_files.find(folder, pattern)
            # vocab.json is a GPT-2 vocabulary only beside merges.txt (as the registry's claim says)
            if path is not None and (spec.name != "gpt2_vocab" or folder_files.find(folder, "merges.txt")):
                found.append(path)
    # beside it: by name, not a glob of the name (a folder name may hold [ or *)
    found.extend(sorted(p for p in folder.parent.glob("*.gguf") if p.name.startswith(folder.name) and p.is_file()))
    return list(dict.fromkeys(found))


def read_folder(folder: Path) -> FolderFiles:
    """Read `folder` whole and each of its tokenizer files alone (the file the folder read
    stands on is not read twice); a file that fails is kept with its error."""
    result = FolderFiles(folder, None)
    failure: PolytokError | None = None
    try:
        result.main = load(folder)
    except PolytokError as exc:
        failure = exc
    first = Path(result.main.facts.files[0]) if result.main is not None and result.main.facts.files else None
    for path in tokenizer_files(folder):
        if path == first and result.main is not None:
            result.files[path] = result.main
            continue
        try:
            result.files[path] = load(path)
        except PolytokError as exc:
            result.unreadable[path] = str(exc)
    if result.main is None:  # a folder load does not search for it (a GGUF, NAME.tiktoken): the first file read
        result.main = next(iter(result.files.values()), None)
        if result.main is None and not result.unreadable and failure is not None:
            raise failure
    return result
