"""Write src/polytok/text/regex_sets.py: `polytok.text.chars.regex_set` for the pinned `regex`.

    python tools/gen_regex_sets.py

Each set is measured by testing every code point against the installed `regex`
(`polytok.text.chars.measure_regex_set`), which must be the release pyproject.toml pins;
at run time polytok uses the stored sets only under that release and measures otherwise.
"""

from __future__ import annotations

import sys
from pathlib import Path

import regex

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from polytok.text.chars import measure_regex_set  # noqa: E402  (after the sys.path line)

NAMES = ("PUNCTUATION", "NUMERIC", "WORD")


def main() -> None:
    lines = ['"""`polytok.text.chars.regex_set` for the pinned `regex` release (tools/gen_regex_sets.py)."""',
             "", f"REGEX_VERSION = {regex.__version__!r}", "", "SETS = {"]
    lines += [f"    {name!r}: {measure_regex_set(name)!r}," for name in NAMES]
    lines += ["}", ""]
    (ROOT / "src" / "polytok" / "text" / "regex_sets.py").write_text("\n".join(lines), encoding="utf-8")


if __name__ == "__main__":
    main()
