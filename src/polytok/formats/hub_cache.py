"""Model names (``"Qwen/Qwen3-0.6B"``) resolved to a folder of the Hugging Face cache and, with the
``polytok[hub]`` extra, downloaded into it: the tokenizer files only, never the weights.

`resolve` is what `polytok.load` calls for a name that is neither a path nor a built-in name. It
reads the cache as huggingface_hub 2.4.0 writes and reads it:

- the cache folder (constants.py, ``HF_HUB_CACHE``): ``HF_HUB_CACHE``, else the older
  ``HUGGINGFACE_HUB_CACHE``, else ``HF_HOME/hub``, ``HF_HOME`` being by default
  ``XDG_CACHE_HOME/huggingface``, else ``~/.cache/huggingface``; ``~`` and ``$VARS`` expanded.
  huggingface_hub reads these once, at import; `cache_dir` reads them at each call;
- a model's folder, ``models--{org}--{name}`` (file_download.py, ``repo_folder_name``);
- a revision, as ``snapshot_download`` resolves one without the network (_snapshot_download.py,
  its cache-only branch): 40 hex digits name ``snapshots/{hash}`` themselves; any other revision
  (a branch, a tag, ``refs/pr/1``) is the file ``refs/{revision}``, which holds the commit hash as
  written (not stripped). A shorter prefix of a hash is no revision there, nor here (the error
  names the snapshot it would match); the default is ``"main"``;
- ``HF_HUB_OFFLINE``, or when that is unset or empty ``TRANSFORMERS_OFFLINE``, true (``1``, ``ON``,
  ``YES``, ``TRUE``, any case) forbids downloads (constants.py, ``HF_HUB_OFFLINE``).

A snapshot is used as it is: nothing asks the Hub whether a branch has moved on (huggingface_hub
does, when online). A snapshot with no tokenizer file in it (a cache that holds only a model's
``config.json``) counts as missing.

A download goes through huggingface_hub itself, imported only then: ``snapshot_download`` with
`TOKENIZER_FILES` as ``allow_patterns``, or ``hf_hub_download`` of the one file named by
``filename=`` (the way to fetch a GGUF file, or any single file). Either writes to the same cache
folder `cache_dir` reads.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from ..errors import FormatError
from .registry import FOLDER_SEARCH, find_in

__all__ = ["TOKENIZER_FILES", "is_model_name", "cache_dir", "offline", "model_folder", "find_cached", "resolve"]

# What a download fetches (``allow_patterns``, fnmatch globs on the repository's paths): every file
# `polytok.formats.registry.FOLDER_SEARCH` looks for and every side file a folder reader opens.
TOKENIZER_FILES: tuple[str, ...] = (
    "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "added_tokens.json",
    "tokenizer.model", "tekken.json", "vocab.json", "merges.txt", "vocab.txt", "rwkv_vocab*.txt", "*.tiktoken",
    "chat_template.jinja", "chat_template.json", "additional_chat_templates/*.jinja", "config.json",
)

# utils/_validators.py, REPO_ID_REGEX and validate_repo_id: "name" or "namespace/name"
_REPO_ID = re.compile(r"(?:\b[\w\-.]{1,96}\b/)?\b[\w\-.]{1,96}\b", re.ASCII)
_COMMIT = re.compile(r"[0-9a-f]{40}")  # file_download.py, REGEX_COMMIT_HASH
_HEX = re.compile(r"[0-9a-f]+")
_TRUE = {"1", "ON", "YES", "TRUE"}
# a missing file with one of these endings is a mistyped path, never a model name (no network call)
_FILE_ENDINGS = (".json", ".model", ".spm", ".gguf", ".txt", ".tiktoken", ".jinja", ".gz")
_INSTALL = "huggingface_hub is not installed (pip install polytok[hub])"


def is_model_name(name: str) -> bool:
    """Whether `name` is a Hub model id (``"name"`` or ``"org/name"``) that is no file name."""
    return (_REPO_ID.fullmatch(name) is not None and "--" not in name and ".." not in name
            and not name.endswith(".git") and not name.lower().endswith(_FILE_ENDINGS))


def cache_dir() -> Path:
    """The Hugging Face cache folder (``HF_HUB_CACHE``, else ``HF_HOME/hub``, …), from the environment now."""
    base = os.getenv("XDG_CACHE_HOME", os.path.join(os.path.expanduser("~"), ".cache"))
    home = os.path.expandvars(os.path.expanduser(os.getenv("HF_HOME", os.path.join(base, "huggingface"))))
    hub = os.getenv("HF_HUB_CACHE", os.getenv("HUGGINGFACE_HUB_CACHE", os.path.join(home, "hub")))
    return Path(os.path.expandvars(os.path.expanduser(hub)))


def offline() -> str | None:
    """The variable that forbids downloads (``HF_HUB_OFFLINE``, else ``TRANSFORMERS_OFFLINE``), or None."""
    variable = "HF_HUB_OFFLINE" if os.environ.get("HF_HUB_OFFLINE") else "TRANSFORMERS_OFFLINE"
    value = os.environ.get(variable)
    return variable if value is not None and value.upper() in _TRUE else None


def model_folder(cache: Path, name: str) -> Path:
    """``cache/models--{org}--{name}``."""
    return cache / "--".join(("models", *name.split("/")))


def find_cached(cache: Path, name: str, revision: str, filename: str | None = None) -> Path | str:
    """The snapshot folder of `name` at `revision` in `cache` (the file `filename` in it, when given),
    or why there is none."""
    repo = model_folder(cache, name)
    if not repo.is_dir():
        return f"no {repo.name}"
    commit = _commit(repo, revision)
    if commit is None:
        return _no_revision(repo, revision)
    if commit in ("", ".", "..") or "/" in commit or "\\" in commit:
        return f"{repo.name}/refs/{revision} holds {commit!r}, not a commit hash"
    snapshot = repo / "snapshots" / commit
    named = "" if commit == revision else f" (refs/{revision})"
    if not snapshot.is_dir():
        return f"{repo.name} has no snapshots/{commit if _COMMIT.fullmatch(commit) else repr(commit)}{named}"
    if filename is not None:
        file = snapshot / filename
        return file if file.is_file() else f"{repo.name}/snapshots/{commit} has no {filename}"
    if find_in(snapshot, FOLDER_SEARCH) is None:
        return f"{repo.name}/snapshots/{commit}{named} holds no tokenizer file"
    return snapshot


def _commit(repo: Path, revision: str) -> str | None:
    """The commit hash `revision` names in `repo`: itself when it is one, else its ref's content."""
    if _COMMIT.fullmatch(revision):
        return revision
    ref = repo / "refs" / revision
    if not ref.is_file():
        return None
    return ref.read_bytes().decode("utf-8", "replace")  # as written: huggingface_hub does not strip it


