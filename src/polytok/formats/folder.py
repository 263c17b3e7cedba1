"""The one lookup of the files in a model folder, for every reader that opens one.

A Hugging Face model folder holds ``tokenizer.json``, ``tokenizer_config.json``,
``special_tokens_map.json``, ``added_tokens.json``, ``chat_template.jinja``,
``config.json``, ``tokenizer.model``, ``tekken.json``, … and polytok reads any of
them stored gzip-compressed as ``NAME.gz`` too (``tokenizer.json.gz`` is how large
vocabularies are often kept). `find` is where that rule lives: ``NAME`` first,
then ``NAME.gz``; `load`, `polytok.convert.converter` (and its special-vocab, redefinition
and vocabulary readers), the chat templates and the classic-vocabulary settings
all look a file up here, so one folder reads the same way on every path.
Decompression is `polytok.formats.compressed` (by the gzip magic, not the name).

`parse_json_bytes` is the one JSON parse of every reader (tokenizer.json, the
config files, tekken.json, vocab.json): a document nested more than 128 deep
(serde_json's limit, which HF tokenizers hits first), an integer longer than
Python reads (``int_max_str_digits``) and, where asked, a NaN / Infinity literal
(serde_json has none) are each a `FormatError` with the byte offset of the first.

transformers reads only the plain names (``PreTrainedTokenizerBase.from_pretrained``,
``vocab_files_names``): `polytok.parity.engines` hands it a decompressed copy of a
folder that holds ``.gz`` files.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any, NoReturn

from .._config import MAX_JSON_DEPTH
from ..errors import FormatError
from .compressed import read_bytes

__all__ = ["find", "where", "compressed_files", "parse_json", "parse_json_bytes", "read_json", "read_object",
           "read_text", "read_file_bytes", "additional_templates"]

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


def parse_json(path: Path, *, finite: bool = False) -> Any:
    """One JSON file (gzip-compressed or not); errors name the file and the line."""
    return parse_json_bytes(read_bytes(path), str(path), finite=finite)


class _Constant(Exception):
    pass


def _refuse_constant(name: str) -> NoReturn:
    raise _Constant(name)


# the tokens of a JSON text that matter to the refusals below; strings are skipped whole
_TOKENS = re.compile(rb'"(?:[^"\\]|\\.)*+"|[\[\]{}]|-?[0-9]++|NaN|-?Infinity')


def parse_json_bytes(raw: bytes, file: str, *, finite: bool = False) -> Any:
    """Parse JSON text; errors name `file` and the line or byte offset. `finite`: refuse
    NaN / Infinity literals (HF's serde_json does; Python's json reads them)."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise FormatError("not UTF-8 text", file=file, offset=exc.start) from None
    try:
        return json.loads(text, parse_constant=_refuse_constant if finite else None)
    except json.JSONDecodeError as exc:
        raise FormatError(f"invalid JSON: {exc.msg} (column {exc.colno})", file=file,
                          line=exc.lineno, offset=exc.pos) from None
    except RecursionError:
        at = _first(raw, lambda m, depth: depth > MAX_JSON_DEPTH)
        raise FormatError(f"JSON nested more than {MAX_JSON_DEPTH} deep (HF tokenizers' serde_json refuses it "
                          "too: recursion limit exceeded)", file=file, offset=at) from None
    except _Constant as exc:
        at = _first(raw, lambda m, depth: m.group() in (b"NaN", b"Infinity", b"-Infinity"))
        raise FormatError(f"{exc.args[0]} is not a JSON number (HF tokenizers refuses it)", file=file,
                          offset=at) from None
    except ValueError:  # an integer longer than int() reads
        digits = sys.get_int_max_str_digits()
        at = _first(raw, lambda m, depth: len(m.group().lstrip(b"-")) > digits and m.group()[-1:].isdigit())
        raise FormatError(f"an integer of more than {digits} digits", file=file, offset=at) from None


def _first(raw: bytes, hit: Any) -> int | None:
    """The byte offset of the first token of `raw` (outside strings) for which `hit(match, depth)`."""
    depth = 0
    for m in _TOKENS.finditer(raw):
        token = m.group()
        if token in (b"[", b"{"):
            depth += 1
        elif token in (b"]", b"}"):
            depth -= 1
        if hit(m, depth):
            return m.start()
    return None


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
