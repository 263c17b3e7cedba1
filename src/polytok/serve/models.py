"""The tokenizers a `polytok serve` page may use, and the rule for paths typed in the page.

Three sources, all read with `polytok.load`:

- the built-in ``gpt2``;
- the models given on the command line (the person starting the server chose them:
  any path, loaded at start-up so a bad one stops the server with its error);
- a path typed in the page, read only when it lies under a folder given with
  ``--root``. The check is on the real path (``os.path.realpath``: symbolic links
  and ``..`` resolved), so a link inside a root that points outside it is refused;
  the sibling files a reader may open beside the model (a folder's
  ``tokenizer_config.json``, ``merges.txt`` beside ``vocab.json``) are checked the
  same way. Without ``--root`` no typed path is read. Path-loaded tokenizers are
  kept, the least recently used dropped beyond `MAX_PATH_MODELS`.

Only regular files are read: the model, every entry of its folder and of the
folders one level below it (where readers look for siblings such as
``additional_chat_templates/*.jinja``) must be a regular file or a folder once
links are followed. A FIFO, socket or device under a root would block the reader's
``open`` (a FIFO waits for a writer) or never end; such a model is refused before
anything is opened.

Requests run at once in several threads: the registry's tables are guarded by a
lock held only for lookups and updates; loading a path takes that path's own lock
(one load per file, while other requests go on). Encoding with a loaded
`Tokenizer` needs no lock (its word caches are dicts whose single operations are
atomic, and each call's state is its own).
"""

from __future__ import annotations

import os
import stat
import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from ..errors import PolytokError
from ..formats import BUILTIN, load
from ..tokenizer import Tokenizer

__all__ = ["ApiError", "Entry", "Registry", "MAX_PATH_MODELS", "short_names"]

MAX_PATH_MODELS = 8


