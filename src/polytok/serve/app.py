"""The HTTP side of `polytok serve`: routing, request checks, JSON errors, the static page.

The server is the standard library's ``http.server.ThreadingHTTPServer``: one
page and four small JSON endpoints need no framework, and polytok's runtime stays
``regex`` + ``jinja2`` (DESIGN: pure Python, no new dependency). Each connection
has its thread; requests run at once, with no lock held across them (the registry
locks its own tables and each file's load, `models`), so a slow or stuck request
delays no other. `connections` bounds the threads and drops idle or silent clients.

Before any work, `checks` refuses what another site's page could send (a foreign
Host or Origin, a POST that is not ``application/json``) and bodies that cannot be
read safely. Routes: ``GET /`` (the page), ``GET /static/<file>``, ``GET
/api/models``, ``POST /api/load``, ``POST /api/encode``, ``POST /api/compare``,
``POST /api/explain``, ``POST /api/chat``. Every error is a JSON object ``{"error": …, "status": …}``
with the status: 400 bad JSON, field or header, 403 a path outside ``--root`` or
a request from another site, 404 unknown path or model, 405 wrong method, 411 no
Content-Length, 413 a body over `MAX_BODY` bytes (refused before it is read) or a
text over `api.MAX_TEXT` characters, 415 not JSON, 503 every connection busy, 500
a bug (logged on the server, never sent).
"""

from __future__ import annotations

import json
import socket
import sys
import traceback
from collections.abc import Callable, Iterable
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from typing import Any
from urllib.parse import urlsplit

from . import api, checks
from .connections import IDLE, IDLE_TIMEOUT, MAX_CONNECTIONS, SENDING, WORKING, Connections
from .models import ApiError, Registry

__all__ = ["MAX_BODY", "make_server", "Handler", "PolytokServer"]

MAX_BODY = 4 * 1024 * 1024
_STATIC = {"index.html": "text/html; charset=utf-8", "page.css": "text/css; charset=utf-8",
           "page.js": "text/javascript; charset=utf-8"}
_POST: dict[str, Callable[[Registry, dict[str, Any]], dict[str, Any]]] = {
    "/api/load": api.load_model, "/api/encode": api.encode, "/api/compare": api.compare_view,
    "/api/explain": api.explain, "/api/chat": api.chat}
_GET = {"/", "/api/models", *(f"/static/{name}" for name in _STATIC)}
_BUSY_WAIT = 1.0  # seconds the "503 busy" answer may take to send
_CSP = "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; frame-ancestors 'none'"


def _json_bytes(obj: Any) -> bytes:
    text = json.dumps(obj, ensure_ascii=False, separators=(",", ":"))
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate in the echoed text: JSON escapes keep it exact
        return json.dumps(obj, separators=(",", ":")).encode("ascii")


