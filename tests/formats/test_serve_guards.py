"""`polytok serve` against requests an attacker would send, over HTTP on loopback addresses only.

- another site's requests (``Origin: null``, another origin, a foreign Host, a
  body that is not ``application/json``) are refused and no file is loaded;
- a FIFO under ``--root`` is refused before anything opens it;
- a stuck request does not hold up others; idle and silent connections time out
  and give way to new ones, and the number of connection threads stays bounded;
- bad Content-Length values and deeply nested JSON are 400s, a huge
  Content-Length a 413 before the body is read.

Waits in these tests are generous bounds on something that must happen (a
request answered while another is still stuck), never measured timings.
"""

from __future__ import annotations

import os
import shutil
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import fixtures
import pytest

from formats.serve_support import Client, hf_gpt2, hf_ids, start_server
from polytok import load
from polytok.cli import serve as cli_serve
from polytok.serve import api, checks, models
from polytok.serve.app import PolytokServer
from polytok.serve.connections import WORKING

pytest.importorskip("tokenizers")

LLAMA2 = "llama2/tokenizer.json"
WAIT = 20.0  # seconds: a bound on what must happen, far above what it takes
_FIFOS = {"pipe": "pipe", "fifo-main": "fifo-main/tokenizer.json",
          "fifo-sibling": "fifo-sibling/tokenizer_config.json",
          "fifo-below": "fifo-below/additional_chat_templates/extra.jinja"}


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A --root folder: llama2's tokenizer.json, and FIFOs where a reader would open them."""
    base = tmp_path_factory.mktemp("guards")
    llama2 = fixtures.fixture_path("llama2", "tokenizer.json")
    for folder in ("llama2", "fifo-main", "fifo-sibling", "fifo-below/additional_chat_templates"):
        (base / folder).mkdir(parents=True)
    for folder in ("llama2", "fifo-sibling", "fifo-below"):
        shutil.copy(llama2, base / folder / "tokenizer.json")
    for path in _FIFOS.values():
        os.mkfifo(base / path)
    return base


@pytest.fixture
def loads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every file the server's registry loads, as it loads it."""
    seen: list[str] = []

    def recording(path: Any, **options: Any) -> Any:
        seen.append(str(path))
        return load(path, **options)

    monkeypatch.setattr(models, "load", recording)
    return seen


@contextmanager
def _serving(**options: Any) -> Iterator[tuple[PolytokServer, Client]]:
    server = start_server(llama3=False, **options)
    try:
        yield server, Client(server)
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="module")
def served(root: Path) -> Iterator[tuple[PolytokServer, Client]]:
    with _serving(roots=[str(root)]) as both:
        yield both


def _status(client: Client, path: str, body: Any, **kw: Any) -> tuple[int, Any]:
    status, obj, _ = client.request("POST", path, body, **kw)
    return status, obj


# -- another site's requests ----------------------------------------------------------


@pytest.mark.parametrize("origin", ["null", "http://127.0.0.1:{other}", "http://localhost:{port}",
                                    "https://127.0.0.1:{port}", "http://evil.example"])
def test_another_origin_is_refused_before_any_work(served: Any, loads: list[str], origin: str) -> None:
    server, client = served
    shown = origin.format(port=client.port, other=client.port + 1)
    status, obj = _status(client, "/api/load", {"path": LLAMA2}, headers={"Origin": shown})
    assert status == 403 and "refused" in obj["error"], obj
    assert loads == []


def test_own_origin_and_no_origin_are_served(served: Any, loads: list[str], root: Path) -> None:
    """The page's own origin (http://<Host>), and a client that sends no Origin (curl, scripts)."""
    server, client = served
    own = f"http://127.0.0.1:{client.port}"
    status, obj = _status(client, "/api/load", {"path": LLAMA2}, headers={"Origin": own})
    assert status == 200, obj
    assert loads == [os.path.realpath(root / LLAMA2)]
    status, obj = _status(client, "/api/encode", {"model": "gpt2", "text": "Hi there"})
    assert status == 200 and obj["ids"] == hf_ids(hf_gpt2(), "Hi there")


@pytest.mark.parametrize("ctype", ["text/plain", "text/plain;charset=UTF-8", "application/x-www-form-urlencoded",
                                   "multipart/form-data; boundary=x", "application/jsonx", None])
