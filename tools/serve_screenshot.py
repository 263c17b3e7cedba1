"""Take docs/serve-compare.png: `polytok serve`'s side-by-side view in headless Chromium.

Starts a server on a free loopback port with the built-in gpt2, opens the page in
Debian's chromium through Playwright (``pip install playwright``; no browser
download: ``/usr/bin/chromium``), compares gpt2 parsing special-token markers (A)
with gpt2 reading them as text (B), and saves the page.

    python tools/serve_screenshot.py [OUT.png]
"""

from __future__ import annotations

import sys
import threading
import urllib.parse
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "src"))

from polytok.serve import Registry, make_server  # noqa: E402

CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--force-device-scale-factor=1"]
TEXT = ("The tokenizer reads <|endoftext|> as one special token, or as plain text.\n"
        "Prices: $12,345.67 \u2014 caf\u00e9 na\u00efve r\u00e9sum\u00e9s\n"
        "def add(a, b):\n    return a + b  # 3 spaces")


def main(out: Path) -> None:
    from playwright.sync_api import sync_playwright

    registry = Registry()
    registry.add_builtin("gpt2")
    server = make_server(registry, port=0, quiet=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    query = urllib.parse.urlencode({"view": "compare", "a": "gpt2", "sa": "parse", "b": "gpt2", "sb": "text",
                                    "text": TEXT})
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1200, "height": 760})
        page.goto(f"{server.url}?{query}")
        page.wait_for_selector("body[data-updated]:not([data-busy]) #compare-panes .pane")
        page.locator("#compare-panes .pane[data-side=B] .tok.first").first.hover()
        page.screenshot(path=str(out), full_page=False)
        browser.close()
    server.shutdown()
    print(f"{out}: {out.stat().st_size:,} bytes")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else REPO / "docs" / "serve-compare.png")
