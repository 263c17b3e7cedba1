"""Which writer ``polytok convert SRC DEST`` runs: the source's format, the target's, and `WRITERS`.

The source's format is the one `polytok.formats.sniff` finds (a Llama 3
``tokenizer.model`` is a tiktoken rank file, not SentencePiece). A model folder
holding a tokenizer.json or a SentencePiece ``tokenizer.model`` is a Hugging
Face source for a GGUF target (the converter reads the whole folder); otherwise
a folder is the file `polytok.load` would read in it (a folder holding only a
SentencePiece ``tokenizer.model`` is that ``.model`` for a tokenizer.json target).

The target is ``--to`` when given, else what DEST's name says: ``*.gguf``,
``*.model`` (SentencePiece), ``*.tiktoken``, ``*tekken*.json``, an existing
folder, a name without a suffix or ``tokenizer.json`` (a Hugging Face folder).

`WRITERS` maps (source format, target format) to a `Writer`; each writer module
is imported only when its direction runs, and a module this version does not
have is a `DirectionUnavailable` error, not an ImportError. Tests replace
entries of `WRITERS` to run the proof on a writer that is wrong on purpose.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, Protocol

from ..errors import FormatError, PolytokError
from .outcome import TARGET_FORMATS, Written

__all__ = ["Writer", "Source", "GgufWritten", "WRITERS", "WRITER_NAMES", "FORMAT_NAMES", "DirectionUnavailable",
           "source_of", "folder_file", "target_of", "writer_for", "directions_from"]

#: how each format is named in messages
FORMAT_NAMES = {"hf": "a Hugging Face tokenizer (folder or tokenizer.json)", "gguf": "a GGUF vocabulary",
                "sentencepiece": "a SentencePiece .model", "tiktoken": "a tiktoken rank file",
                "tekken": "a tekken.json"}
# polytok.formats.sniff's name of a format -> the convert format it is a source of
_SNIFFED = {"hf_json": "hf", "gguf": "gguf", "sentencepiece": "sentencepiece", "tiktoken": "tiktoken",
            "tekken": "tekken"}


class Writer(Protocol):
    """Writes `source` as the target format at `out` (a folder for ``hf``); options only for a GGUF."""

    def __call__(self, source: str, out: str, **options: Any) -> Written: ...


class DirectionUnavailable(PolytokError):
    """The writer of a direction is not part of this version of polytok."""


@dataclass(frozen=True)
class Source:
    """What is converted: its format (one of `TARGET_FORMATS`) and the path its writer is given."""

    format: str
    #: the path the writer reads (the folder for a folder source of a GGUF target, else the file)
    path: str
    #: the path the user gave
    given: str


def _lazy(module: str, name: str) -> Writer:
    """A writer that imports ``polytok.convert.<module>`` when it runs."""

    def write(source: str, out: str, **options: Any) -> Written:
        function = _import_writer(module, name)
        written: Written = function(source, out, **options)
        return written

    write.__qualname__ = write.__name__ = name
    write.resolve = partial(_import_writer, module, name)  # type: ignore[attr-defined]  # the function itself
    return write


def _import_writer(module: str, name: str) -> Callable[..., Written]:
    full = f"{__package__}.{module}"
    try:
        found = importlib.import_module(full)
    except ModuleNotFoundError as exc:
        if exc.name != full:
            raise  # a dependency of the writer is missing: its own error says which
        raise DirectionUnavailable(f"this direction is not available in this version ({full} is not "
                                   "installed)") from None
    function = getattr(found, name, None)
    if not callable(function):
        raise DirectionUnavailable(f"this direction is not available in this version ({full} has no {name})")
    return function  # type: ignore[no-any-return]


@dataclass
class GgufWritten(Written):
    """What `polytok.convert.converter.to_gguf` wrote, with its report (whose read-back the proof takes up)."""

    report: Any = None


def _hf_to_gguf(source: str, out: str, **options: Any) -> Written:
    """`polytok.convert.converter.to_gguf`; its report's lines are the notes (the first line is the path)."""
    from .converter import to_gguf

    if not Path(source).is_dir():  # a tokenizer.json: the model folder it is in
        if not Path(source).name.startswith("tokenizer.json"):
            raise PolytokError(f"{source}: a GGUF is written from a model folder (tokenizer.json with its "
                               "config files): give the folder")
        source = str(Path(source).parent)
    report = to_gguf(source, out, pre=options.get("pre"), base_gguf=options.get("base"),
                     like_converter=bool(options.get("like_converter")))
    return GgufWritten("gguf", out, [out], notes=report.lines()[1:], report=report)

