"""Downloads of a model name missing from the Hugging Face cache (`polytok.formats.hub_cache.resolve`).

No test uses the network: huggingface_hub's ``snapshot_download`` and ``hf_hub_download`` are replaced
by stand-ins that record what they were asked for and write what the Hub would into the cache
(hub_support.py's layout). Which files a download fetches is decided by huggingface_hub's own
``filter_repo_objects`` on the patterns polytok passes. Expected ids come from HF tokenizers.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest
from fixtures import fixture_path, gguf_vocab_path

import polytok
from formats.hub_support import clear_hf_environment, commit_of, write_snapshot
from polytok.formats import hub_cache
from polytok.formats.registry import FOLDER_SEARCH

huggingface_hub = pytest.importorskip("huggingface_hub")
tokenizers = pytest.importorskip("tokenizers")
from huggingface_hub.utils import filter_repo_objects  # noqa: E402

MODEL = "acme/model"
TEXT = "Hello world, it's 2026!\n  déjà vu"

# a repository's files as the Hub lists them: weights, docs and every kind of tokenizer file
REPOSITORY = [
    ".gitattributes", "README.md", "LICENSE", "config.json", "generation_config.json",
    "model.safetensors", "model-00001-of-00002.safetensors", "model.safetensors.index.json",
    "pytorch_model.bin", "tf_model.h5", "flax_model.msgpack", "onnx/model.onnx", "model-Q8_0.gguf",
    "original/consolidated.00.pth", "original/params.json", "original/tokenizer.model",
    "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "added_tokens.json",
    "tokenizer.model", "tekken.json", "vocab.json", "merges.txt", "vocab.txt", "rwkv_vocab_v20230424.txt",
    "cl100k_base.tiktoken", "chat_template.jinja", "chat_template.json", "additional_chat_templates/tools.jinja",
]
TOKENIZER_FILES = {
    "config.json", "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "added_tokens.json",
    "tokenizer.model", "tekken.json", "vocab.json", "merges.txt", "vocab.txt", "rwkv_vocab_v20230424.txt",
    "cl100k_base.tiktoken", "chat_template.jinja", "chat_template.json", "additional_chat_templates/tools.jinja",
}


@pytest.fixture(autouse=True)
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    clear_hf_environment(monkeypatch)
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    return tmp_path / "hub"


class Hub:
    """Stand-ins for huggingface_hub's downloads, serving `files` and recording each call."""

    def __init__(self, files: Mapping[str, Path | bytes], error: Exception | None = None) -> None:
        self.files, self.error = files, error
        self.calls: list[tuple[str, dict[str, Any]]] = []

    def install(self, monkeypatch: pytest.MonkeyPatch) -> Hub:
        monkeypatch.setattr(huggingface_hub, "snapshot_download", self.snapshot_download)
        monkeypatch.setattr(huggingface_hub, "hf_hub_download", self.hf_hub_download)
        return self

    def snapshot_download(self, repo_id: str, **kwargs: Any) -> str:
        self.calls.append(("snapshot_download", {"repo_id": repo_id, **kwargs}))
        wanted = filter_repo_objects(items=list(self.files), allow_patterns=kwargs.get("allow_patterns"))
        return str(self._write(repo_id, kwargs, {name: self.files[name] for name in wanted}))

    def hf_hub_download(self, repo_id: str, filename: str, **kwargs: Any) -> str:
        self.calls.append(("hf_hub_download", {"repo_id": repo_id, "filename": filename, **kwargs}))
        return str(self._write(repo_id, kwargs, {filename: self.files[filename]}) / filename)

    def _write(self, repo_id: str, kwargs: dict[str, Any], files: Mapping[str, Path | bytes]) -> Path:
        if self.error is not None:
            raise self.error
        revision = kwargs.get("revision") or "main"
        return write_snapshot(Path(kwargs["cache_dir"]), repo_id, commit_of(revision), files, refs=[revision])


def hf_ids(path: Path, text: str) -> list[int]:
    return list(tokenizers.Tokenizer.from_file(str(path)).encode(text).ids)


def test_the_patterns_fetch_the_tokenizer_files_and_no_weights() -> None:
    fetched = set(filter_repo_objects(items=REPOSITORY, allow_patterns=list(hub_cache.TOKENIZER_FILES)))
    assert fetched == TOKENIZER_FILES


def test_each_file_a_folder_is_searched_for_is_fetched() -> None:
    for name in FOLDER_SEARCH:
        assert name in hub_cache.TOKENIZER_FILES, name


def test_a_missing_model_is_downloaded_once(monkeypatch: pytest.MonkeyPatch, cache: Path) -> None:
    gpt2 = {name: fixture_path("gpt2", name) for name in ("tokenizer.json", "tokenizer_config.json", "vocab.json",
                                                          "merges.txt", "special_tokens_map.json")}
    hub = Hub({**gpt2, "model.safetensors": b"weights", "model-Q8_0.gguf": b"GGUF"}).install(monkeypatch)
    tok = polytok.load(MODEL, revision="v1")
    assert tok.encode(TEXT) == hf_ids(fixture_path("gpt2", "tokenizer.json"), TEXT)
    [(function, call)] = hub.calls
    assert function == "snapshot_download"
    assert call == {"repo_id": MODEL, "revision": "v1", "cache_dir": cache,
                    "allow_patterns": list(hub_cache.TOKENIZER_FILES)}
    snapshot = cache / "models--acme--model" / "snapshots" / commit_of("v1")
    assert sorted(p.name for p in snapshot.iterdir()) == sorted(gpt2)
    assert polytok.load(MODEL, revision="v1").encode(TEXT) == tok.encode(TEXT)
    assert len(hub.calls) == 1  # the second load reads the cache