class Handler(BaseHTTPRequestHandler):
    """One connection's requests. `server` is a `PolytokServer` (registry, connections, allowed hosts)."""

    server: PolytokServer
    protocol_version = "HTTP/1.1"
    server_version = "polytok-serve"

    def setup(self) -> None:
        super().setup()
        self.connection.settimeout(self.server.idle_timeout)  # every read and write of this connection

    def handle_one_request(self) -> None:
        self._mark(IDLE)
        try:
            super().handle_one_request()  # it drops a connection whose read or write timed out
        except OSError:  # the client went away, or the connection gave way to a new one
            self.close_connection = True

    def parse_request(self) -> bool:
        self._mark(SENDING)  # the request line is in; headers (and a body) may still be coming
        return super().parse_request()

    def handle_expect_100(self) -> bool:
        """``Expect: 100-continue``: refuse a body that would be refused before the client sends it."""
        try:
            checks.content_length(self.headers.get_all("Content-Length") or [], MAX_BODY)
        except ApiError as exc:
            self._send_json(exc.status, {"error": exc.message, "status": exc.status}, close=True)
            return False
        return super().handle_expect_100()

    def _mark(self, state: str) -> None:
        self.server.connections.mark(self.request, state)

    def log_message(self, format: str, *args: Any) -> None:
        if not self.server.quiet:
            super().log_message(format, *args)

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        """The stdlib's own errors (bad request line, unknown method) as JSON too."""
        if self.request_version == "HTTP/0.9":  # an unreadable request line: answer with a status line anyway
            self.request_version = "HTTP/1.0"
        self._send_json(code, {"error": message or HTTPStatus(code).phrase, "status": code}, close=True)

    def _send_json(self, status: int, obj: Any, close: bool = False, extra: dict[str, str] | None = None) -> None:
        self._send(status, _json_bytes(obj), "application/json; charset=utf-8", close, extra)

    def _send(self, status: int, body: bytes, ctype: str, close: bool = False,
              extra: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Content-Security-Policy", _CSP)
        for key, value in (extra or {}).items():
            self.send_header(key, value)
        if close:
            self.send_header("Connection", "close")
            self.close_connection = True
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _path(self) -> str:
        return urlsplit(self.path).path

    def do_GET(self) -> None:
        self._guarded(self._get)

    def do_HEAD(self) -> None:
        self._guarded(self._get)

    def do_POST(self) -> None:
        self._guarded(self._post)

    def do_PUT(self) -> None:
        self._guarded(self._other)

    do_DELETE = do_PATCH = do_OPTIONS = do_PUT

    def _guarded(self, fn: Callable[[], None]) -> None:
        try:
            checks.check_host(self.headers.get("Host"), self.server.allowed_hosts)
            checks.check_origin(self.headers.get("Origin"), self.headers.get("Host"))
            fn()
        except ApiError as exc:
            extra = {"Allow": _allowed(self._path())} if exc.status == 405 else None
            # closed after: a refused request's body may be unread, and must not pass for the next request
            self._send_json(exc.status, {"error": exc.message, "status": exc.status}, close=True, extra=extra)
        except (ConnectionError, TimeoutError):  # the page gave up on this request (a newer keystroke aborted it)
            self.close_connection = True
        except Exception:
            traceback.print_exc(file=sys.stderr)
            self._send_json(500, {"error": "internal error (see the server's log)", "status": 500}, close=True)

    def _get(self) -> None:
        self._mark(WORKING)
        path = self._path()
        if path in _POST:
            raise ApiError(405, f"{path} takes POST")
        if path not in _GET:
            raise ApiError(404, f"no such page: {path}")
        if path == "/api/models":
            self._send_json(200, {"models": self.server.registry.listing(), "roots": self.server.registry.roots,
                                  "max_text": api.MAX_TEXT, "max_body": MAX_BODY})
            return
        name = "index.html" if path == "/" else path.rsplit("/", 1)[1]
        body = resources.files("polytok.serve").joinpath("static", name).read_bytes()
        self._send(200, body, _STATIC[name])

    def _post(self) -> None:
        path = self._path()
        handler = _POST.get(path)
        if handler is None:
            raise ApiError(405 if path in _GET else 404,
                           f"{path} takes GET" if path in _GET else f"no such endpoint: {path}")
        checks.check_json_type(self.headers.get("Content-Type"))
        body = self._body()
        self._mark(WORKING)
        self._send_json(200, handler(self.server.registry, body))

    def _other(self) -> None:
        self._mark(WORKING)
        path = self._path()
        if path in _POST or path in _GET:
            raise ApiError(405, f"{path} takes {_allowed(path)}, not {self.command}")
        raise ApiError(404, f"no such page: {path}")

    def _body(self) -> dict[str, Any]:
        if self.headers.get("Transfer-Encoding"):
            raise ApiError(411, "send the body with a Content-Length (no chunked encoding)")
        n = checks.content_length(self.headers.get_all("Content-Length") or [], MAX_BODY)
        raw = self.rfile.read(n)
        if len(raw) < n:
            raise ApiError(400, f"the body ended after {len(raw):,} of its {n:,} bytes")
        return checks.parse_json(raw)


def _allowed(path: str) -> str:
    return "POST" if path in _POST else "GET, HEAD"


class PolytokServer(ThreadingHTTPServer):
    """A ThreadingHTTPServer that holds the registry, the names it answers to and its open connections."""

    daemon_threads = True
    block_on_close = False  # closing (Ctrl-C) does not wait for clients' idle connections to time out

    def __init__(self, address: tuple[str, int], registry: Registry, quiet: bool = False,
                 allow_hosts: Iterable[str] = (), max_connections: int = MAX_CONNECTIONS,
                 idle_timeout: float = IDLE_TIMEOUT) -> None:
        super().__init__(address, Handler)
        self.registry = registry
        self.quiet = quiet
        self.loopback = checks.is_loopback(address[0])
        self.allowed_hosts = checks.allowed_hosts(address[0], allow_hosts)
        self.connections = Connections(max_connections)
        self.idle_timeout = idle_timeout

    def process_request(self, request: Any, client_address: Any) -> None:
        """A thread for the new connection, once there is room for it (`Connections.admit`); else a 503."""
        if not self.connections.admit(request):
            _busy(request)
            self.shutdown_request(request)
            return
        super().process_request(request, client_address)

    def shutdown_request(self, request: Any) -> None:
        self.connections.drop(request)
        super().shutdown_request(request)

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        name = host.decode() if isinstance(host, bytes) else str(host)
        shown = f"[{name}]" if ":" in name else name
        return f"http://{shown}:{port}/"


def _busy(sock: socket.socket) -> None:
    body = _json_bytes({"error": "every connection of this server is busy; try again", "status": 503})
    head = (f"HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json; charset=utf-8\r\n"
            f"Content-Length: {len(body)}\r\nRetry-After: 1\r\nConnection: close\r\n\r\n").encode("ascii")
    try:
        sock.settimeout(_BUSY_WAIT)
        sock.sendall(head + body)
    except OSError:
        pass


def make_server(registry: Registry, host: str = "127.0.0.1", port: int = 0, quiet: bool = False,
                allow_hosts: Iterable[str] = (), max_connections: int = MAX_CONNECTIONS,
                idle_timeout: float = IDLE_TIMEOUT) -> PolytokServer:
    """A server on (`host`, `port`) (port 0: a free one; see ``.url``); call ``serve_forever`` on it.

    `allow_hosts`: more names a request's Host may carry (beyond loopback names, `host` and IP addresses).
    """
    cls = _Server6 if ":" in host else PolytokServer
    return cls((host, port), registry, quiet, allow_hosts, max_connections, idle_timeout)


class _Server6(PolytokServer):
    address_family = socket.AF_INET6
