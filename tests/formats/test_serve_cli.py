"""``polytok serve`` on the command line: it prints its URL, serves the models it was given, and
refuses bad arguments with one line and status 1."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

import fixtures
import pytest

from formats.serve_support import hf_file

SRC = str(fixtures.REPO_ROOT / "src")


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": SRC + os.pathsep + os.environ.get("PYTHONPATH", "")}


def _polytok(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "polytok", *args], capture_output=True, text=True, env=_env(),
                          timeout=120)


def test_serve_prints_its_url_and_serves_the_given_model(tmp_path: Path) -> None:
    pytest.importorskip("tokenizers")
    model = fixtures.fixture_path("llama3", "tokenizer.json")
    proc = subprocess.Popen([sys.executable, "-m", "polytok", "serve", str(model), "--port", "0", "--quiet",
                             "--root", str(tmp_path)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=_env())
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line.startswith("polytok serve: http://127.0.0.1:"), (line, proc.stderr.read() if proc.stderr else "")
        url = line.split()[2]
        with urllib.request.urlopen(url + "api/models", timeout=30) as resp:
            names = [m["name"] for m in json.loads(resp.read())["models"]]
        assert names == ["gpt2", str(model)]
        body = json.dumps({"model": str(model), "text": "Hello there"}).encode("utf-8")
        req = urllib.request.Request(url + "api/encode", data=body, headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=30) as resp:
            ids = json.loads(resp.read())["ids"]
        assert ids == hf_file(model).encode("Hello there").ids
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_serve_allow_host_and_refusals() -> None:
    """--allow-host adds a name the page may be reached by; another name, or another site's page, is refused."""
    proc = subprocess.Popen([sys.executable, "-m", "polytok", "serve", "--port", "0", "--quiet",
                             "--allow-host", "polytok.test"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=_env())
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().split()[2]
        port = url.rstrip("/").rsplit(":", 1)[1]
        body = json.dumps({"model": "gpt2", "text": "x"}).encode("utf-8")
        for headers, status in (({"Host": f"polytok.test:{port}", "Origin": f"http://polytok.test:{port}"}, 200),
                                ({"Host": "other.test"}, 403), ({"Origin": "null"}, 403),
                                ({"Content-Type": "text/plain"}, 415)):
            req = urllib.request.Request(url + "api/encode", data=body,
                                         headers={"Content-Type": "application/json", **headers})
            try:
                with urllib.request.urlopen(req, timeout=30) as resp:
                    got = resp.status
            except urllib.error.HTTPError as err:
                got = err.code
            assert got == status, headers
    finally:
        proc.terminate()
        proc.wait(timeout=30)


@pytest.mark.parametrize("args, says", [
    (["--root", "/no/such/folder"], "not a folder"),
    (["/no/such/tokenizer.json"], "no such file"),
    (["--port", "-5"], "cannot listen"),
    (["--port", "0", "--host", "no-such-host.invalid"], "cannot listen"),
])
def test_serve_refuses_bad_arguments(args: list[str], says: str) -> None:
    done = _polytok("serve", "--port", "0", *args) if "--port" not in args else _polytok("serve", *args)
    assert done.returncode == 1 and says in done.stderr and "Traceback" not in done.stderr, done.stderr
