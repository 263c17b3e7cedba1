"""The output folder of a corpus run: a fresh start or ``--resume``, shards in, manifest out.

Engines hand over encoded shards in any order. Each shard's files are written
as soon as it arrives (to a temporary name, renamed when whole); the manifest
takes shards only in input order, so it always lists a prefix of complete
shards. It is rewritten as the count of listed shards reaches 1, 2, 4, 8… (so a short run
shows its first shards at once), else at most once a second (`MANIFEST_EVERY_S`),
and at the end: rewriting it after each of thousands of small shards would cost
time quadratic in their number, and a shard whose files are whole but not yet
listed is simply encoded again on resume. Resuming keeps the longest prefix whose files are still whole (size and
sha256 as listed), removes temporary files and shard files beyond it, and the
engine encodes the rest: nothing listed is read again, nothing is listed twice.

A manifest that lists no shard holds nothing to keep: a fresh run may take its
folder, and ``--resume`` of it starts afresh whatever its settings were. A run
that fails before listing a shard removes what it wrote (`Output.abandon`), so
running it again with the arguments put right needs no clean-up by hand.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import Any

from ..errors import FormatError
from .manifest import MANIFEST, read_manifest, write_manifest
from .readers import Split
from .shards import TEMP_SUFFIX, Settings, ShardResult, sha256_file, write_shard

__all__ = ["Output"]

MANIFEST_EVERY_S = 1.0  # the manifest is rewritten at most this often (and at the end)
Progress = Callable[[int, int, int], None]  # (documents, tokens, input bytes) so far


class Output:
    """The shards and manifest of one run in `out_dir` (see the module notes)."""

    def __init__(self, out_dir: str, manifest: dict[str, Any], splits: list[Split], resume: bool) -> None:
        self.out_dir, self.splits = out_dir, splits
        self.settings = Settings(**manifest["settings"])
        self.inputs = manifest["inputs"]
        self.pending: dict[int, dict[str, Any]] = {}
        self.bytes_done = 0
        self.ends = {s.file_index: s.end for s in splits}  # each input's size in bytes or rows
        self.made_folder = _make_folder(out_dir)
        self.fresh = True  # this run started the folder's corpus (it resumes no listed shard)
        if resume and os.path.exists(os.path.join(out_dir, MANIFEST)):
            self.manifest = _resumed(read_manifest(out_dir), manifest, out_dir)
            self.fresh = not self.manifest["shards"]
        else:
            _check_empty(out_dir)
            self.manifest = manifest
        self._clean()
        self.written = 0.0
        self.lines_before = [0] * len(self.inputs)
        for shard in self.manifest["shards"]:
            self.lines_before[shard["input"]] += shard["lines"]
        self._write()

    @property
    def next_index(self) -> int:
        """The first split without a complete shard."""
        return len(self.manifest["shards"])

    def _clean(self) -> None:
        """Remove temporary files and shard files that the manifest does not list."""
        listed = {f["name"] for s in self.manifest["shards"] for f in s["files"].values()}
        for name in os.listdir(self.out_dir):
            if name.endswith(TEMP_SUFFIX) or (name.startswith("shard-") and name not in listed):
                os.remove(os.path.join(self.out_dir, name))

    def add(self, result: ShardResult, progress: Progress | None = None) -> None:
        """Write `result`'s files, and list every shard now complete in input order."""
        split = self.splits[result.index]
        entry = {"name": f"shard-{result.index:06d}", "input": split.file_index, "start": split.start,
                 "end": split.end, "lines": result.lines, "documents": result.documents,
                 "tokens": result.tokens, "bad_records": len(result.bad),
                 "files": write_shard(self.out_dir, result, self.settings)}
        self.pending[result.index] = {"entry": entry, "bad": result.bad}
        before = self.next_index
        while self.next_index in self.pending:
            self._list(**self.pending.pop(self.next_index))
            if progress is not None:
                m = self.manifest
                progress(m["documents"], m["tokens"], self._bytes_done())
        crossed_power_of_two = self.next_index.bit_length() > before.bit_length()
        if crossed_power_of_two or time.monotonic() - self.written >= MANIFEST_EVERY_S:
            self._write()

    def _write(self) -> None:
        write_manifest(self.out_dir, self.manifest)
        self.written = time.monotonic()

    def _list(self, entry: dict[str, Any], bad: list[Any]) -> None:
        path = self.inputs[entry["input"]]["path"]
        errors = []
        for b in bad:
            if self.inputs[entry["input"]]["kind"] == "parquet":
                error = {"shard": entry["name"], "file": path, "row": b.place, "reason": b.reason}
                where: dict[str, Any] = {"key": f"{self.settings.column}[{b.place}]"}
            else:
                line = self.lines_before[entry["input"]] + b.place + 1
                error = {"shard": entry["name"], "file": path, "line": line, "reason": b.reason}
                where = {"line": line}
            if self.settings.on_error == "fail":
                raise FormatError(b.reason, file=path, **where)
            errors.append(error)
        self.lines_before[entry["input"]] += entry["lines"]
        m = self.manifest
        m["shards"].append(entry)
        m["errors"].extend(errors)
        m["documents"] += entry["documents"]
        m["tokens"] += entry["tokens"]
        m["bad_records"] += len(errors)
        m["input_lines"] += entry["lines"]

    def _bytes_done(self) -> int:
        """Input bytes of the listed shards (a Parquet shard counts its share of the file's size)."""
        split = self.splits[self.next_index - 1]
        info = self.inputs[split.file_index]
        if info["kind"] == "parquet":
            self.bytes_done += (split.end - split.start) * info["bytes"] // max(self.ends[split.file_index], 1)
        else:
            self.bytes_done += split.end - split.start
        return self.bytes_done

    def finish(self) -> dict[str, Any]:
        self.manifest["complete"] = self.next_index == len(self.splits)
        self._write()
        return self.manifest

    def abandon(self) -> None:
        """After a failure: if this run listed no shard and resumed none, remove its manifest,
        shard and temporary files (and the folder, if it made it and it is now empty)."""
        if not self.fresh or self.next_index:
            return
        for name in os.listdir(self.out_dir):
            if name == MANIFEST or name.endswith(TEMP_SUFFIX) or name.startswith("shard-"):
                os.remove(os.path.join(self.out_dir, name))
        if self.made_folder and not os.listdir(self.out_dir):
            os.rmdir(self.out_dir)