def test_a_cached_snapshot_without_tokenizer_files_is_completed(monkeypatch: pytest.MonkeyPatch,
                                                                cache: Path) -> None:
    write_snapshot(cache, MODEL, commit_of("main"), {"config.json": b"{}"}, refs=["main"])
    hub = Hub({"tokenizer.json": fixture_path("gpt2", "tokenizer.json")}).install(monkeypatch)
    assert polytok.load(MODEL).encode(TEXT) == hf_ids(fixture_path("gpt2", "tokenizer.json"), TEXT)
    assert [function for function, _ in hub.calls] == ["snapshot_download"]


def test_a_gguf_file_is_fetched_by_its_name_alone(monkeypatch: pytest.MonkeyPatch, cache: Path) -> None:
    gguf = gguf_vocab_path("gpt-2")
    hub = Hub({"model-Q8_0.gguf": gguf, "tokenizer.json": fixture_path("gpt2", "tokenizer.json")})
    hub.install(monkeypatch)
    tok = polytok.load(MODEL, filename="model-Q8_0.gguf")
    assert tok.facts.format == polytok.load(gguf).facts.format == "gguf"
    assert hub.calls == [("hf_hub_download", {"repo_id": MODEL, "filename": "model-Q8_0.gguf", "revision": "main",
                                              "cache_dir": cache})]
    polytok.load(MODEL, filename="model-Q8_0.gguf")
    assert len(hub.calls) == 1


def refused(name: str, **options: Any) -> str:
    with pytest.raises(polytok.FormatError) as caught:
        polytok.load(name, **options)
    assert "\n" not in str(caught.value)
    return str(caught.value)


@pytest.mark.parametrize(("variable", "value"), [("HF_HUB_OFFLINE", "1"), ("TRANSFORMERS_OFFLINE", "yes")])
def test_offline_mode_downloads_nothing(monkeypatch: pytest.MonkeyPatch, cache: Path, variable: str,
                                        value: str) -> None:
    hub = Hub({"tokenizer.json": fixture_path("gpt2", "tokenizer.json")}).install(monkeypatch)
    monkeypatch.setenv(variable, value)
    assert refused(MODEL) == (f"{MODEL}: not a file or folder; not in the Hugging Face cache at {cache} "
                              f"(no models--acme--model); not downloaded: {variable} is set")
    monkeypatch.delenv(variable)
    assert refused(MODEL, download=False).endswith("; not downloaded: download=False")
    assert hub.calls == []


def test_without_huggingface_hub(monkeypatch: pytest.MonkeyPatch, cache: Path) -> None:
    monkeypatch.setitem(sys.modules, "huggingface_hub", None)
    assert refused("Qwen/Qwen3-0.6B") == (
        f"Qwen/Qwen3-0.6B: not a file or folder; not in the Hugging Face cache at {cache} "
        "(no models--Qwen--Qwen3-0.6B); not downloaded: huggingface_hub is not installed (pip install polytok[hub])")


def _http_error(kind: Callable[..., Exception], status: int) -> Exception:
    httpx = pytest.importorskip("httpx2")
    response = httpx.Response(status, request=httpx.Request("GET", "https://hub.invalid/api/models/acme/model"))
    return kind(f"{status} Client Error.\n\nmore lines", response=response)


@pytest.mark.parametrize(("error", "reason"), [
    (lambda: _http_error(huggingface_hub.errors.RepositoryNotFoundError, 404),
     "the Hub has no model acme/model (or it is private: log in with hf auth login)"),
    (lambda: _http_error(huggingface_hub.errors.GatedRepoError, 403),
     "the Hub's acme/model is gated (accept its terms on the Hub, then log in: hf auth login)"),
    (lambda: _http_error(huggingface_hub.errors.RevisionNotFoundError, 404),
     "the Hub's acme/model has no revision main"),
    (lambda: huggingface_hub.errors.LocalEntryNotFoundError("Got: ConnectError: [Errno -2] Name or service not "
                                                            "known\nAn error happened while trying to locate"),
     "the Hub could not be reached (ConnectError: [Errno -2] Name or service not known)"),
    (lambda: RuntimeError("proxy refused\nsecond line"), "RuntimeError: proxy refused"),
])
def test_a_failed_download_is_one_line(monkeypatch: pytest.MonkeyPatch, cache: Path,
                                       error: Callable[[], Exception], reason: str) -> None:
    Hub({}, error=error()).install(monkeypatch)
    assert refused(MODEL) == (f"{MODEL}: not a file or folder; not in the Hugging Face cache at {cache} "
                              f"(no models--acme--model); not downloaded: {reason}")


def test_a_model_without_tokenizer_files(monkeypatch: pytest.MonkeyPatch, cache: Path) -> None:
    Hub({"model.safetensors": b"weights", "model-Q8_0.gguf": b"GGUF"}).install(monkeypatch)
    message = refused(MODEL)
    assert message.startswith(f"{MODEL}: downloaded from the Hugging Face Hub into {cache}")
    assert message.endswith(f"but the model has no tokenizer file (looked for {', '.join(FOLDER_SEARCH)}; "
                            "a GGUF file is loaded with filename=)")
