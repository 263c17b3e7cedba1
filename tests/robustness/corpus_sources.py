"""Small loadable copies of the real fixtures, for mutation fuzzing and the hostile corpus.

A real ``tokenizer.json`` is cut down to its first few hundred vocabulary entries (and
the merges between them) with every other part kept as it is, so a mutant loads in
milliseconds; the copies are written into the fixture cache (never committed: several
fixtures are GitHub-origin). Binary and line formats are used whole or cut by lines.
"""

from __future__ import annotations

import functools
import gzip
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from fixtures import cache_root, fixture_path, gguf_vocab_path

KEEP = 400
HF_NAMES = ("bert-base-uncased", "albert-base-v2-tf5", "gpt2", "llama2", "llama3", "qwen3", "clip",
            "whisper-tiny", "wordlevel-en", "labse-cropped", "gemma3", "chatglm3", "marian-nmt",
            "mistral-v3-hf-converted")
GGUF_NAMES = ("bert-bge", "llama-spm", "gpt-2", "deepseek-coder")
GPT2_PATTERN = r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""


def _cache() -> Path:
    folder = cache_root() / "robustness"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def read_json_fixture(name: str) -> Any:
    raw = fixture_path(name, "tokenizer.json").read_bytes()
    return json.loads(gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw)


def shrink_model(model: dict[str, Any], keep: int = KEEP) -> dict[str, Any]:
    """The model with its first `keep` vocabulary entries (and only the merges among them)."""
    model = dict(model)
    vocab = model.get("vocab")
    if isinstance(vocab, list):
        model["vocab"] = vocab[:keep]
    elif isinstance(vocab, dict):
        model["vocab"] = {k: v for k, v in vocab.items() if v < keep}
        unk = model.get("unk_token")
        if isinstance(unk, str) and unk in vocab:
            model["vocab"][unk] = vocab[unk]
        merges = model.get("merges") or []
        kept = []
        for merge in merges:
            left, right = merge.split(" ", 1) if isinstance(merge, str) else merge
            if left in model["vocab"] and right in model["vocab"] and left + right in model["vocab"]:
                kept.append(merge)
        model["merges"] = kept
    return model


def shrunk_json(name: str) -> Path:
    """A copy of fixture `name`'s tokenizer.json with a cut-down model (cached)."""
    target = _cache() / f"{name}.tokenizer.json"
    if not target.is_file():
        data = read_json_fixture(name)
        data["model"] = shrink_model(data["model"])
        target.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return target


def head_lines(name: str, filename: str, lines: int) -> Path:
    """The first `lines` lines of a line-oriented fixture file (cached)."""
    target = _cache() / f"{name}.{filename}"
    if not target.is_file():
        raw = fixture_path(name, filename).read_bytes()
        target.write_bytes(b"".join(raw.splitlines(keepends=True)[:lines]))
    return target


def fuzz_targets() -> Iterator[tuple[str, Path, str, dict[str, Any]]]:
    """(name, file, kind, load options) for every format; absent fixtures are left out."""
    for name in HF_NAMES:
        path = _try(functools.partial(shrunk_json, name))
        if path is not None:
            yield name, path, "json", {}
    for name in GGUF_NAMES:
        path = _try(functools.partial(gguf_vocab_path, name))
        if path is not None:
            yield f"gguf-{name}", path, "bytes", {}
    for name in ("spm-botchan-bpe-1000", "spm-botchan-unigram-1000"):
        path = _try(functools.partial(fixture_path, name, "spm.model"))
        if path is not None:
            yield name, path, "bytes", {}
    options = {"pattern": GPT2_PATTERN, "special_tokens": {"<|endoftext|>": 50256}}
    path = _try(lambda: head_lines("whisper-gpt2-tiktoken", "gpt2.tiktoken", 2000))
    if path is not None:
        yield "tiktoken-gpt2-2000", path, "bytes", options
    path = _try(lambda: head_lines("rwkv-world-vocab", "rwkv_vocab_v20230424.txt", 3000))
    if path is not None:
        yield "rwkv-3000", path, "bytes", {}
    path = _try(lambda: head_lines("bert-base-cased-vocab", "vocab.txt", 3000))
    if path is not None:
        yield "wordpiece-vocab-3000", path, "bytes", {}
    for name in ("tekken-240718", "tekken-240911"):
        path = _try(functools.partial(shrunk_tekken, name))
        if path is not None:
            yield name, path, "tekken", {}
    folder = _try(gpt2_vocab_folder)
    if folder is not None:
        yield "gpt2-vocab.json", folder / "vocab.json", "bytes", {"_siblings": [folder / "merges.txt"]}
        yield "gpt2-merges.txt", folder / "merges.txt", "bytes", {"_siblings": [folder / "vocab.json"]}


def shrunk_tekken(name: str, keep: int = 2000) -> Path:
    """A copy of a tekken.json with its first `keep` ranks (cached)."""
    target = _cache() / name / "tekken.json"
    if not target.is_file():
        data = json.loads(fixture_path(name, "tekken.json").read_bytes())
        data["vocab"] = data["vocab"][:keep]
        config = data["config"]
        config["num_vocab_tokens"] = keep
        config["default_vocab_size"] = keep + config.get("default_num_special_tokens", 1000)
        target.parent.mkdir(exist_ok=True)
        target.write_text(json.dumps(data), encoding="utf-8")
    return target


def gpt2_vocab_folder() -> Path:
    """vocab.json + merges.txt of the gpt2 fixture, cut to its first entries (cached)."""
    folder = _cache() / "gpt2-vocab"
    if not (folder / "merges.txt").is_file():
        vocab = json.loads(fixture_path("gpt2", "vocab.json").read_bytes())
        merges = fixture_path("gpt2", "merges.txt").read_text(encoding="utf-8").splitlines()
        small = {k: v for k, v in vocab.items() if v < KEEP}
        kept = [merges[0]] + [m for m in merges[1:] if _merge_in(m, small)]
        folder.mkdir(exist_ok=True)
        (folder / "vocab.json").write_text(json.dumps(small, ensure_ascii=False), encoding="utf-8")
        (folder / "merges.txt").write_text("\n".join(kept) + "\n", encoding="utf-8")
    return folder


def _merge_in(line: str, vocab: dict[str, int]) -> bool:
    parts = line.split(" ")
    return len(parts) == 2 and parts[0] in vocab and parts[1] in vocab and parts[0] + parts[1] in vocab


def _try(make: Any) -> Path | None:
    try:
        return make()  # type: ignore[no-any-return]
    except BaseException as exc:  # pytest.skip raises a BaseException when a fixture is absent
        if type(exc).__name__ in ("Skipped", "FetchError", "FileNotFoundError"):
            return None
        raise
