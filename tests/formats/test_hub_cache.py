"""`polytok.load` of a Hugging Face model name through the Hugging Face cache (`polytok.formats.hub_cache`).

The cache folders are laid out as huggingface_hub writes them (hub_support.py), and huggingface_hub's
own readers (``scan_cache_dir``, ``try_to_load_from_cache``, ``snapshot_download(local_files_only=True)``)
are the reference for which folder a name and revision resolve to. Expected ids come from HF
tokenizers (sentencepiece for the ``.model``) on the same files.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from fixtures import fixture_path

import polytok
from formats.hub_support import (
    HF_VARIABLES,
    clear_hf_environment,
    commit_of,
    forbid_network,
    repo_folder,
    write_snapshot,
)
from polytok.cli.main import main
from polytok.formats import hub_cache

huggingface_hub = pytest.importorskip("huggingface_hub")
tokenizers = pytest.importorskip("tokenizers")
find_snapshot = huggingface_hub.snapshot_download  # the reference (the tests forbid its downloads)

TEXTS = ["Hello world, it's 2026!", "  déjà vu\n\tnaïve 🙂 <|im_start|> x"]
QWEN = "Qwen/Qwen3-0.6B"
MODEL = "acme/tok"
MAIN, OLD, LOOSE = commit_of("main"), commit_of("old"), commit_of("loose")


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    cache = tmp_path_factory.mktemp("hub")
    write_snapshot(cache, QWEN, commit_of("qwen"), {
        "tokenizer.json": fixture_path("qwen3", "tokenizer.json"),
        "tokenizer_config.json": fixture_path("qwen3", "tokenizer_config.json")}, refs=["main"])
    write_snapshot(cache, MODEL, MAIN, {"tokenizer.json": fixture_path("gpt2", "tokenizer.json")}, refs=["main"])
    write_snapshot(cache, MODEL, OLD, {"tokenizer.json": fixture_path("llama2", "tokenizer.json")},
                   refs=["old", "refs/pr/1"])
    write_snapshot(cache, MODEL, LOOSE, {"tokenizer.model": fixture_path("spm-mistral-v1", "tokenizer.model")})
    write_snapshot(cache, "acme/weights-only", commit_of("w"), {"config.json": b"{}"}, refs=["main"])
    write_snapshot(cache, "gpt2", commit_of("hub gpt2"), {"tokenizer.json": fixture_path("llama2", "tokenizer.json")},
                   refs=["main"])  # the built-in gpt2 comes first
    write_snapshot(cache, "acme/broken", commit_of("b"), {"tokenizer.json": fixture_path("gpt2", "tokenizer.json")})
    (repo_folder(cache, "acme/broken") / "refs").mkdir()
    (repo_folder(cache, "acme/broken") / "refs" / "gone").write_text(commit_of("gone"))
    (repo_folder(cache, "acme/broken") / "refs" / "newline").write_text(commit_of("b") + "\n")
    return cache


@pytest.fixture(autouse=True)
def environment(monkeypatch: pytest.MonkeyPatch, cache: Path) -> None:
    clear_hf_environment(monkeypatch)
    monkeypatch.setenv("HF_HUB_CACHE", str(cache))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    forbid_network(monkeypatch)


def hf_ids(path: Path, text: str) -> list[int]:
    if path.name.endswith(".model"):
        import sentencepiece

        return list(sentencepiece.SentencePieceProcessor(model_file=str(path)).encode(text))
    return list(tokenizers.Tokenizer.from_file(str(path)).encode(text).ids)


def test_huggingface_hub_reads_the_layout(cache: Path) -> None:
    scanned = huggingface_hub.scan_cache_dir(cache)
    info = {repo.repo_id: repo for repo in scanned.repos}
    assert set(info) == {QWEN, MODEL, "acme/weights-only", "gpt2"}  # and acme/broken, a warning:
    assert [str(w).startswith("Reference(s) refer to missing commit hashes") for w in scanned.warnings] == [True]
    refs = {rev.commit_hash: set(rev.refs) for rev in info[MODEL].revisions}
    assert refs == {MAIN: {"main"}, OLD: {"old", "refs/pr/1"}, LOOSE: set()}
    found = huggingface_hub.try_to_load_from_cache(MODEL, "tokenizer.json", cache_dir=cache, revision="old")
    assert Path(found).read_bytes() == fixture_path("llama2", "tokenizer.json").read_bytes()


@pytest.mark.parametrize("revision", [None, "main", "old", "refs/pr/1", OLD, LOOSE])
def test_a_revision_names_the_folder_huggingface_hub_finds(cache: Path, revision: str | None) -> None:
    expected = find_snapshot(MODEL, revision=revision, cache_dir=cache, local_files_only=True)
    assert hub_cache.resolve(MODEL, revision=revision).resolve() == Path(expected).resolve()


@pytest.mark.parametrize(("revision", "source"), [
    (None, ("gpt2", "tokenizer.json")),
    ("old", ("llama2", "tokenizer.json")),
    (OLD, ("llama2", "tokenizer.json")),
    (LOOSE, ("spm-mistral-v1", "tokenizer.model")),
])
def test_each_revision_loads_its_own_files(revision: str | None, source: tuple[str, str]) -> None:
    tok = polytok.load(MODEL, revision=revision)
    for text in TEXTS:
        assert tok.encode(text) == hf_ids(fixture_path(*source), text), text


def test_a_name_loads_as_hf_tokenizers_reads_its_files(cache: Path) -> None:
    tok = polytok.load(QWEN)
    assert Path(tok.facts.source).parent.parent == repo_folder(cache, QWEN)
    for text in TEXTS:
        assert tok.encode(text) == hf_ids(fixture_path("qwen3", "tokenizer.json"), text), text


def test_a_missing_revision_is_one_line(cache: Path) -> None:
    with pytest.raises(huggingface_hub.errors.LocalEntryNotFoundError):
        find_snapshot(MODEL, revision="v9", cache_dir=cache, local_files_only=True)
    with pytest.raises(polytok.FormatError) as caught:
        polytok.load(MODEL, revision="v9")
    assert str(caught.value) == (
        f"{MODEL}: not a file or folder; not in the Hugging Face cache at {cache} (models--acme--tok has no "
        "refs/v9; its revisions: main, old, refs/pr/1); not downloaded: HF_HUB_OFFLINE is set")


def test_a_ref_is_read_as_written() -> None:
    with pytest.raises(huggingface_hub.errors.LocalEntryNotFoundError):  # a newline after the hash is no commit
        find_snapshot("acme/broken", revision="newline", cache_dir=hub_cache.cache_dir(), local_files_only=True)
    with pytest.raises(polytok.FormatError, match="models--acme--broken has no snapshots/'[0-9a-f]{40}\\\\n'"):
        polytok.load("acme/broken", revision="newline")


def test_a_hash_prefix_is_no_revision_and_the_error_names_the_hash(cache: Path) -> None:
    with pytest.raises(huggingface_hub.errors.LocalEntryNotFoundError):
        find_snapshot(MODEL, revision=OLD[:8], cache_dir=cache, local_files_only=True)
    with pytest.raises(polytok.FormatError, match=f"a commit is named by all 40 digits: {OLD}"):
        polytok.load(MODEL, revision=OLD[:8])


@pytest.mark.parametrize(("name", "revision", "found"), [
    ("Qwen/Qwen3-8B", None, "no models--Qwen--Qwen3-8B"),
    ("acme/broken", "gone", f"models--acme--broken has no snapshots/{commit_of('gone')} (refs/gone)"),
    (MODEL, commit_of("x"), f"models--acme--tok has no snapshots/{commit_of('x')})"),
    ("acme/broken", "newline", f"models--acme--broken has no snapshots/{commit_of('b') + chr(10)!r} (refs/newline)"),
    ("acme/weights-only", None, f"models--acme--weights-only/snapshots/{commit_of('w')} (refs/main) holds no "
                                "tokenizer file"),
])
def test_what_the_cache_lacks_is_said(cache: Path, name: str, revision: str | None, found: str) -> None:
    with pytest.raises(polytok.FormatError) as caught:
        polytok.load(name, revision=revision)
    message = str(caught.value)
    assert message.startswith(f"{name}: not a file or folder; not in the Hugging Face cache at {cache} ({found}")
    assert "\n" not in message


def test_hf_hub_cache_comes_before_hf_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    write_snapshot(home / "hub", MODEL, MAIN, {"tokenizer.json": fixture_path("gpt2", "tokenizer.json")},
                   refs=["main"])
    write_snapshot(tmp_path / "hub_cache", MODEL, OLD, {"tokenizer.json": fixture_path("llama2", "tokenizer.json")},
                   refs=["main"])
    monkeypatch.setenv("HF_HOME", str(home))
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub_cache"))
    assert polytok.load(MODEL).encode(TEXTS[0]) == hf_ids(fixture_path("llama2", "tokenizer.json"), TEXTS[0])
    monkeypatch.delenv("HF_HUB_CACHE")
    assert polytok.load(MODEL).encode(TEXTS[0]) == hf_ids(fixture_path("gpt2", "tokenizer.json"), TEXTS[0])


# each row: the environment, for the cache folder and for offline mode
ENVIRONMENTS = [
    {},
    {"HF_HOME": "/h"},
    {"HF_HOME": "~/h", "XDG_CACHE_HOME": "/x"},
    {"XDG_CACHE_HOME": "/x"},
    {"HF_HUB_CACHE": "/c", "HF_HOME": "/h", "HUGGINGFACE_HUB_CACHE": "/old"},
    {"HUGGINGFACE_HUB_CACHE": "/old", "HF_HOME": "/h"},
    {"HF_HUB_CACHE": "$BASE/c", "BASE": "/b"},
    {"HF_HUB_OFFLINE": "1"},
    {"HF_HUB_OFFLINE": "yes"},
    {"HF_HUB_OFFLINE": "0", "TRANSFORMERS_OFFLINE": "1"},
    {"HF_HUB_OFFLINE": "", "TRANSFORMERS_OFFLINE": "TRUE"},
    {"TRANSFORMERS_OFFLINE": "on"},
    {"HF_HUB_OFFLINE": "false"},
]

_READ_CONSTANTS = """
import importlib, json, os, sys
import huggingface_hub.constants as constants
out = []
for env in json.loads(sys.argv[1]):
    for name in env["clear"]:
        os.environ.pop(name, None)
    os.environ.update(env["set"])
    importlib.reload(constants)
    out.append([constants.HF_HUB_CACHE, constants.HF_HUB_OFFLINE])