class ApiError(Exception):
    """A request the server refuses: an HTTP status and a sentence for the page."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


@dataclass
class Entry:
    """One loaded tokenizer, under the name the page uses for it."""

    name: str
    tokenizer: Tokenizer
    origin: str  # "builtin" | "command line" | "path"

    def describe(self) -> dict[str, Any]:
        tok = self.tokenizer
        return {"name": self.name, "origin": self.origin, "format": tok.facts.format,
                "source": tok.facts.source, "size": len(tok),
                "default_special": tok.default_special.value}


class Registry:
    """Names to tokenizers; `get` also loads a path under one of `roots`."""

    def __init__(self, roots: list[str] | None = None) -> None:
        self.roots = [os.path.realpath(r) for r in roots or []]
        for root in self.roots:
            if not os.path.isdir(root):
                raise PolytokError(f"--root {root}: not a folder")
        self._fixed: dict[str, Entry] = {}
        self._paths: OrderedDict[str, Entry] = OrderedDict()
        self._lock = threading.Lock()  # the two tables above and `_loading`
        self._loading: dict[str, threading.Lock] = {}  # a real path being loaded -> its lock

    def add_builtin(self, name: str = "gpt2") -> Entry:
        return self.add(name, load(name), "builtin")

    def add(self, spec: str, tokenizer: Tokenizer, origin: str = "command line") -> Entry:
        """Register a tokenizer (given on the command line) under the argument as written."""
        entry = Entry(spec, tokenizer, origin)
        with self._lock:
            self._fixed[spec] = entry
        return entry

    def listing(self) -> list[dict[str, Any]]:
        """Each model's description, with ``label``: its short name (`short_names`)."""
        with self._lock:
            entries = [*self._fixed.values(), *self._paths.values()]
        labels = short_names([e.name for e in entries])
        return [{**e.describe(), "label": label} for e, label in zip(entries, labels)]

    def get(self, name: Any) -> Entry:
        """The tokenizer called `name`: a registered name, else a path under a root.

        Raises:
            ApiError: 400 not a name, 403 outside every root (or no root), 404 no such
                file, 400 a file polytok cannot read as a tokenizer.
        """
        if not isinstance(name, str) or not name:
            raise ApiError(400, "'model' must be a non-empty string: a loaded model's name or a path")
        with self._lock:
            fixed = self._fixed.get(name)
        if fixed is not None:
            return fixed
        real = self.resolve(name)
        with self._lock:
            found = self._loaded(real)
            if found is not None:
                return found
            loading = self._loading.setdefault(real, threading.Lock())
        with loading:  # one load of a file at a time; other files and other requests go on
            with self._lock:
                found = self._loaded(real)
            return found if found is not None else self._load(name, real)

    def _loaded(self, real: str) -> Entry | None:
        """The path-loaded entry of `real`, now the most recently used (call with `_lock` held)."""
        entry = self._paths.get(real)
        if entry is not None:
            self._paths.move_to_end(real)
        return entry

    def _load(self, name: str, real: str) -> Entry:
        """Read `real` (with its lock held) and keep it; the least recently used beyond the cap goes."""
        entry: Entry | None = None
        try:
            entry = Entry(real, _read(name, real), "path")
        finally:
            with self._lock:
                if entry is not None:
                    self._paths[real] = entry
                    while len(self._paths) > MAX_PATH_MODELS:
                        self._paths.popitem(last=False)
                self._loading.pop(real, None)
        return entry

    def resolve(self, name: str) -> str:
        """The real path of `name` when it lies under a root (a relative name is taken from each root in turn)."""
        if not self.roots:
            raise ApiError(403 if _looks_like_path(name) else 404,
                           f"{name!r} is not a loaded model, and this server reads no other path "
                           "(start it with --root FOLDER to allow paths under FOLDER)")
        if "\x00" in name:
            raise ApiError(400, "a path cannot contain a NUL character")
        candidates = [name] if os.path.isabs(name) else [os.path.join(root, name) for root in self.roots]
        for candidate in candidates:
            real = os.path.realpath(candidate)
            root = self._root_of(real)
            if root is None:
                continue
            if not os.path.exists(real):
                continue
            self._check_folder(real)
            return real
        if any(self._root_of(os.path.realpath(c)) is not None for c in candidates):
            raise ApiError(404, f"{name}: no such file or folder under the --root folders")
        raise ApiError(403, f"{name}: outside the folders this server may read (--root)")

    def _root_of(self, real: str) -> str | None:
        for root in self.roots:
            if real == root or os.path.commonpath([root, real]) == root:
                return root
        return None

    def _check_folder(self, real: str) -> None:
        """Refuse a model whose folder (or a folder just below it) holds a link out of the roots, or
        anything but regular files and folders: a reader may open the files beside the model."""
        folder = real if os.path.isdir(real) else os.path.dirname(real)
        self._check_entry(real, real)
        for path in _entries(folder):
            self._check_entry(path, real)
            if os.path.isdir(path) and path != real:
                for below in _entries(path):
                    self._check_entry(below, real)

    def _check_entry(self, path: str, model: str) -> None:
        target = os.path.realpath(path)
        if self._root_of(target) is None:
            raise ApiError(403, f"{path} links outside the --root folders; refused")
        try:
            mode = os.stat(target).st_mode
        except OSError:  # a dangling link, or gone since: nothing there to read
            return
        if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
            what = "it" if path == model else f"{path} beside it"
            raise ApiError(400, f"cannot load {model}: {what} is not a regular file (a FIFO, socket or "
                                "device would block or never end); refused")


_GENERIC = frozenset({"tokenizer.json", "tokenizer.model", "tokenizer_config.json", "tekken.json", "vocab.json",
                      "spiece.model", "sentencepiece.bpe.model"})


def short_names(names: list[str]) -> list[str]:
    """The names the page shows: each path's last part (a file with a generic name such as
    ``tokenizer.json`` with its folder); names that still collide take parent folders until they differ."""
    parts = [[p for p in name.replace(os.sep, "/").split("/") if p] or [name] for name in names]
    depth = [2 if len(p) > 1 and p[-1] in _GENERIC else 1 for p in parts]
    while True:
        shown = ["/".join(p[-d:]) for p, d in zip(parts, depth)]
        clash = [i for i, label in enumerate(shown) if shown.count(label) > 1 and depth[i] < len(parts[i])]
        if not clash:
            return shown
        for i in clash:
            depth[i] += 1


def _read(name: str, real: str) -> Tokenizer:
    try:
        return load(real)
    except PolytokError as exc:
        raise ApiError(400, f"cannot load {name}: {exc}") from None


def _entries(folder: str) -> list[str]:
    try:
        names = sorted(os.listdir(folder))
    except OSError as exc:
        raise ApiError(403, f"cannot list the folder {folder}: {exc.strerror}") from None
    return [os.path.join(folder, name) for name in names]


def _looks_like_path(name: str) -> bool:
    return os.sep in name or name.startswith(".") or name not in BUILTIN and "." in name
