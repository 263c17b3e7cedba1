"""tokenize-corpus on Ray (``engine="ray"``) writes the same bytes as the local engine.

One local Ray instance for the module (``ray.init(num_cpus=2)`` in-process, no
cluster), shut down after. The corpus: a few thousand JSONL documents with bad
records (corpus_helpers) and a Parquet file with null rows. The local engine's
output is the expectation (its ids are checked against HF tokenizers live in
test_corpus.py); here the bytes of shards and manifest must be equal.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import fixtures
import pytest

from formats.corpus_helpers import folder_digest, write_jsonl
from polytok import corpus

ray = pytest.importorskip("ray")
pytest.importorskip("ray.data")
pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")


@pytest.fixture(scope="module")
def local_ray() -> Iterator[Any]:
    """A 2-CPU Ray instance in this process; its workers import polytok from this checkout."""
    path = os.pathsep.join(filter(None, [str(fixtures.REPO_ROOT / "src"), os.environ.get("PYTHONPATH")]))
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, logging_level="ERROR",
             runtime_env={"env_vars": {"PYTHONPATH": path}})
    try:
        yield ray
    finally:
        ray.shutdown()


@pytest.fixture(scope="module")
def inputs(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    folder = tmp_path_factory.mktemp("corpus")
    rows = write_jsonl(folder / "docs.jsonl", 3000)
    texts = [doc for _, doc in rows[:1500]]
    pq.write_table(pa.table({"text": pa.array(texts, pa.string())}), folder / "docs.parquet", row_group_size=200)
    (folder / "notes.txt").write_bytes(b"a text file\nwith a bad \xc3 line\r\nand a last one")
    return [str(folder / "docs.jsonl"), str(folder / "docs.parquet"), str(folder / "notes.txt")]


@pytest.mark.parametrize("out_format", ["bin", "parquet"])
def test_ray_output_equals_local(local_ray: Any, inputs: list[str], tmp_path: Path, out_format: str) -> None:
    options: dict[str, Any] = {"shard_bytes": 60_000, "out_format": out_format, "append_eos": 50256}
    local = corpus.tokenize("gpt2", inputs, str(tmp_path / "local"), workers=2, **options)
    remote = corpus.tokenize("gpt2", inputs, str(tmp_path / "ray"), engine="ray", workers=2, **options)
    assert remote == local
    assert len(local["shards"]) > 10 and local["bad_records"] == 7 + 6 + 1  # JSONL, Parquet nulls, bad UTF-8
    assert folder_digest(tmp_path / "ray") == folder_digest(tmp_path / "local")
    corpus.verify(str(tmp_path / "ray"))


def test_ray_resumes_a_local_run(local_ray: Any, inputs: list[str], tmp_path: Path) -> None:
    """Plumbing: a run cut after 3 shards by the local engine is finished by the Ray engine, same bytes."""
    import json

    full = corpus.tokenize("gpt2", inputs, str(tmp_path / "full"), shard_bytes=60_000)
    part = tmp_path / "part"
    corpus.tokenize("gpt2", inputs, str(part), shard_bytes=60_000)
    cut = dict(full, shards=full["shards"][:3], complete=False,
               errors=[e for e in full["errors"] if e["shard"] <= "shard-000002"])
    (part / "manifest.json").write_text(json.dumps(cut), encoding="utf-8")
    corpus.tokenize("gpt2", inputs, str(part), shard_bytes=60_000, engine="ray", workers=2, resume=True)
    assert folder_digest(part) == folder_digest(tmp_path / "full")


def test_a_real_ray_head_passes_the_address_check(local_ray: Any) -> None:
    """The GCS of the instance started here answers the HTTP/2 preface as `reachable` expects."""
    from polytok.cli.corpus import reachable

    reachable(local_ray.get_runtime_context().gcs_address, timeout=5)