def test_a_post_that_is_not_json_is_refused(served: Any, loads: list[str], ctype: str | None) -> None:
    """The content types a page may send to another origin without a CORS preflight, and none at all."""
    server, client = served
    body = b'{"path": "llama2/tokenizer.json"}'
    head = f"POST /api/load HTTP/1.1\r\nHost: 127.0.0.1:{client.port}\r\nContent-Length: {len(body)}\r\n"
    if ctype is not None:
        head += f"Content-Type: {ctype}\r\n"
    status, answer = client.raw(head.encode("latin-1") + b"\r\n" + body)
    assert status == 415 and b"application/json" in answer
    assert loads == []


def test_json_with_a_charset_is_json(served: Any) -> None:
    server, client = served
    status, obj = _status(client, "/api/encode", {"model": "gpt2", "text": "x"},
                          headers={"Content-Type": "Application/JSON; charset=utf-8"})
    assert status == 200, obj


def test_host_is_checked_whatever_the_bind_address(loads: list[str], root: Path) -> None:
    """127.0.0.2 is loopback but not one of the names `localhost`/`127.0.0.1`/`::1`: the checks still run."""
    with _serving(roots=[str(root)], host="127.0.0.2") as (server, client):
        loads.clear()  # the built-in gpt2, loaded as the server started
        for headers in ({"Host": "rebind.example"}, {"Host": f"rebind.example:{client.port}"},
                        {"Origin": f"http://rebind.example:{client.port}"}):
            status, obj = _status(client, "/api/load", {"path": LLAMA2}, headers=headers)
            assert status == 403, (headers, obj)
        assert loads == []
        status, obj, _ = client.request("GET", "/", headers={"Host": "rebind.example"})
        assert status == 403
        # its own address, and any IP address (a DNS rebinding carries a name, never an address)
        for host in (f"127.0.0.2:{client.port}", "192.0.2.7"):
            status, obj = _status(client, "/api/encode", {"model": "gpt2", "text": "x"}, headers={"Host": host})
            assert status == 200, (host, obj)


def test_allow_host_adds_a_name() -> None:
    with _serving(allow_hosts=["Polytok.Test"]) as (server, client):
        own = {"Host": f"polytok.test:{client.port}", "Origin": f"http://polytok.test:{client.port}"}
        status, obj = _status(client, "/api/encode", {"model": "gpt2", "text": "x"}, headers=own)
        assert status == 200, obj
        status, obj = _status(client, "/api/encode", {"model": "gpt2", "text": "x"},
                              headers={"Host": "other.test"})
        assert status == 403 and "--allow-host" in obj["error"]


def test_allowed_names_and_loopback() -> None:
    assert checks.allowed_hosts("0.0.0.0", ["Box.LAN", "[fe80::1]"]) == {"localhost", "127.0.0.1", "::1",
                                                                         "box.lan", "fe80::1"}
    assert "myhost" in checks.allowed_hosts("MyHost")
    assert [checks.is_loopback(h) for h in ("127.0.0.2", "localhost", "::1", "0.0.0.0", "::", "box")] == \
        [True, True, True, False, False, False]


def test_start_up_line_says_what_binding_beyond_loopback_exposes() -> None:
    fake = SimpleNamespace(server_address=("0.0.0.0", 8000), registry=SimpleNamespace(roots=["/models"]),
                           allowed_hosts=checks.allowed_hosts("0.0.0.0", ["box.lan"]))
    line = cli_serve.exposure_note(fake)
    assert "\n" not in line and "every interface" in line and "/models" in line and "box.lan" in line
    assert "--allow-host" in line
    fake.registry.roots = []
    assert "no --root" in cli_serve.exposure_note(fake)


# -- FIFOs under the root -------------------------------------------------------------


@pytest.mark.parametrize("name", list(_FIFOS))
def test_a_fifo_under_the_root_is_refused_unopened(served: Any, loads: list[str], root: Path, name: str) -> None:
    server, client = served
    try:
        status, obj = _status(client, "/api/load", {"path": name}, timeout=WAIT)
    finally:
        _release(root / _FIFOS[name])  # were it opened, its reader waits for a writer: let it go
    assert status == 400 and "not a regular file" in obj["error"], obj
    assert loads == []


