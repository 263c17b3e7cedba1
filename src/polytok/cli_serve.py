"""``polytok serve [MODEL ...] [--host H] [--port N] [--root DIR ...]`` (hooked into `polytok.cli`).

Starts a local web server with one page to look at tokenizations: coloured
token spans, ids, two tokenizers (or two modes) side by side, and the stages of
``polytok explain``. MODELs are loaded at start-up (with ``-o KEY=VALUE``
options); the built-in gpt2 is always there; a path typed in the page is read
only under a ``--root`` folder. Loopback (127.0.0.1) by default; ``--port 0``
picks a free port. The URL is printed once the server listens.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

__all__ = ["add_parser"]


def add_parser(sub: Any, loading: Any) -> dict[str, Any]:
    """Add ``serve`` to `sub`; returns its handler by name."""
    p = sub.add_parser("serve", help="a local web page to look at tokenizations",
                       description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("models", nargs="*", metavar="MODEL", help="tokenizer files or folders to offer")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default: 127.0.0.1, loopback only)")
    p.add_argument("--port", type=int, default=8000, help="port (default 8000; 0 picks a free one)")
    p.add_argument("--root", action="append", default=[], metavar="DIR",
                   help="a folder whose tokenizer files the page may open by path (repeatable)")
    p.add_argument("--quiet", action="store_true", help="do not log each request")
    loading(p)
    return {"serve": _serve}


def _serve(args: argparse.Namespace) -> int:
    from .cli import _load
    from .errors import PolytokError
    from .serve import Registry, make_server

    if not 0 <= args.port <= 65535:
        raise PolytokError(f"cannot listen on port {args.port}: a port is 0 (any free one) to 65535")
    registry = Registry(args.root)
    registry.add_builtin("gpt2")
    for spec in args.models:
        registry.add(spec, _load(spec, args.option))
    try:
        server = make_server(registry, args.host, args.port, quiet=args.quiet)
    except (OSError, OverflowError) as exc:
        raise PolytokError(f"cannot listen on {args.host}:{args.port}: {getattr(exc, 'strerror', None) or exc}") from None
    print(f"polytok serve: {server.url} ({len(registry.listing())} tokenizer(s); Ctrl-C stops)", flush=True)
    if not server.loopback:
        print("polytok serve: warning: not a loopback address; anyone who reaches it can use the page",
              file=sys.stderr)
    try:
        server.serve_forever()
    finally:
        server.server_close()
    return 0
