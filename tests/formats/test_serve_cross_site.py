"""`polytok serve` against another site's page, in headless Chromium (Playwright; see `serve_support`).

A page served by the test on another loopback port tries what a hostile site
would: a simple (preflight-free) ``fetch`` POST, a JSON ``fetch`` (which needs a
CORS preflight), ``text/plain`` and urlencoded form posts, the same from a
sandboxed frame and under ``no-referrer`` (``Origin: null``). A DNS rebinding is
played by Chromium's own resolver rule mapping the name ``rebind.test`` to
127.0.0.1, so the server is reached by a foreign name and the page's requests are
same-origin to the browser. Every one is refused, and the registry loads no file;
the server's own page, on its own origin, still loads the same file.

Only loopback addresses are used: both servers listen on 127.0.0.1, and the
resolver rule keeps ``rebind.test`` there.
"""

from __future__ import annotations

import json
import os
import shutil
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import fixtures
import pytest

from formats.serve_support import CHROMIUM_ARGS, chromium_or_skip, start_server
from polytok import load
from polytok.serve import app, models
from polytok.serve.app import PolytokServer

LLAMA2 = "llama2/tokenizer.json"
REBIND = "rebind.test"
WAIT = 20.0  # seconds: a bound on what must happen, far above what it takes
_SMUGGLED = """<input type="hidden" name='{"path": "llama2/tokenizer.json", "x": "' value='"}'>"""


def _attack_page(target: str) -> str:
    """Forms that post to `target` into a frame; the fetches are run by the test."""
    plain = f'<form method="POST" action="{target}/api/load" enctype="text/plain" target="sink">{_SMUGGLED}</form>'
    return f"""<!doctype html><html><head><meta charset="utf-8"><title>another site</title></head><body>
<iframe name="sink"></iframe><iframe name="sink2"></iframe>
{plain.replace('<form ', '<form id="plain" ')}
<form id="urlencoded" method="POST" action="{target}/api/load" target="sink2">
<input type="hidden" name="path" value="{LLAMA2}"></form>
</body></html>"""


_FETCHES = """async (target) => {
  const body = JSON.stringify({path: "llama2/tokenizer.json"});
  const url = target + "/api/load", out = {};
  const tries = {
    simple: {method: "POST", mode: "no-cors", headers: {"Content-Type": "text/plain"}, body},
    json: {method: "POST", headers: {"Content-Type": "application/json"}, body},
    no_referrer: {method: "POST", mode: "no-cors", referrerPolicy: "no-referrer", body},
  };
  for (const [name, init] of Object.entries(tries)) {
    try { const r = await fetch(url, init); out[name] = r.type === "opaque" ? "opaque" : r.status; }
    catch (e) { out[name] = "blocked"; }
  }
  return out;
}"""

_FRAMES = """(form) => {
  for (const [sandbox, head] of [["allow-forms allow-scripts", ""],
                                 [null, '<meta name="referrer" content="no-referrer">']]) {
    const frame = document.createElement("iframe");
    if (sandbox) frame.setAttribute("sandbox", sandbox);
    frame.srcdoc = head + form + "<script>document.forms[0].submit()<\\/script>";
    document.body.append(frame);
  }
  document.getElementById("plain").submit();
  document.getElementById("urlencoded").submit();
}"""


class _Elsewhere(BaseHTTPRequestHandler):
    page = b""

    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(self.page)))
        self.end_headers()
        self.wfile.write(self.page)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def chromium() -> str:
    return chromium_or_skip()


@pytest.fixture(scope="module")
def browser(chromium: str) -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    args = [*CHROMIUM_ARGS, f"--host-resolver-rules=MAP {REBIND} 127.0.0.1", "--disable-features=HttpsUpgrades"]
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=chromium, args=args)
        yield b
        b.close()


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("cross_site")
    (base / "llama2").mkdir()
    shutil.copy(fixtures.fixture_path("llama2", "tokenizer.json"), base / LLAMA2)
    return base


@pytest.fixture(scope="module")
def server(chromium: str, root: Path) -> Iterator[PolytokServer]:
    srv = start_server([str(root)], llama3=False)
    yield srv
    srv.shutdown()
    srv.server_close()