def _release(fifo: Path) -> None:
    with suppress(OSError):  # no reader is waiting on it
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))


# -- a stuck request, idle connections ------------------------------------------------


@pytest.fixture
def stuck(monkeypatch: pytest.MonkeyPatch) -> Iterator[SimpleNamespace]:
    """A tokenizer named "slow" whose token view waits until released (`entered` counts who waits)."""
    slow_tok = load("gpt2")
    state = SimpleNamespace(tok=slow_tok, release=threading.Event(), entered=threading.Semaphore(0))
    real_view = api.token_view

    def view(tok: Any, *args: Any, **kwargs: Any) -> Any:
        if tok is slow_tok:
            state.entered.release()
            state.release.wait(60)
        return real_view(tok, *args, **kwargs)

    monkeypatch.setattr(api, "token_view", view)
    yield state
    state.release.set()


def _in_thread(client: Client, model: str) -> tuple[threading.Thread, list[Any]]:
    out: list[Any] = []
    worker = threading.Thread(target=lambda: out.append(_status(client, "/api/encode", {"model": model, "text": "x"},
                                                                timeout=90)), daemon=True)
    worker.start()
    return worker, out


def test_a_stuck_request_does_not_delay_others(stuck: SimpleNamespace) -> None:
    with _serving() as (server, client):
        server.registry.add("slow", stuck.tok)
        worker, out = _in_thread(client, "slow")
        assert stuck.entered.acquire(timeout=WAIT)  # the slow request is inside the tokenizer work
        # a client that sends its headers slowly holds nothing either
        dribble = socket.create_connection((client.host, client.port))
        dribble.sendall(b"POST /api/encode HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-")
        text = "Other requests go on"
        status, obj = _status(client, "/api/encode", {"model": "gpt2", "text": text}, timeout=WAIT)
        assert status == 200 and obj["ids"] == hf_ids(hf_gpt2(), text)
        assert _status(client, "/api/compare", {"a": {"model": "gpt2"}, "b": {"model": "gpt2", "special": "text"},
                                                "text": text}, timeout=WAIT)[0] == 200
        assert worker.is_alive() and not out  # still stuck when the others were answered
        stuck.release.set()
        worker.join(WAIT)
        assert out and out[0][0] == 200
        dribble.close()


