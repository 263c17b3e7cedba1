"""verify-corpus (and --resume) on a hostile manifest: one line naming the manifest and the key, exit 1.

Plumbing only: a small corpus written by polytok, then one key of its manifest broken at a time
(deep JSON, wrong types, huge or negative numbers, shard files named outside the folder...). No ids
are compared: what is checked is the error line, never a traceback.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from polytok import corpus
from polytok.cli.main import main
from polytok.errors import FormatError


@pytest.fixture(scope="module")
def good(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    folder = tmp_path_factory.mktemp("corpus")
    src = folder / "in.jsonl"
    src.write_text("".join(json.dumps({"text": f"document {i}"}) + "\n" for i in range(40)) + "{bad\n")
    m = corpus.tokenize("gpt2", [str(src)], str(folder / "out"), shard_bytes=400, workers=1)
    return folder / "out", m


def _set(path: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def change(m: dict[str, Any]) -> None:
        *parents, last = path.split(".")
        obj: Any = m
        for part in parents:
            obj = obj[int(part)] if part.isdigit() else obj[part]
        obj[int(last) if last.isdigit() else last] = value
    return change


CASES: dict[str, tuple[Callable[[dict[str, Any]], None] | str, str, str]] = {
    # name: (change, or raw text; the key named; the reason's start)
    "deep": ('{"format": "polytok-corpus/1", "x": ' + "[" * 50_000 + "]" * 50_000 + "}", "", "not JSON (nested"),
    "array": ("[1, 2]", "key format", "not a polytok corpus manifest"),
    "digits": ('{"format": "polytok-corpus/1", "tokens": 1' + "0" * 5000 + "}", "", "not JSON (Exceeds"),
    "complete-str": (_set("complete", "yes"), "key complete", "'yes' is not a bool"),
    "tokens-negative": (_set("tokens", -1), "key tokens", "-1 is not a count"),
    "tokens-float": (_set("tokens", 1e400), "key tokens", "inf is not a count"),
    "tokens-huge": (_set("tokens", 10**400), "key tokens", "1" + "0" * 400 + " but the shards add up to"),
    "shards-object": (_set("shards", {"a": 1}), "key shards", "{'a': 1} is not a list"),
    "shard-null": (_set("shards.0", None), "key shards[0]", "not an object"),
    "shard-docs-str": (_set("shards.1.documents", "3"), "key shards[1].documents", "'3' is not a count"),
    "shard-input": (_set("shards.1.input", 7), "key shards[1].input", "input 7 is not listed"),
    "escape": (_set("shards.0.files.bin.name", "../../etc/passwd"), "key shards[0].files.bin.name",
               "'../../etc/passwd' is not shard-000000.bin"),
    "absolute": (_set("shards.0.files.idx.name", "/etc/passwd"), "key shards[0].files.idx.name",
                 "'/etc/passwd' is not shard-000000.idx"),
    "shard-name": (_set("shards.0.name", "../x"), "key shards[0].name", "'../x' is not a shard name"),
    "files": (_set("shards.0.files", {"bin": {}}), "key shards[0].files", "holds bin, not bin and idx"),
    "bytes": (_set("shards.0.files.bin.bytes", -5), "key shards[0].files.bin.bytes", "-5 is not a count"),
    "sha": (_set("shards.0.files.idx.sha256", 12), "key shards[0].files.idx.sha256", "12 is not a str"),
    "dtype": (_set("settings.dtype", "float64"), "key settings.dtype", "'float64' is neither"),
    "settings": (_set("settings", []), "key settings", "[] is not a dict"),
    "inputs": (_set("inputs.0.bytes", None), "key inputs[0].bytes", "None is not a count"),
    "errors": (_set("errors.0", "oops"), "key errors[0]", "not an object"),
    "error-reason": (_set("errors.0.reason", 3), "key errors[0].reason", "3 is not a str"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_hostile_manifest_is_one_line(good: Any, tmp_path: Path, case: str, capsys: pytest.CaptureFixture[str]) -> None:
    folder, m = good
    out = tmp_path / "out"
    out.mkdir()
    for name in folder.iterdir():
        (out / name.name).write_bytes(name.read_bytes())
    change, key, reason = CASES[case]
    if isinstance(change, str):
        (out / "manifest.json").write_text(change, encoding="utf-8")
    else:
        broken = json.loads(json.dumps(m))
        change(broken)
        (out / "manifest.json").write_text(json.dumps(broken), encoding="utf-8")
    assert main(["verify-corpus", str(out)]) == 1
    err = capsys.readouterr().err
    where = f"{out}/manifest.json: {key + ': ' if key else ''}"
    assert err.count("\n") == 1 and err.startswith(f"polytok: error: {where}{reason}"), err
    if case == "tokens-huge":  # a count, only wrong: --resume recounts from the shards it keeps
        return
    with pytest.raises(FormatError, match="manifest.json"):
        corpus.tokenize("gpt2", [m["inputs"][0]["path"]], str(out), shard_bytes=400, workers=1, resume=True)


def test_damaged_shard_files_matching_a_forged_manifest(good: Any, tmp_path: Path) -> None:
    """Shard files replaced and the manifest's sizes and sha256 forged to match: still one line."""
    import hashlib

    folder, m = good
    out = tmp_path / "out"
    out.mkdir()
    for name in folder.iterdir():
        (out / name.name).write_bytes(name.read_bytes())
    (out / "shard-000000.idx").write_bytes(b"1234567")  # not a whole number of uint64
    forged = json.loads(json.dumps(m))
    forged["shards"][0]["files"]["idx"].update(bytes=7, sha256=hashlib.sha256(b"1234567").hexdigest())
    (out / "manifest.json").write_text(json.dumps(forged), encoding="utf-8")
    with pytest.raises(FormatError, match=r"shard-000000\.idx: 7 bytes, not a whole number of uint64 offsets"):
        corpus.verify(str(out))
