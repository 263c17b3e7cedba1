"""`polytok.kernels`: which path runs, the pure-path switches, and the one warning when a kernel is missing."""

from __future__ import annotations

import os
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

import polytok
from polytok import kernels

_KERNEL_DIR = Path(kernels.__file__).resolve().parent / "_kernels"
_SOURCES = sorted(p.stem for p in _KERNEL_DIR.glob("*.c"))


def test_every_kernel_source_is_built() -> None:
    # an installation with a C compiler builds every kernel (a silently failed build would
    # otherwise leave a stage on the pure path with every kernel test skipped)
    if os.environ.get("POLYTOK_PURE_BUILD") == "1":
        pytest.skip("POLYTOK_PURE_BUILD=1: built without kernels on purpose")
    assert _SOURCES, "no kernel sources found"
    assert kernels.built() == _SOURCES


def test_status_names_the_compiled_path(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("POLYTOK_PURE", raising=False)
    if not kernels.built():
        pytest.skip("no kernels built")
    state = kernels.status()
    assert state["path"] == "compiled" and state["kernels"] == kernels.built()


def test_polytok_pure_forces_the_pure_path(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("POLYTOK_PURE", "1")
    assert kernels.forced_pure()
    assert kernels.kernel("bpe_merge") is None
    assert kernels.status() == {"path": "pure", "reason": "POLYTOK_PURE=1", "kernels": kernels.built()}


def test_pure_path_block_builds_pure_stages(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("POLYTOK_PURE", raising=False)
    with kernels.pure_path():
        assert kernels.kernel("bpe_merge") is None
        assert kernels.status()["path"] == "pure"
        pure = polytok.load("gpt2")
    compiled = polytok.load("gpt2")
    text = "Hello world, 123 héllo\n\n  wörld"
    assert pure.encode(text) == compiled.encode(text)
    if kernels.built():
        assert kernels.kernel("bpe_merge") is not None


def test_a_missing_kernel_warns_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("POLYTOK_PURE", raising=False)
    monkeypatch.setattr(kernels, "_warned", False)
    monkeypatch.setattr(kernels, "_loaded", {})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert kernels.kernel("no_such_kernel") is None
        assert kernels.kernel("no_such_kernel") is None
        assert kernels.kernel("another_missing_kernel") is None
    found = [w for w in caught if issubclass(w.category, kernels.PurePythonWarning)]
    assert len(found) == 1
    assert "no_such_kernel" in str(found[0].message) and "POLYTOK_PURE=1" in str(found[0].message)


def test_inspect_shows_the_path() -> None:
    env = dict(os.environ, POLYTOK_PURE="1")
    out = subprocess.run([sys.executable, "-m", "polytok", "inspect"], capture_output=True, text=True, env=env,
                         check=True).stdout
    assert "engine:         pure (POLYTOK_PURE=1;" in out
