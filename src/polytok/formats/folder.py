"""The one lookup of the files in a model folder, for every reader that opens one.

A Hugging Face model folder holds ``tokenizer.json``, ``tokenizer_config.json``,
``special_tokens_map.json``, ``added_tokens.json``, ``chat_template.jinja``,
``config.json``, ``tokenizer.model``, ``tekken.json``, … and polytok reads any of
them stored gzip-compressed as ``NAME.gz`` too (``tokenizer.json.gz`` is how large
vocabularies are often kept). `find` is where that rule lives: ``NAME`` first,
then ``NAME.gz``; `load`, `polytok.convert` (and its special-vocab, redefinition
and vocabulary readers), the chat templates and the classic-vocabulary settings
all look a file up here, so one folder reads the same way on every path.
Decompression is `polytok.formats.compressed` (by the gzip magic, not the name).

transformers reads only the plain names (``PreTrainedTokenizerBase.from_pretrained``,
``vocab_files_names``): `polytok.parity.engines` hands it a decompressed copy of a
folder that holds ``.gz`` files.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..errors import FormatError
from .compressed import read_bytes

__all__ = ["find", "where", "compressed_files", "parse_json", "read_json", "read_object", "read_text",
           "read_file_bytes", "additional_templates"]

GZ = ".gz"


def find(folder: Path, name: str) -> Path | None:
    """``folder/name``, else ``folder/name.gz``: the file a reader opens for `name` (None when neither is a file)."""
    for candidate in (folder / name, folder / (name + GZ)):
        if candidate.is_file():
            return candidate
    return None


def where(folder: Path, name: str) -> Path:
    """The file `find` gives, or ``folder/name`` when there is none (for an error message)."""
    return find(folder, name) or folder / name


def compressed_files(folder: Path) -> list[Path]:
    """The ``.gz`` files of `folder` that `find` would open for a plain name."""
    return sorted(p for p in folder.glob("*" + GZ) if p.is_file() and not (folder / p.name[:-len(GZ)]).is_file())


def parse_json(path: Path) -> Any:
    """One JSON file (gzip-compressed or not); errors name the file and the line."""
    raw = read_bytes(path)
    try:
        return json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise FormatError("not UTF-8 text", file=str(path), offset=exc.start) from None
    except json.JSONDecodeError as exc:
        raise FormatError(f"invalid JSON: {exc.msg} (column {exc.colno})", file=str(path),
                          line=exc.lineno, offset=exc.pos) from None


def read_json(folder: Path, name: str) -> Any | None:
    """The parsed JSON of `name` in `folder` (None when the folder has no such file)."""
    path = find(folder, name)
    return None if path is None else parse_json(path)


def read_object(folder: Path, name: str) -> dict[str, Any] | None:
    """`read_json` of a file that must hold a JSON object."""
    data = read_json(folder, name)
    if data is not None and not isinstance(data, dict):
        raise FormatError("expected a JSON object", file=str(where(folder, name)))
    return data


def read_text(folder: Path, name: str) -> str | None:
    """The UTF-8 text of `name` in `folder` (None when absent)."""
    path = find(folder, name)
    if path is None:
        return None
    try:
        return read_bytes(path).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise FormatError("not UTF-8 text", file=str(path), offset=exc.start) from None


def read_file_bytes(folder: Path, name: str) -> bytes | None:
    """The (decompressed) bytes of `name` in `folder` (None when absent)."""
    path = find(folder, name)
    return None if path is None else read_bytes(path)


def additional_templates(folder: Path) -> dict[str, str]:
    """``additional_chat_templates/NAME.jinja`` (or ``NAME.jinja.gz``) by NAME, in name order."""
    extra = folder / "additional_chat_templates"
    if not extra.is_dir():
        return {}
    files = sorted({p.name.removesuffix(GZ) for p in extra.iterdir() if p.name.endswith((".jinja", ".jinja" + GZ))})
    names = [f.removesuffix(".jinja") for f in files]
    out = {}
    for name in names:
        text = read_text(extra, name + ".jinja")
        if text is not None:
            out[name] = text
    return out
