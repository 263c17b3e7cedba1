"""Freeze the character classes ``\\w``, ``\\d`` and ``\\s`` as HF tokenizers' Oniguruma sees them.

Run: ``python tools/gen_onig_classes.py`` (needs ``tokenizers``); writes
``src/polytok/regex/oniguruma_classes.py``. Each class is measured, code point by code
point, through the live reference: a ``Split(Regex(cls), "removed", invert=True)``
pre-tokenizer keeps exactly the characters the class matches. Onig's ``\\w`` is
not Python's (it holds Alphabetic, M, Nd, Pc and the Latin-1 digits ``²³¹¼½¾``,
from an older Unicode than the `regex` module's), so polytok uses these sets.
Inside a bracket set onig's ``\\w`` is a different set (``[\\w]`` leaves ``²`` out),
so ``*_IN_SET`` records the class as written inside brackets.
"""

from __future__ import annotations

import sys
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "src" / "polytok" / "regex" / "oniguruma_classes.py"


def measure(pattern: str) -> list[int]:
    from tokenizers import Regex, pre_tokenizers

    split = pre_tokenizers.Split(Regex(pattern), behavior="removed", invert=True)
    points = [i for i in range(0x110000) if not 0xD800 <= i < 0xE000]
    found: list[int] = []
    for start in range(0, len(points), 20_000):
        part = points[start:start + 20_000]
        for _, (a, b) in split.pre_tokenize_str("".join(map(chr, part))):
            found.extend(part[a:b])
    return sorted(found)


def ranges(points: list[int]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for p in points:
        if out and out[-1][1] == p - 1:
            out[-1] = (out[-1][0], p)
        else:
            out.append((p, p))
    return out


def newer_than_onig() -> list[int]:
    """Code points onig holds unassigned but the installed `regex` module knows (newer Unicode)."""
    import regex

    unassigned = set(measure(r"\p{Cn}"))
    known = regex.compile(r"\P{Cn}")
    return sorted(p for p in unassigned if known.match(chr(p)))


def main() -> int:
    import regex
    import tokenizers

    lines = [
        '"""Oniguruma character classes as HF tokenizers matches them, frozen by',
        'tools/gen_onig_classes.py (do not edit). Inclusive code point ranges."""',
        "",
        f"TOKENIZERS_VERSION = {tokenizers.__version__!r}",
        "",
    ]
    classes = (("WORD", r"\w"), ("WORD_IN_SET", r"[\w]"), ("DIGIT", r"\d"), ("DIGIT_IN_SET", r"[\d]"),
               ("SPACE", r"\s"))
    for name, pattern in classes:
        rs = ranges(measure(pattern))
        lines.append(f"{name}: tuple[tuple[int, int], ...] = (")
        for i in range(0, len(rs), 6):
            lines.append("    " + " ".join(f"(0x{a:04X}, 0x{b:04X})," for a, b in rs[i:i + 6]))
        lines.append(")")
        print(f"{name}: {len(rs)} ranges", file=sys.stderr)
    newer = ranges(newer_than_onig())
    lines += ["", f"REGEX_VERSION = {regex.__version__!r}",
              "# assigned in REGEX_VERSION's Unicode, unassigned (Cn) for onig: matched as a Cn stand-in",
              "NEWER_THAN_ONIG: tuple[tuple[int, int], ...] = ("]
    for i in range(0, len(newer), 6):
        lines.append("    " + " ".join(f"(0x{a:04X}, 0x{b:04X})," for a, b in newer[i:i + 6]))
    lines.append(")")
    OUT.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