def _no_revision(repo: Path, revision: str) -> str:
    """Why `revision` names no commit in `repo`: the refs it has, and the snapshot a hash prefix matches."""
    refs_dir, snapshots_dir = repo / "refs", repo / "snapshots"
    refs = sorted(p.relative_to(refs_dir).as_posix() for p in refs_dir.rglob("*") if p.is_file()) \
        if refs_dir.is_dir() else []
    reason = f"{repo.name} has no refs/{revision}; " + (f"its revisions: {', '.join(refs)}" if refs else "no refs")
    if _HEX.fullmatch(revision) and snapshots_dir.is_dir():
        matches = [p.name for p in snapshots_dir.iterdir() if p.name.startswith(revision)]
        if len(matches) == 1:
            reason += f"; a commit is named by all 40 digits: {matches[0]}"
    return reason


def resolve(name: str, *, revision: str | None = None, filename: str | None = None,
            download: bool = True) -> Path:
    """The folder (or, with `filename`, the file) to load for model name `name`: from the cache, else
    downloaded when `download`, the environment and an installed huggingface_hub allow it.

    Raises:
        FormatError: one line saying what was tried and what was found, naming `name`.
    """
    revision = _checked_revision(name, revision)
    if filename is not None:
        _check_relative(name, "filename", filename)
    cache = cache_dir()
    found = find_cached(cache, name, revision, filename)
    if isinstance(found, Path):
        return found
    tried = f"not a file or folder; not in the Hugging Face cache at {cache} ({found}); not downloaded: "
    if not download:
        raise FormatError(tried + "download=False", file=name)
    variable = offline()
    if variable is not None:
        raise FormatError(tried + f"{variable} is set", file=name)
    fetched = _download(cache, name, revision, filename)
    if isinstance(fetched, str):
        raise FormatError(tried + fetched, file=name)
    if filename is None and find_in(fetched, FOLDER_SEARCH) is None:
        raise FormatError(f"downloaded from the Hugging Face Hub into {fetched}, but the model has no tokenizer "
                          f"file (looked for {', '.join(FOLDER_SEARCH)}; a GGUF file is loaded with filename=)",
                          file=name)
    return fetched


def _checked_revision(name: str, revision: str | None) -> str:
    if revision is None:
        return "main"
    if not isinstance(revision, str):
        raise FormatError(f"revision must be a string, not {type(revision).__name__}", file=name)
    _check_relative(name, "revision", revision)
    return revision


def _check_relative(name: str, what: str, value: object) -> None:
    """`value` is a path inside a model's folder (no ``..``, not absolute)."""
    parts = value.split("/") if isinstance(value, str) else []
    if not parts or any(part in ("", ".", "..") for part in parts) or "\\" in str(value):
        raise FormatError(f"{what} must be a relative name inside the model (like 'main' or 'refs/pr/1'), "
                          f"not {value!r}", file=name)


def _download(cache: Path, name: str, revision: str, filename: str | None) -> Path | str:
    """The snapshot folder (or file) huggingface_hub downloads, or why it did not."""
    try:
        import huggingface_hub
    except ImportError:
        return _INSTALL
    try:
        if filename is not None:
            return Path(huggingface_hub.hf_hub_download(name, filename, revision=revision, cache_dir=cache))
        return Path(huggingface_hub.snapshot_download(name, revision=revision, cache_dir=cache,
                                                      allow_patterns=list(TOKENIZER_FILES)))
    except Exception as exc:  # every failure of the Hub (network, HTTP, validation) becomes the one-line reason
        return _hub_error(exc, name, revision, filename)


def _hub_error(exc: Exception, name: str, revision: str, filename: str | None) -> str:
    """One line for a huggingface_hub error (its messages span lines and repeat the request id)."""
    from huggingface_hub import errors

    if isinstance(exc, errors.GatedRepoError):
        return f"the Hub's {name} is gated (accept its terms on the Hub, then log in: hf auth login)"
    if isinstance(exc, errors.RepositoryNotFoundError):
        return f"the Hub has no model {name} (or it is private: log in with hf auth login)"
    if isinstance(exc, errors.RevisionNotFoundError):
        return f"the Hub's {name} has no revision {revision}"
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    first = lines[0] if lines else type(exc).__name__
    if isinstance(exc, errors.LocalEntryNotFoundError):
        return f"the Hub could not be reached ({first.removeprefix('Got: ')})"
    if isinstance(exc, errors.EntryNotFoundError) and filename is not None:
        return f"the Hub's {name} has no file {filename} at {revision}"
    return f"{type(exc).__name__}: {first}"