@pytest.fixture
def elsewhere(server: PolytokServer) -> Iterator[str]:
    """Another origin: a server on another loopback port whose page targets `server`."""
    target = server.url.rstrip("/")
    handler = type("Page", (_Elsewhere,), {"page": _attack_page(target).encode("utf-8")})
    other = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=other.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{other.server_address[1]}/"
    other.shutdown()
    other.server_close()


@pytest.fixture
def seen(monkeypatch: pytest.MonkeyPatch) -> dict[str, list[Any]]:
    """What the server did: files its registry loaded, and each answer (method, path, status, Origin)."""
    out: dict[str, list[Any]] = {"loads": [], "answers": []}

    def recording_load(path: Any, **options: Any) -> Any:
        out["loads"].append(str(path))
        return load(path, **options)

    def recording_answer(handler: Any, code: Any = "-", size: Any = "-") -> None:
        out["answers"].append((handler.command, handler.path, int(code), handler.headers.get("Origin")))

    monkeypatch.setattr(models, "load", recording_load)
    monkeypatch.setattr(app.Handler, "log_request", recording_answer)
    return out


def _until(check: Any) -> bool:
    deadline = time.monotonic() + WAIT
    while not check():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def _posts(seen: dict[str, list[Any]]) -> list[Any]:
    return [a for a in seen["answers"] if a[0] == "POST" and a[1] == "/api/load"]


def test_another_sites_page_gets_nothing_done(browser: Any, server: PolytokServer, elsewhere: str,
                                              seen: dict[str, list[Any]]) -> None:
    page = browser.new_page()
    try:
        page.goto(elsewhere)
        fetched = page.evaluate(_FETCHES, server.url.rstrip("/"))
        assert fetched["json"] == "blocked"  # its preflight was refused: the POST was never sent
        page.evaluate(_FRAMES, f'<form method="POST" action="{server.url}api/load" enctype="text/plain">'
                               f"{_SMUGGLED}</form>")
        # two fetches and four forms reach the server, each refused
        assert _until(lambda: len(_posts(seen)) >= 6), seen["answers"]
    finally:
        page.close()
    assert seen["loads"] == []
    assert {status for *_, status, _ in seen["answers"]} == {403}, seen["answers"]
    origins = {origin for *_, origin in _posts(seen)}
    assert origins == {elsewhere.rstrip("/"), "null"}, origins
    assert [a[0] for a in seen["answers"]].count("OPTIONS") == 1  # the JSON fetch's preflight
    print("\nrefused from another origin:", json.dumps(fetched), sorted(set(seen["answers"]), key=str))


def test_a_rebound_name_gets_nothing_done(browser: Any, server: PolytokServer, seen: dict[str, list[Any]]) -> None:
    """The page is reached as http://rebind.test:PORT/, so its requests are same-origin to the browser."""
    page = browser.new_page()
    try:
        answer = page.goto(f"http://{REBIND}:{server.server_address[1]}/")
        assert answer is not None and answer.status == 403
        statuses = page.evaluate("""async () => {
          const json = {method: "POST", headers: {"Content-Type": "application/json"},
                        body: JSON.stringify({path: "llama2/tokenizer.json"})};
          return [(await fetch("/api/load", json)).status, (await fetch("/api/models")).status];
        }""")
    finally:
        page.close()
    assert statuses == [403, 403]
    assert seen["loads"] == []


def test_the_servers_own_page_still_works(browser: Any, server: PolytokServer, root: Path,
                                          seen: dict[str, list[Any]]) -> None:
    page = browser.new_page()
    try:
        page.goto(server.url)
        page.wait_for_selector("body[data-updated]:not([data-busy])")
        statuses = page.evaluate("""async () => {
          const body = JSON.stringify({path: "llama2/tokenizer.json"});
          const plain = await fetch("/api/load", {method: "POST", body});
          const json = await fetch("/api/load", {method: "POST", headers: {"Content-Type": "application/json"}, body});
          return [plain.status, json.status, (await json.json()).model.name];
        }""")
    finally:
        page.close()
    real = os.path.realpath(root / LLAMA2)
    assert statuses == [415, 200, real]  # its own origin, but only JSON is read
    assert seen["loads"] == [real]
    own = f"http://127.0.0.1:{server.server_address[1]}"
    assert {a[3] for a in _posts(seen)} == {own}
