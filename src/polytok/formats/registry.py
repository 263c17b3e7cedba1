"""The formats polytok reads, each declared once: `FORMATS`, in the order a file is sniffed.

`polytok.formats.sniff` and `polytok.formats.load` know a format only through its
`FormatSpec` here:

- ``name``: what `sniff` answers (and what an option error names);
- ``expected``: how the error for an unrecognised file names it;
- ``claims``: whether a file is of the format, from its name and first bytes. Claims
  overlap: the first format of `FORMATS` that claims a file wins, so a narrow claim
  comes before a broad one (a GGUF file is GGUF whatever its name; ``tekken*.json``
  and a ``vocab.json`` beside a ``merges.txt`` come before every other ``.json``; an
  RWKV line before any ``.txt``);
- ``folder_files`` and ``folder_rank``: what the reader opens in a model folder of
  the format (the first found: ``NAME``, also as ``NAME.gz``, or a glob's first match
  in name order), and where the first of them stands when a folder is searched for
  its tokenizer file (`FOLDER_SEARCH`; None: a folder is not searched for it);
- ``reader`` (and ``folder_reader``, for a reader of a whole model folder): imports
  the reader module and gives its read function. That function's signature
  declares the load options: one taking ``**options`` checks them itself; any other
  takes exactly its keyword-only parameters, and `load` refuses the rest.

Adding a format is its reader module and one entry in `FORMATS`.

The declarations sit here, not in the reader modules, so that sniffing imports no
reader: importing all eight (their component modules) costs more than the whole
first load of a small SentencePiece model (bench/README.md, 'Measurements behind
design choices'); `load` imports only the reader of the format it reads.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import FormatError
from ..tokenizer import Tokenizer
from . import folder as folder_files

__all__ = ["FileHead", "FormatSpec", "Reader", "FORMATS", "BY_NAME", "FOLDER_SEARCH", "find_in", "file_in",
           "is_glob"]

Reader = Callable[..., Tokenizer]


@dataclass(frozen=True, slots=True)
class FileHead:
    """What a claim looks at: the file, its lower-cased name and its first bytes (decompressed)."""

    path: Path
    name: str
    head: bytes


@dataclass(frozen=True, slots=True)
class FormatSpec:
    """One format polytok reads (see the module notes for each field)."""

    name: str
    expected: str
    claims: Callable[[FileHead], bool]
    reader: Callable[[], Reader]
    folder_files: tuple[str, ...] = ()
    folder_rank: int | None = None
    folder_reader: Callable[[], Reader] | None = None


def is_glob(pattern: str) -> bool:
    return "*" in pattern


def find_in(folder: Path, patterns: tuple[str, ...]) -> Path | None:
    """The first file of `folder` matching one of `patterns` (a name: `folder_files.find`, so NAME or
    NAME.gz; a glob: its first match in name order), or None."""
    for pattern in patterns:
        found = min(folder.glob(pattern), default=None) if is_glob(pattern) else folder_files.find(folder, pattern)
        if found is not None:
            return found
    return None


def file_in(folder: Path, patterns: tuple[str, ...]) -> Path:
    """`find_in`, or a `FormatError` naming the folder."""
    found = find_in(folder, patterns)
    if found is None:
        raise FormatError("no tokenizer file found in this folder", file=str(folder))
    return found


# --- claims ---------------------------------------------------------------------------------------

_JSON = (".json", ".json.gz")
_TXT = (".txt", ".txt.gz")
# a tiktoken rank line: base64 of the token bytes, one space, the rank
_TIKTOKEN_LINE = re.compile(rb"\A[A-Za-z0-9+/]*={0,2} \d+\r?\n")
# an RWKV world vocabulary line: id, a Python str or bytes literal, its byte length
_RWKV_LINE = re.compile(rb"\A\d+ b?['\"]")


def _is_gguf(f: FileHead) -> bool:
    return f.head[:4] == b"GGUF" or f.name.endswith(".gguf")


def _is_tekken(f: FileHead) -> bool:
    return f.name.startswith("tekken") and f.name.endswith(_JSON)


def _is_gpt2_vocab(f: FileHead) -> bool:
    return f.name in ("vocab.json", "vocab.json.gz") and folder_files.find(f.path.parent, "merges.txt") is not None


def _is_json(f: FileHead) -> bool:
    return f.name.endswith(_JSON)


def _is_tiktoken(f: FileHead) -> bool:
    return f.name.endswith(".tiktoken") or _TIKTOKEN_LINE.match(f.head) is not None


def _is_rwkv_vocab(f: FileHead) -> bool:
    return f.name.endswith(_TXT) and _RWKV_LINE.match(f.head) is not None


def _is_txt(f: FileHead) -> bool:
    return f.name.endswith(_TXT)


def _is_sentencepiece(f: FileHead) -> bool:
    # 0x0a: the tag of ModelProto field 1 (pieces), length-delimited
    return f.name.endswith((".model", ".spm", ".model.gz")) or f.head[:1] == b"\x0a"


# --- readers, imported when a file of their format is read ---------------------------------------

def _hf_json() -> Reader:
    from .hf_json import read_tokenizer_json

    return read_tokenizer_json


def _hf_json_folder() -> Reader:
    from .hf_json import read_model_folder

    return read_model_folder


def _gguf() -> Reader:
    from .gguf import build_tokenizer, read_gguf_vocab

    def read_gguf(path: Path) -> Tokenizer:
        return build_tokenizer(read_gguf_vocab(path))

    return read_gguf


def _sentencepiece() -> Reader:
    from .sentencepiece import read_sentencepiece

    return read_sentencepiece


_SENTENCEPIECE_FILES = ("tokenizer.model",)


def _sentencepiece_folder() -> Reader:
    from .redefinitions import read_sentencepiece_folder

    def read_folder(folder: Path, **options: Any) -> Tokenizer:  # the model with the folder's redefinitions
        return read_sentencepiece_folder(file_in(folder, _SENTENCEPIECE_FILES), **options)

    return read_folder


def _tiktoken() -> Reader:
    from .tiktoken import read_tiktoken

    return read_tiktoken


def _tekken() -> Reader:
    from .tekken import read_tekken

    return read_tekken


def _gpt2_vocab() -> Reader:
    from .gpt2_vocab import read_gpt2_vocab

    return read_gpt2_vocab


def _wordpiece_vocab() -> Reader:
    from .wordpiece_vocab import read_wordpiece_vocab

    return read_wordpiece_vocab


def _rwkv_vocab() -> Reader:
    from .rwkv_vocab import read_rwkv_vocab

    return read_rwkv_vocab


# --- the registry -----------------------------------------------------------------------------------

FORMATS: tuple[FormatSpec, ...] = (
    FormatSpec("gguf", "a .gguf", _is_gguf, _gguf, folder_files=("*.gguf",)),
    FormatSpec("tekken", "tekken.json", _is_tekken, _tekken, folder_files=("tekken.json",), folder_rank=1),
    FormatSpec("gpt2_vocab", "vocab.json + merges.txt", _is_gpt2_vocab, _gpt2_vocab, folder_files=("vocab.json",),
               folder_rank=3),
    FormatSpec("hf_json", "tokenizer.json", _is_json, _hf_json, folder_files=("tokenizer.json",), folder_rank=0,
               folder_reader=_hf_json_folder),
    FormatSpec("tiktoken", "a tiktoken rank file", _is_tiktoken, _tiktoken,
               folder_files=("tokenizer.model", "*.tiktoken"), folder_rank=2),
    FormatSpec("rwkv_vocab", "an RWKV world vocabulary (rwkv_vocab*.txt)", _is_rwkv_vocab, _rwkv_vocab,
               folder_files=("rwkv_vocab*.txt",), folder_rank=5),
    FormatSpec("wordpiece_vocab", "vocab.txt", _is_txt, _wordpiece_vocab, folder_files=("vocab.txt",),
               folder_rank=4),
    FormatSpec("sentencepiece", "a SentencePiece .model", _is_sentencepiece, _sentencepiece,
               folder_files=_SENTENCEPIECE_FILES, folder_rank=2, folder_reader=_sentencepiece_folder),
)

BY_NAME = {spec.name: spec for spec in FORMATS}

# the files a model folder is searched for, in order: the first folder file of each ranked format, by rank
_RANKED = sorted((spec.folder_rank, spec.folder_files[0]) for spec in FORMATS if spec.folder_rank is not None)
FOLDER_SEARCH: tuple[str, ...] = tuple(dict.fromkeys(name for _, name in _RANKED))