def _make_folder(out_dir: str) -> bool:
    """Create `out_dir` if it does not exist; whether it was created. A `FormatError` naming it if it cannot be."""
    if os.path.isdir(out_dir):
        return False
    try:
        os.makedirs(out_dir)
    except OSError as exc:
        raise FormatError(f"cannot make the output folder: {exc.strerror or exc}", file=out_dir) from None
    return True


def _check_empty(out_dir: str) -> None:
    """A `FormatError` unless `out_dir` holds no corpus: no shard file, and no manifest or one that lists
    no shard (an earlier start that failed; its leftovers are removed by `Output._clean`)."""
    names = os.listdir(out_dir)
    if MANIFEST in names:
        old = read_manifest(out_dir)
        if not old.get("shards") and not old.get("complete"):
            return
    if MANIFEST in names or any(n.startswith("shard-") and not n.endswith(TEMP_SUFFIX) for n in names):
        raise FormatError("already holds a corpus (use --resume to continue it, or an empty folder)",
                          file=out_dir)


_SAME = ("format", "polytok_version", "tokenizer", "settings", "inputs")


def _resumed(old: dict[str, Any], new: dict[str, Any], out_dir: str) -> dict[str, Any]:
    """`new` with the longest prefix of `old`'s shards whose files are whole; FormatError if they differ."""
    if not old.get("shards"):
        return new  # nothing to keep: a start afresh
    for key in _SAME:
        if key == "settings":
            _same_settings(old.get(key), new[key], out_dir)
        elif old.get(key) != new[key]:
            raise FormatError(f"--resume with a different {key} than the run that wrote it", file=out_dir, key=key)
    kept = []
    for shard in old.get("shards", []):
        if not all(_whole(out_dir, f) for f in shard["files"].values()):
            break
        kept.append(shard)
    manifest = dict(new)
    names = {s["name"] for s in kept}
    manifest["shards"] = kept
    manifest["errors"] = [e for e in old.get("errors", []) if e["shard"] in names]
    for key in ("documents", "tokens", "input_lines"):
        manifest[key] = sum(s[key if key != "input_lines" else "lines"] for s in kept)
    manifest["bad_records"] = len(manifest["errors"])
    return manifest


def _same_settings(old: Any, new: dict[str, Any], out_dir: str) -> None:
    """A FormatError naming the first setting `old` (the run being resumed) has otherwise."""
    old = dict(old) if isinstance(old, dict) else {}
    # a manifest from before settings.truncation was recorded: encode applied the file's truncation
    old.setdefault("truncation", "none" if new["truncation"] == "none" else "applied")
    for key, value in new.items():
        if old.get(key) != value:
            hint = " (--truncation applies the tokenizer's truncation and padding)" if key == "truncation" else ""
            raise FormatError(f"--resume with a different settings.{key} ({value!r}) than the run that wrote it "
                              f"({old.get(key)!r}){hint}", file=out_dir, key=f"settings.{key}")
    if set(old) != set(new):
        raise FormatError("--resume with different settings than the run that wrote it", file=out_dir,
                          key="settings")


def _whole(out_dir: str, info: dict[str, Any]) -> bool:
    path = os.path.join(out_dir, info["name"])
    return os.path.isfile(path) and os.path.getsize(path) == info["bytes"] and sha256_file(path) == info["sha256"]