def test_one_load_per_file_and_loads_do_not_wait_for_each_other(served: Any, root: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """Two requests for a file being loaded share its one load; a load of another file goes on meanwhile."""
    server, client = served
    shutil.copytree(root / "llama2", root / "second", dirs_exist_ok=True)
    second = os.path.realpath(root / "second" / "tokenizer.json")
    release, entered, seen = threading.Event(), threading.Semaphore(0), []

    def slow_load(path: Any, **options: Any) -> Any:
        seen.append(str(path))
        if str(path) == second:
            entered.release()
            release.wait(60)
        return load(path, **options)

    monkeypatch.setattr(models, "load", slow_load)
    results: list[Any] = []
    workers = [threading.Thread(target=lambda: results.append(_status(client, "/api/load",
                                                                      {"path": "second/tokenizer.json"}, timeout=90)))
               for _ in range(2)]
    try:
        workers[0].start()
        assert entered.acquire(timeout=WAIT)
        workers[1].start()
        assert _soon(lambda: server.connections.count(WORKING) == 2)  # the second is past its checks, waiting
        status, obj = _status(client, "/api/load", {"path": "llama2"}, timeout=WAIT)  # the folder: another file
        assert status == 200, obj
        assert all(w.is_alive() for w in workers) and not results
    finally:
        release.set()
        for w in workers:
            w.join(WAIT)
    assert [r[0] for r in results] == [200, 200]
    assert seen.count(second) == 1


def _handler_threads() -> int:
    return sum("process_request_thread" in t.name for t in threading.enumerate())


def _soon(check: Any) -> bool:
    """Whether `check()` comes true within `WAIT` (threads that were told to end take a moment)."""
    deadline = time.monotonic() + WAIT
    while not check():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def test_idle_connections_give_way_and_threads_stay_bounded() -> None:
    with _serving(max_connections=4, idle_timeout=120) as (server, client):
        before = _handler_threads()
        idle = [socket.create_connection((client.host, client.port)) for _ in range(12)]
        status, obj = _status(client, "/api/encode", {"model": "gpt2", "text": "x"}, timeout=WAIT)
        assert status == 200, obj
        # the oldest eight gave way to the newer ones, and the ninth to the request
        for sock in idle[:9]:
            sock.settimeout(WAIT)
            assert sock.recv(1) == b""
        assert len(server.connections) <= 4
        assert _soon(lambda: _handler_threads() - before <= 4), _handler_threads() - before
        for sock in idle:
            sock.close()


def test_idle_and_silent_connections_time_out() -> None:
    with _serving(idle_timeout=0.5) as (server, client):
        quiet = socket.create_connection((client.host, client.port))
        halfway = socket.create_connection((client.host, client.port))
        halfway.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        for sock in (quiet, halfway):
            sock.settimeout(WAIT)  # a bound: the server's 0.5 s is what closes it
            assert sock.recv(1) == b""
            sock.close()


def test_when_every_connection_works_a_new_one_gets_503(stuck: SimpleNamespace) -> None:
    with _serving(max_connections=2) as (server, client):
        server.registry.add("slow", stuck.tok)
        workers = [_in_thread(client, "slow") for _ in range(2)]
        for _ in workers:
            assert stuck.entered.acquire(timeout=WAIT)
        extra = socket.create_connection((client.host, client.port))
        extra.settimeout(WAIT)
        assert extra.recv(4096).startswith(b"HTTP/1.1 503 ")
        extra.close()
        stuck.release.set()
        for worker, out in workers:
            worker.join(WAIT)
            assert out and out[0][0] == 200
        assert _soon(lambda: len(server.connections) == 0)  # each answered connection is closed and gone
        assert _status(client, "/api/encode", {"model": "gpt2", "text": "x"}, timeout=WAIT)[0] == 200


# -- Content-Length and the body ------------------------------------------------------


def _post_head(client: Client, length: bytes, extra: bytes = b"") -> bytes:
    return (b"POST /api/encode HTTP/1.1\r\nHost: 127.0.0.1:" + str(client.port).encode() +
            b"\r\nContent-Type: application/json\r\n" + extra + b"Content-Length: " + length + b"\r\n\r\n")


@pytest.mark.parametrize("length", [b"\xb2", b"\xb9\xb3", b"1_0", b" +10", b"10, 10", b"0x10"])
def test_content_length_not_ascii_digits_is_400(served: Any, length: bytes) -> None:
    """``"²".isdigit()`` is true but it is no length (and ``int`` takes ``1_0`` and ``+10``)."""
    server, client = served
    status, answer = client.raw(_post_head(client, length) + b'{"model": "gpt2", "text": "x"}')
    assert status == 400 and b"Content-Length" in answer


def test_two_content_lengths_are_400(served: Any) -> None:
    server, client = served
    body = b'{"model": "gpt2", "text": "x"}'
    status, answer = client.raw(_post_head(client, str(len(body)).encode(), b"Content-Length: 3\r\n") + body)
    assert status == 400 and b"more than one Content-Length" in answer


@pytest.mark.parametrize("raw", [b"[" * 100_000, b'{"a":' * 100_000, b'{"model": "gpt2", "text": ' + b"[" * 50_000],
                         ids=["arrays", "objects", "in-a-field"])
def test_deeply_nested_json_is_400(served: Any, raw: bytes) -> None:
    server, client = served
    status, obj, _ = client.request("POST", "/api/encode", raw=raw)
    assert status == 400 and "nested too deeply" in obj["error"], obj


@pytest.mark.parametrize("length", [50_000_000, 10**30])
def test_a_huge_content_length_is_413_before_reading(served: Any, length: int) -> None:
    """The body is never sent: a server that waited to read (or drain) it would not answer."""
    server, client = served
    status, answer = client.raw(_post_head(client, str(length).encode()), timeout=WAIT)
    assert status == 413 and b"at most" in answer
    with socket.create_connection((client.host, client.port), timeout=WAIT) as sock:
        sock.sendall(_post_head(client, str(length).encode(), b"Expect: 100-continue\r\n"))
        assert sock.recv(4096).startswith(b"HTTP/1.1 413 ")  # not "100 Continue": send no body