#: (source format, target format) -> the writer of that direction
WRITERS: dict[tuple[str, str], Writer] = {
    ("hf", "gguf"): _hf_to_gguf,
    ("hf", "sentencepiece"): _lazy("hf_to_spm", "write_model_from_hf"),
    ("hf", "tiktoken"): _lazy("to_tiktoken", "write_tiktoken"),
    ("hf", "tekken"): _lazy("to_tekken", "write_tekken"),
    ("gguf", "hf"): _lazy("gguf_to_hf", "write_hf_folder"),
    ("gguf", "tiktoken"): _lazy("to_tiktoken", "write_tiktoken"),
    ("gguf", "tekken"): _lazy("to_tekken", "write_tekken"),
    ("sentencepiece", "hf"): _lazy("spm_to_hf", "write_hf_from_model"),
}

#: the function each direction runs, as the documentation names it
WRITER_NAMES = {
    ("hf", "gguf"): "converter.to_gguf", ("hf", "sentencepiece"): "hf_to_spm.write_model_from_hf",
    ("hf", "tiktoken"): "to_tiktoken.write_tiktoken", ("hf", "tekken"): "to_tekken.write_tekken",
    ("gguf", "hf"): "gguf_to_hf.write_hf_folder", ("gguf", "tiktoken"): "to_tiktoken.write_tiktoken",
    ("gguf", "tekken"): "to_tekken.write_tekken", ("sentencepiece", "hf"): "spm_to_hf.write_hf_from_model",
}


def source_of(src: str | os.PathLike[str], target: str) -> Source:
    """The format of `src` (module notes) and the path its writer to `target` reads.

    Raises:
        FormatError: `src` does not exist, or polytok does not read it.
        PolytokError: polytok reads it, but it is no format ``convert`` writes from.
    """
    from ..formats import sniff

    given = os.fspath(src)
    p = Path(given)
    if not p.exists():
        raise FormatError("no such file or folder", file=given)
    sniffed = sniff(p)
    kind = _SNIFFED.get(sniffed)
    if kind is None:
        raise PolytokError(f"{given}: polytok reads it ({sniffed}) but convert writes from none of that format "
                           f"(sources: {', '.join(FORMAT_NAMES)})")
    if p.is_dir() and target == "gguf" and kind in ("hf", "sentencepiece"):
        return Source("hf", given, given)  # the converter reads the whole model folder
    if p.is_dir() and kind != "hf":
        return Source(kind, str(folder_file(p)), given)
    return Source(kind, given, given)


def folder_file(folder: Path) -> Path:
    """The file of a model folder `polytok.formats.sniff` judges the folder by (the first of ``FOLDER_SEARCH``)."""
    from ..formats.registry import FOLDER_SEARCH, file_in

    return file_in(folder, FOLDER_SEARCH)


def target_of(dest: str | os.PathLike[str], to: str | None = None) -> str:
    """`to` when given, else the format DEST's name says (module notes)."""
    if to is not None:
        if to not in TARGET_FORMATS:
            raise PolytokError(f"--to {to!r} is not a format convert writes (one of: {', '.join(TARGET_FORMATS)})")
        return to
    given = os.fspath(dest)
    name = Path(given).name.lower()
    if name.endswith(".gguf"):
        return "gguf"
    if name.endswith(".model"):
        return "sentencepiece"
    if name.endswith(".tiktoken"):
        return "tiktoken"
    if "tekken" in name and name.endswith(".json"):
        return "tekken"
    if name == "tokenizer.json" or Path(given).is_dir() or given.endswith(("/", os.sep)) or "." not in name:
        return "hf"
    raise PolytokError(f"{given}: its name does not say which format to write (a .gguf, .model, .tiktoken, "
                       "tekken.json, tokenizer.json or a folder): give --to "
                       + "|".join(TARGET_FORMATS))


def directions_from(source_format: str) -> list[str]:
    """The target formats a writer exists for from `source_format`, in `TARGET_FORMATS` order."""
    return [t for t in TARGET_FORMATS if (source_format, t) in WRITERS]


def writer_for(source: Source, target: str) -> Writer:
    """The writer of (source format, target).

    Raises:
        PolytokError: the same format on both sides, or no writer of that direction
            (the message names the directions from this source).
    """
    if source.format == target:
        raise PolytokError(f"{source.given} is already {FORMAT_NAMES[target]}: convert writes another format "
                           f"(--to one of {', '.join(t for t in TARGET_FORMATS if t != target)})")
    found = WRITERS.get((source.format, target))
    if found is None:
        exist = directions_from(source.format)
        listed = ", ".join(f"{source.format} -> {t}" for t in exist) if exist else "none in this version"
        hint = ("; a model folder holding it as tokenizer.model converts to gguf"
                if (source.format, target) == ("sentencepiece", "gguf") else "")
        raise PolytokError(f"{source.given}: polytok convert cannot write {FORMAT_NAMES[source.format]} as "
                           f"{target} (directions from {source.format}: {listed}){hint}")
    return found
