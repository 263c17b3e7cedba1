"""``polytok serve``: a local page to look at tokenizations.

- `models`: the tokenizers a page may use (built-in, command line, paths under ``--root``);
- `views`: token spans, bytes and kinds, differing regions, explain stages as JSON-ready data;
- `api`: the JSON endpoints' request checks and limits;
- `checks`: what is refused before any work (another site's requests, unreadable bodies);
- `connections`: how many connections stay open, for how long, and which gives way;
- `app`: the HTTP server (standard library), routing and JSON errors;
- ``static/``: the page (plain HTML, CSS, JavaScript; no build step, nothing fetched from elsewhere).
"""

from __future__ import annotations

from .app import make_server
from .models import ApiError, Registry

__all__ = ["make_server", "Registry", "ApiError"]