print(json.dumps(out))
"""


def test_cache_folder_and_offline_mode_as_huggingface_hub_reads_them(monkeypatch: pytest.MonkeyPatch,
                                                                    tmp_path: Path) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    clear = [*HF_VARIABLES, "BASE"]
    rows = [{"clear": clear, "set": env} for env in ENVIRONMENTS]
    env = {k: v for k, v in os.environ.items() if k not in clear}
    done = subprocess.run([sys.executable, "-c", _READ_CONSTANTS, json.dumps(rows)], env=env, check=True,
                          capture_output=True, text=True)
    expected = json.loads(done.stdout)
    for row, (cache, offline) in zip(ENVIRONMENTS, expected, strict=True):
        for name in clear:
            monkeypatch.delenv(name, raising=False)
        for name, value in row.items():
            monkeypatch.setenv(name, value)
        assert (str(hub_cache.cache_dir()), hub_cache.offline() is not None) == (cache, offline), row


def test_an_existing_path_and_the_builtin_gpt2_come_first(cache: Path, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    local = tmp_path / MODEL
    local.mkdir(parents=True)
    (local / "tokenizer.json").write_bytes(fixture_path("llama2", "tokenizer.json").read_bytes())
    monkeypatch.chdir(tmp_path)
    assert polytok.load(MODEL).encode(TEXTS[0]) == hf_ids(fixture_path("llama2", "tokenizer.json"), TEXTS[0])
    with pytest.raises(polytok.FormatError, match="revision= apply to a Hugging Face model name"):
        polytok.load(MODEL, revision="old")
    assert polytok.load("gpt2").facts.source == "builtin:gpt2"


@pytest.mark.parametrize("revision", ["../x", "/etc", "a//b", ""])
def test_a_revision_stays_inside_the_model_folder(revision: str) -> None:
    with pytest.raises(polytok.FormatError, match="revision must be a relative name"):
        polytok.load(MODEL, revision=revision)


def test_a_missing_file_name_is_no_model_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HF_HUB_OFFLINE")  # forbid_network fails the test if a download is tried
    monkeypatch.chdir(tmp_path)
    for name in ("tokenizer.json", "models/tokenizer.model", "x.gguf"):
        with pytest.raises(polytok.FormatError, match=f"^{name}: no such file or folder$"):
            polytok.load(name)


def test_the_cli_takes_a_name_and_a_revision(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["encode", QWEN, TEXTS[0]]) == 0
    assert capsys.readouterr().out.split() == [str(i) for i in hf_ids(fixture_path("qwen3", "tokenizer.json"),
                                                                      TEXTS[0])]
    for args in (["--revision", "old"], ["-o", "revision=old"], ["--revision", OLD]):
        assert main(["encode", MODEL, TEXTS[0], *args]) == 0
        expected = hf_ids(fixture_path("llama2", "tokenizer.json"), TEXTS[0])
        assert capsys.readouterr().out.split() == [str(i) for i in expected], args


def test_the_cli_says_what_was_tried_in_one_line(cache: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["count", MODEL, "-", "--revision", "v9"]) == 1
    err = capsys.readouterr().err
    assert err == (f"polytok: error: {MODEL}: not a file or folder; not in the Hugging Face cache at {cache} "
                   "(models--acme--tok has no refs/v9; its revisions: main, old, refs/pr/1); "
                   "not downloaded: HF_HUB_OFFLINE is set\n")
