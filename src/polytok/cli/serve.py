"""``polytok serve [MODEL ...] [--host H] [--port N] [--root DIR ...]`` (hooked into `polytok.cli.main`).

Starts a local web server with one page to look at tokenizations: coloured
token spans, ids, two tokenizers (or two modes) side by side, and the stages of
``polytok explain``. MODELs are loaded at start-up (with ``-o KEY=VALUE``
options); the built-in gpt2 is always there; a path typed in the page is read
only under a ``--root`` folder. Loopback (127.0.0.1) by default; ``--port 0``
picks a free port. The URL is printed once the server listens.

The server answers only its own page: a request from another site's page (its
Origin, ``null`` included), a POST that is not JSON, or a Host that is not a
loopback name, the --host value, an --allow-host name or an IP address is
refused, whatever the address. Bound beyond loopback, it says on stderr what
that exposes.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

__all__ = ["add_parser", "exposure_note"]


def add_parser(sub: Any, loading: Any) -> dict[str, Any]:
    """Add ``serve`` to `sub`; returns its handler by name."""
    p = sub.add_parser("serve", help="a local web page to look at tokenizations",
                       description=(__doc__ or "").split("\n\n", 1)[-1].replace("``", ""),
                       epilog="examples:\n  polytok serve                                  # the built-in gpt2 only\n"
                              "  polytok serve tokenizer.json --port 0 --root ~/models",
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("models", nargs="*", metavar="MODEL", help="tokenizer files or folders to offer")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default: 127.0.0.1, loopback only)")
    p.add_argument("--port", type=int, default=8000, help="port (default 8000; 0 picks a free one)")
    p.add_argument("--allow-host", action="append", default=[], metavar="NAME",
                   help="one more host name the page may be reached by (repeatable; loopback names, the --host "
                        "value and IP addresses always are)")
    p.add_argument("--root", action="append", default=[], metavar="DIR",
                   help="a folder whose tokenizer files the page may open by path (repeatable)")
    p.add_argument("--quiet", action="store_true", help="do not log each request")
    loading(p)
    return {"serve": _serve}


def _serve(args: argparse.Namespace) -> int:
    from ..errors import PolytokError
    from ..serve import Registry, make_server
    from .main import load_model

    if not 0 <= args.port <= 65535:
        raise PolytokError(f"cannot listen on port {args.port}: a port is 0 (any free one) to 65535")
    registry = Registry(args.root)
    registry.add_builtin("gpt2")
    for spec in args.models:
        registry.add(spec, load_model(spec, args.option))
    try:
        server = make_server(registry, args.host, args.port, quiet=args.quiet, allow_hosts=args.allow_host)
    except (OSError, OverflowError) as exc:
        reason = getattr(exc, "strerror", None) or exc
        raise PolytokError(f"cannot listen on {args.host}:{args.port}: {reason}") from None
    print(f"polytok serve: {server.url} ({len(registry.listing())} tokenizer(s); Ctrl-C stops)", flush=True)
    if not server.loopback:
        print(exposure_note(server), file=sys.stderr, flush=True)
    try:
        server.serve_forever()
    finally:
        server.server_close()
    return 0


def exposure_note(server: Any) -> str:
    """The one line said on start-up when `server` listens beyond loopback: who can reach what."""
    host, port = server.server_address[:2]
    where = "every interface" if host in ("0.0.0.0", "::", "") else host
    reads = (f"read the tokenizer files under {', '.join(server.registry.roots)}" if server.registry.roots
             else "read no other file (no --root)")
    names = ", ".join(sorted(server.allowed_hosts))
    return (f"polytok serve: warning: listening on {where} (port {port}), not only loopback: anyone who can reach "
            f"it can use the page, run its tokenizers on any text and {reads}; there is no login. Requests "
            f"must name it by IP address or as {names} (add names with --allow-host)")
