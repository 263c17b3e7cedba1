"""Shared by the `polytok serve` tests: a server in a thread, the HF engine's answers, Chromium.

Expected ids come from HF ``tokenizers`` run live on the same files (the built-in
gpt2's tokenizer.json and the npm llama3 / llama2 fixtures), never from polytok.

The browser is Debian's chromium (``/usr/bin/chromium``; Playwright's own browser
download is not used). When it is missing and this process is root with apt-get,
`chromium_or_skip` installs it once (``apt-get install -y chromium``, said on
stderr, time-limited); otherwise the browser tests skip, naming what is missing.
"""

from __future__ import annotations

import gzip
import http.client
import json
import os
import shutil
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import fixtures
import pytest

from polytok import load
from polytok.formats import BUILTIN
from polytok.serve import Registry, make_server
from polytok.serve.app import PolytokServer

LLAMA3 = "llama3/tokenizer.json"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
_INSTALL_TIMEOUT_S = 900


def hf_gpt2() -> Any:
    import tokenizers

    return tokenizers.Tokenizer.from_str(gzip.decompress(BUILTIN["gpt2"].read_bytes()).decode("utf-8"))


def hf_file(path: Path) -> Any:
    import tokenizers

    return tokenizers.Tokenizer.from_file(str(path))


def hf_ids(ref: Any, text: str, special: str = "parse", add_special: bool = True) -> list[int]:
    ref.encode_special_tokens = special == "text"
    try:
        return list(ref.encode(text, add_special_tokens=add_special).ids)
    finally:
        ref.encode_special_tokens = False


def diff_range(a: list[int], b: list[int]) -> tuple[int, int, int, int]:
    """The one differing stretch of two id lists: (a_start, a_end, b_start, b_end) past the common prefix/suffix."""
    p = 0
    while p < min(len(a), len(b)) and a[p] == b[p]:
        p += 1
    s = 0
    while s < min(len(a), len(b)) - p and a[-1 - s] == b[-1 - s]:
        s += 1
    return p, len(a) - s, p, len(b) - s


def start_server(roots: list[str] | None = None, llama3: bool = True, host: str = "127.0.0.1",
                 **options: Any) -> PolytokServer:
    """A server on a free port of the loopback address `host`; `options` go to `make_server`."""
    registry = Registry(roots)
    registry.add_builtin("gpt2")
    if llama3:
        registry.add(LLAMA3, load(fixtures.fixture_path("llama3", "tokenizer.json")))
    server = make_server(registry, host, 0, quiet=True, **options)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


class Client:
    """urllib calls against one server; every answer is (status, JSON object, headers)."""

    def __init__(self, server: PolytokServer) -> None:
        self.base = server.url.rstrip("/")
        self.host = str(server.server_address[0])
        self.port = server.server_address[1]

    def request(self, method: str, path: str, body: Any = None, raw: bytes | None = None,
                headers: dict[str, str] | None = None, timeout: float = 60) -> tuple[int, Any, Any]:
        data = raw if raw is not None else (None if body is None else json.dumps(body).encode("utf-8"))
        req = urllib.request.Request(self.base + path, data=data, method=method,
                                     headers={"Content-Type": "application/json", **(headers or {})})
        try:
            with urllib.request.urlopen(req, timeout=timeout) as resp:
                return resp.status, _decode(resp.read(), resp.headers), resp.headers
        except urllib.error.HTTPError as err:
            return err.code, _decode(err.read(), err.headers), err.headers

    def post(self, path: str, body: Any) -> tuple[int, Any]:
        status, obj, _ = self.request("POST", path, body)
        return status, obj

    def raw(self, payload: bytes, timeout: float = 30) -> tuple[int, bytes]:
        """Send bytes as they are (no Content-Length, a broken request line…)."""
        conn = http.client.HTTPConnection(self.host, self.port, timeout=timeout)
        conn.connect()
        assert conn.sock is not None
        conn.sock.sendall(payload)
        resp = http.client.HTTPResponse(conn.sock)
        resp.begin()
        body = resp.read()
        conn.close()
        return resp.status, body


def _decode(data: bytes, headers: Any) -> Any:
    if (headers.get("Content-Type") or "").startswith("application/json"):
        return json.loads(data)
    return data.decode("utf-8")


def chromium_or_skip() -> str:
    """The path of Debian's chromium (installed once when missing and root), or skip the test."""
    pytest.importorskip("playwright.sync_api", reason="the playwright package (test extra) is not installed")
    if not Path(CHROMIUM).exists():
        why = _install_chromium()
        if not Path(CHROMIUM).exists():
            pytest.skip(f"{CHROMIUM} is missing ({why or 'apt-get did not provide it'}); "
                        "install Debian's chromium to run the serve browser tests")
    return CHROMIUM


def _install_chromium() -> str | None:
    """apt-get install chromium, once; returns why it could not, or None."""
    if os.name != "posix" or os.geteuid() != 0 or shutil.which("apt-get") is None:
        return "not root with apt-get, so it was not installed"
    sys.__stderr__.write("\nserve e2e: installing Debian's chromium (apt-get install -y chromium)...\n")
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    try:
        subprocess.run(["apt-get", "update", "-qq"], env=env, timeout=_INSTALL_TIMEOUT_S, check=False,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        done = subprocess.run(["apt-get", "install", "-y", "-qq", "chromium"], env=env, timeout=_INSTALL_TIMEOUT_S,
                              check=False, capture_output=True, text=True)
    except (OSError, subprocess.SubprocessError) as exc:
        return f"apt-get install chromium failed: {exc}"
    if done.returncode != 0:
        return f"apt-get install chromium failed: {done.stderr.strip()[-300:]}"
    return None
