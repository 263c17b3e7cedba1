"""The HTTP side of `polytok serve`: routing, body limits, JSON errors, the static page.

The server is the standard library's ``http.server.ThreadingHTTPServer``: one
page and four small JSON endpoints need no framework, and polytok's runtime stays
``regex`` + ``jinja2`` (DESIGN: pure Python, no new dependency). Tokenizer work
runs under one lock (the GIL would serialise it anyway, and a tokenizer's word
caches are not meant for concurrent writers); static files do not wait for it.

Routes: ``GET /`` (the page), ``GET /static/<file>``, ``GET /api/models``,
``POST /api/load``, ``POST /api/encode``, ``POST /api/compare``,
``POST /api/explain``. Every error is a JSON object ``{"error": …, "status": …}``
with the status: 400 bad JSON or field, 403 a path outside ``--root`` (or a
request from another site), 404 unknown path or model, 405 wrong method, 411 no
Content-Length, 413 a body over `MAX_BODY` bytes or a text over
`api.MAX_TEXT` characters, 500 a bug (logged on the server, never sent).
"""

from __future__ import annotations

import json
import socket
import sys
import threading
import traceback
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from typing import Any, Callable
from urllib.parse import urlsplit

from . import api
from .models import ApiError, Registry

__all__ = ["MAX_BODY", "make_server", "Handler"]

MAX_BODY = 4 * 1024 * 1024
_STATIC = {"index.html": "text/html; charset=utf-8", "page.css": "text/css; charset=utf-8",
           "page.js": "text/javascript; charset=utf-8"}
_POST: dict[str, Callable[[Registry, dict[str, Any]], dict[str, Any]]] = {
    "/api/load": api.load_model, "/api/encode": api.encode, "/api/compare": api.compare_view,
    "/api/explain": api.explain}
_GET = {"/", "/api/models", *(f"/static/{name}" for name in _STATIC)}
_LOOPBACK = {"127.0.0.1", "localhost", "::1"}
_DRAIN = 64 * 1024 * 1024  # a refused body up to this size is read first, so the client sees the 413
_CSP = "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; frame-ancestors 'none'"


def _json_bytes(obj: Any) -> bytes:
    text = json.dumps(obj, ensure_ascii=False, separators=(",", ":"))
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate in the echoed text: JSON escapes keep it exact
        return json.dumps(obj, separators=(",", ":")).encode("ascii")


class Handler(BaseHTTPRequestHandler):
    """One request. `server` is a `PolytokServer` (registry, lock, quiet flag)."""

    server: "PolytokServer"
    protocol_version = "HTTP/1.1"
    server_version = "polytok-serve"

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
            self._check_origin()
            fn()
        except ApiError as exc:
            extra = {"Allow": _allowed(self._path())} if exc.status == 405 else None
            # closed after: a refused request's body may be unread, and must not pass for the next request
            self._send_json(exc.status, {"error": exc.message, "status": exc.status}, close=True, extra=extra)
        except ConnectionError:  # the page gave up on this request (a newer keystroke aborted it)
            self.close_connection = True
        except Exception:  # noqa: BLE001 - a bug: logged here, a plain 500 for the page
            traceback.print_exc(file=sys.stderr)
            self._send_json(500, {"error": "internal error (see the server's log)", "status": 500}, close=True)

    def _check_origin(self) -> None:
        """On loopback, refuse another site's page (DNS rebinding, cross-site POSTs)."""
        if not self.server.loopback:
            return
        host = urlsplit("//" + (self.headers.get("Host") or "")).hostname
        if host and host not in _LOOPBACK:
            raise ApiError(403, f"Host {host!r} is not this loopback server")
        origin = self.headers.get("Origin")
        if origin and origin != "null" and urlsplit(origin).hostname not in _LOOPBACK:
            raise ApiError(403, f"requests from {origin} are refused")

    def _get(self) -> None:
        path = self._path()
        if path in _POST:
            raise ApiError(405, f"{path} takes POST")
        if path not in _GET:
            raise ApiError(404, f"no such page: {path}")
        if path == "/api/models":
            with self.server.lock:
                listing = self.server.registry.listing()
            self._send_json(200, {"models": listing, "roots": self.server.registry.roots,
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
        body = self._body()
        with self.server.lock:
            out = handler(self.server.registry, body)
        self._send_json(200, out)

    def _other(self) -> None:
        path = self._path()
        if path in _POST or path in _GET:
            raise ApiError(405, f"{path} takes {_allowed(path)}, not {self.command}")
        raise ApiError(404, f"no such page: {path}")

    def _body(self) -> dict[str, Any]:
        if self.headers.get("Transfer-Encoding"):
            raise ApiError(411, "send the body with a Content-Length (no chunked encoding)")
        length = self.headers.get("Content-Length")
        if length is None or not length.strip().isdigit():
            raise ApiError(411, "a POST needs a Content-Length")
        n = int(length)
        if n > MAX_BODY:
            self._drain(n)
            raise ApiError(413, f"the body has {n:,} bytes; this server takes at most {MAX_BODY:,}")
        raw = self.rfile.read(n)
        try:
            body = json.loads(raw.decode("utf-8"))
        except UnicodeDecodeError as exc:
            raise ApiError(400, f"the body is not UTF-8 (byte offset {exc.start})") from None
        except ValueError as exc:
            raise ApiError(400, f"the body is not JSON: {exc}") from None
        if not isinstance(body, dict):
            raise ApiError(400, "the body must be a JSON object")
        return body


    def _drain(self, n: int) -> None:
        if n > _DRAIN:
            return
        while n > 0:
            chunk = self.rfile.read(min(n, 1 << 20))
            if not chunk:
                return
            n -= len(chunk)


def _allowed(path: str) -> str:
    return "POST" if path in _POST else "GET, HEAD"


class PolytokServer(ThreadingHTTPServer):
    """A ThreadingHTTPServer that holds the registry and the lock for tokenizer work."""

    daemon_threads = True

    def __init__(self, address: tuple[str, int], registry: Registry, quiet: bool = False) -> None:
        super().__init__(address, Handler)
        self.registry = registry
        self.lock = threading.Lock()
        self.quiet = quiet
        self.loopback = address[0] in _LOOPBACK

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        name = host.decode() if isinstance(host, bytes) else str(host)
        shown = f"[{name}]" if ":" in name else name
        return f"http://{shown}:{port}/"


def make_server(registry: Registry, host: str = "127.0.0.1", port: int = 0, quiet: bool = False) -> PolytokServer:
    """A server on (`host`, `port`) (port 0: a free one; see ``.url``); call ``serve_forever`` on it."""
    cls = _Server6 if ":" in host else PolytokServer
    return cls((host, port), registry, quiet)


class _Server6(PolytokServer):
    address_family = socket.AF_INET6
