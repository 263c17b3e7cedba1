"""The shape of a corpus manifest, checked before `verify` or ``--resume`` uses any of it.

A manifest is read from a folder that may have been edited by hand or by
anything else, so every key the corpus code reads is checked first, and the
first that is wrong is a `FormatError` naming the manifest and the key path
(``shards[3].files.bin.bytes``): a wrong type, a negative count, a number that
is not an integer (``1e400`` reads as a float), a shard file name that is not
the shard's own (``../../etc/passwd`` would be read outside the folder), an
unknown dtype, or a shard pointing at an input that is not listed. Written with
`polytok.corpus.manifest.header` and `polytok.corpus.output.Output` as the
reference of what is there.
"""

from __future__ import annotations

import re
from typing import Any

from ..errors import FormatError

__all__ = ["check_manifest"]

_SHA256 = re.compile(r"[0-9a-f]{64}")
_SHARD = re.compile(r"shard-[0-9]{6}")
_FILE_KINDS = ({"bin", "idx"}, {"parquet"})
_COUNTS = ("documents", "tokens", "bad_records", "input_lines")
_SHARD_COUNTS = ("start", "end", "lines", "documents", "tokens", "bad_records")


class _Bad(Exception):
    def __init__(self, key: str, reason: str) -> None:
        super().__init__(reason)
        self.key, self.reason = key, reason


def check_manifest(data: Any, path: str) -> None:
    """A `FormatError` naming `path` and the key of the first value the corpus code could not use."""
    try:
        _check(data)
    except _Bad as bad:
        raise FormatError(bad.reason, file=path, key=bad.key) from None


def _get(obj: dict[str, Any], key: str, where: str, kind: type | tuple[type, ...]) -> Any:
    name = f"{where}.{key}" if where else key
    if key not in obj:
        raise _Bad(name, "missing")
    value = obj[key]
    if kind is int:
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise _Bad(name, f"{_show(value)} is not a count (an integer >= 0)")
    elif not isinstance(value, kind) or (kind is not bool and isinstance(value, bool)):
        expected = kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
        raise _Bad(name, f"{_show(value)} is not a {expected}")
    return value


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _check(data: Any) -> None:
    if not isinstance(data, dict):
        raise _Bad("", f"the manifest is a JSON {type(data).__name__}, not an object")
    _get(data, "complete", "", bool)
    for key in _COUNTS:
        _get(data, key, "", int)
    settings = _get(data, "settings", "", dict)
    if _get(settings, "dtype", "settings", str) not in ("uint16", "uint32"):
        raise _Bad("settings.dtype", f"{_show(settings['dtype'])} is neither uint16 nor uint32")
    _get(data, "tokenizer", "", dict)
    inputs = _get(data, "inputs", "", list)
    for number, item in enumerate(inputs):
        where = f"inputs[{number}]"
        if not isinstance(item, dict):
            raise _Bad(where, "not an object")
        _get(item, "path", where, str)
        _get(item, "kind", where, str)
        _get(item, "bytes", where, int)
        _sha256(item, where)
    for number, shard in enumerate(_get(data, "shards", "", list)):
        _check_shard(shard, f"shards[{number}]", len(inputs))
    for number, error in enumerate(_get(data, "errors", "", list)):
        where = f"errors[{number}]"
        if not isinstance(error, dict):
            raise _Bad(where, "not an object")
        for key in ("shard", "file", "reason"):
            _get(error, key, where, str)


def _sha256(obj: dict[str, Any], where: str) -> None:
    if not _SHA256.fullmatch(_get(obj, "sha256", where, str)):
        raise _Bad(f"{where}.sha256", f"{_show(obj['sha256'])} is not a sha256 (64 lowercase hex digits)")


def _check_shard(shard: Any, where: str, n_inputs: int) -> None:
    if not isinstance(shard, dict):
        raise _Bad(where, "not an object")
    name = _get(shard, "name", where, str)
    if not _SHARD.fullmatch(name):
        raise _Bad(f"{where}.name", f"{_show(name)} is not a shard name (shard-NNNNNN)")
    if _get(shard, "input", where, int) >= n_inputs:
        raise _Bad(f"{where}.input", f"input {shard['input']} is not listed ({n_inputs} inputs)")
    for key in _SHARD_COUNTS:
        _get(shard, key, where, int)
    files = _get(shard, "files", where, dict)
    if set(files) not in _FILE_KINDS:
        raise _Bad(f"{where}.files", f"holds {', '.join(map(str, files)) or 'nothing'}, not bin and idx, or parquet")
    for kind, info in files.items():
        key = f"{where}.files.{kind}"
        if not isinstance(info, dict):
            raise _Bad(key, "not an object")
        if _get(info, "name", key, str) != f"{name}.{kind}":
            raise _Bad(f"{key}.name", f"{_show(info['name'])} is not {name}.{kind}")
        _get(info, "bytes", key, int)
        _sha256(info, key)
