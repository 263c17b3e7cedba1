"""What `polytok serve` checks before it does any work for a request: who sent it, and its body.

A page on another site must not be able to make the server work for it (read
files under ``--root``, run slow comparisons), whatever address it binds:

- **Host** names this server: a loopback name (``localhost``, ``127.0.0.1``,
  ``::1``), the ``--host`` value, a name given with ``--allow-host``, or any IP
  address. DNS rebinding, where a foreign name comes to resolve to this server,
  always sends that foreign *name*, so it is refused; a typed IP address cannot be
  rebound. A request without Host (HTTP/1.0 tools) passes: browsers always send it.
- **Origin**, when present, is the page's own: ``http://`` and the request's Host,
  port included. ``null`` (a sandboxed frame, a ``no-referrer`` form) and every
  other origin are refused. A request *without* Origin passes: browsers send
  Origin on every cross-origin request that is not a GET or HEAD (Fetch standard,
  "append a request Origin header"; Chromium, Firefox and Safari do), so only
  non-browser clients (curl, scripts, the CLI) omit it, and they are not a page
  of another site.
- **Content-Type** of an API POST is ``application/json`` (parameters such as
  ``charset`` allowed). Every type a page can send across origins without a CORS
  preflight (``text/plain``, forms, multipart) is refused, and this server answers
  no preflight, so no cross-site script can deliver a body it would read.
- **Content-Length** is plain ASCII digits (a ``²`` that ``str.isdigit`` takes is
  not a length), given once, and at most the body limit: a larger one is refused
  before a byte of the body is read.
- **The body** is UTF-8 JSON, an object, not nested past what the decoder can
  walk (``json``'s ``RecursionError`` is a 400, not a 500).

Each check raises `ApiError` with the status the page shows.
"""

from __future__ import annotations

import ipaddress
import json
from collections.abc import Iterable
from typing import Any
from urllib.parse import urlsplit

from .models import ApiError

__all__ = ["LOOPBACK_NAMES", "is_loopback", "allowed_hosts", "check_host", "check_origin", "check_json_type",
           "content_length", "parse_json"]

LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1")
_WILDCARDS = {"", "0.0.0.0", "::"}


def is_loopback(host: str) -> bool:
    """Whether binding `host` keeps the server on this machine only."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def allowed_hosts(bind: str, extra: Iterable[str] = ()) -> frozenset[str]:
    """The host names a request's Host may carry (IP addresses are always taken; see the module docstring)."""
    names = {*LOOPBACK_NAMES, *(name.strip().strip("[]").lower() for name in extra)}
    if bind not in _WILDCARDS:
        names.add(bind.strip("[]").lower())
    names.discard("")
    return frozenset(names)


def _is_address(name: str) -> bool:
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


def _host_port(value: str, what: str) -> tuple[str, int | None]:
    """The lower-case host name and the port of a Host value (``name:port``, ``[v6]:port``)."""
    try:
        parts = urlsplit("//" + value.strip())
        host, port = parts.hostname, parts.port
    except ValueError:
        raise ApiError(400, f"{what} {value!r:.80} is not a host[:port]") from None
    if not host or parts.path or parts.query or parts.fragment or parts.username is not None:
        raise ApiError(400, f"{what} {value!r:.80} is not a host[:port]")
    return host, port


def check_host(value: str | None, allowed: frozenset[str]) -> None:
    """Refuse a Host this server does not answer to (DNS rebinding)."""
    if value is None:
        return
    host, _ = _host_port(value, "Host")
    if host not in allowed and not _is_address(host):
        names = ", ".join(sorted(allowed))
        raise ApiError(403, f"Host {host!r} is not a name this server answers to ({names}, or an IP address; "
                            "start it with --allow-host NAME to add one)")


def check_origin(origin: str | None, host: str | None) -> None:
    """Refuse a request sent by a page whose origin is not ``http://<Host>`` (this server's own page)."""
    if origin is None:
        return
    if origin.strip() == "null":
        raise ApiError(403, "requests from an opaque origin (Origin: null) are refused")
    if host is None:
        raise ApiError(403, f"requests from {origin:.80} are refused (no Host to compare it with)")
    own_host, own_port = _host_port(host, "Host")
    try:
        parts = urlsplit(origin.strip())
        theirs = (parts.scheme, parts.hostname, parts.port or 80, parts.path)
    except ValueError:
        theirs = None
    if theirs != ("http", own_host, own_port or 80, ""):
        raise ApiError(403, f"requests from {origin:.80} are refused: only this server's own page may call it")


def check_json_type(value: str | None) -> None:
    """Refuse an API POST whose Content-Type is not ``application/json``."""
    kind = (value or "").split(";", 1)[0].strip().lower()
    if kind != "application/json":
        shown = f"{value!r:.60}" if value else "none"
        raise ApiError(415, f"the API takes Content-Type: application/json (this request had {shown})")


def content_length(values: list[str], limit: int) -> int:
    """The body's length from the Content-Length header(s); refuses what cannot be read safely.

    Raises:
        ApiError: 411 no Content-Length, 400 not ASCII digits or given twice, 413 over `limit`.
    """
    if not values:
        raise ApiError(411, "a POST needs a Content-Length")
    if len(values) > 1:
        raise ApiError(400, "the request has more than one Content-Length")
    text = values[0].strip()
    if not (text.isascii() and text.isdigit()):
        raise ApiError(400, f"Content-Length {text!r:.40} is not a number of bytes")
    n = int(text)
    if n > limit:
        raise ApiError(413, f"the body has {n:,} bytes; this server takes at most {limit:,}")
    return n


def parse_json(raw: bytes) -> dict[str, Any]:
    """The body as a JSON object."""
    try:
        body = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise ApiError(400, f"the body is not UTF-8 (byte offset {exc.start})") from None
    except RecursionError:
        raise ApiError(400, "the body is not JSON this server reads: nested too deeply") from None
    except ValueError as exc:
        raise ApiError(400, f"the body is not JSON: {exc}") from None
    if not isinstance(body, dict):
        raise ApiError(400, "the body must be a JSON object")
    return body
