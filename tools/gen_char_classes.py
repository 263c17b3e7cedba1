"""Generate the pre-tokenizers' frozen character classes by probing the installed HF `tokenizers`.

Writes two modules (never edit them by hand):

* src/polytok/text/char_classes.py
  - PUNCTUATION: what BertPreTokenizer / Punctuation isolate (ASCII punctuation
    or P* of the ~Unicode 8 `unicode_categories` crate), found by running
    ``Punctuation(behavior="removed")`` over every code point;
  - NUMERIC: Rust ``char::is_numeric`` (N* of the Rust std's Unicode), found
    with ``Digits``;
  - WORD: the Rust `regex` crate's Unicode ``\\w`` as the ``Whitespace``
    pre-tokenizer sees it, found with ``Whitespace``.
  It also checks that polytok.text.chars.WHITE_SPACE is what ``WhitespaceSplit``
  drops.
* src/polytok/pre_tokenizers/unicode_scripts_table.py
  the crate's own script table, read from the reference source file
  ``tokenizers/src/pre_tokenizers/unicode_scripts/scripts.rs`` (``get_script``;
  first matching arm wins, unlisted code points are ``Any``), then checked
  against the live ``UnicodeScripts`` on every code point: which are ``Any``,
  where the script changes between neighbours, that runs sharing a name share
  a script and that different names differ.

Never derived from polytok. Run:
    python tools/gen_char_classes.py [path/to/scripts.rs]
(default /tmp/ref/tokenizers-0.23.3/tokenizers/src/pre_tokenizers/unicode_scripts/scripts.rs)
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import tokenizers
from tokenizers import pre_tokenizers as hf

ROOT = Path(__file__).resolve().parent.parent
OUT_CLASSES = ROOT / "src" / "polytok" / "text" / "char_classes.py"
OUT_SCRIPTS = ROOT / "src" / "polytok" / "pre_tokenizers" / "unicode_scripts_table.py"
DEFAULT_SCRIPTS_RS = Path("/tmp/ref/tokenizers-0.23.3/tokenizers/src/pre_tokenizers/unicode_scripts/scripts.rs")
CODE_POINTS = [c for c in range(0x110000) if not 0xD800 <= c < 0xE000]


def ranges(points: list[int]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for c in sorted(set(points)):
        if out and out[-1][1] == c - 1:
            out[-1] = (out[-1][0], c)
        else:
            out.append((c, c))
    return out


def piece_starts(pre_tokenizer: object, text: str) -> set[int]:
    return {start for _, (start, _) in pre_tokenizer.pre_tokenize_str(text)}  # type: ignore[attr-defined]


def punctuation() -> list[int]:
    text = "".join(map(chr, CODE_POINTS))
    kept: set[int] = set()
    for _, (a, b) in hf.Punctuation(behavior="removed").pre_tokenize_str(text):
        kept.update(range(a, b))
    return [c for i, c in enumerate(CODE_POINTS) if i not in kept]


def numeric() -> list[int]:
    # "c a c a ...": a numeric c is a piece of its own, any other c joins the 'a's.
    text = "".join(chr(c) + "a" for c in CODE_POINTS)
    singles = {a for _, (a, b) in hf.Digits(individual_digits=False).pre_tokenize_str(text) if b == a + 1}
    return [c for i, c in enumerate(CODE_POINTS) if 2 * i in singles]


def word_and_space() -> tuple[list[int], list[int]]:
    # "a c ! ...": a word c glues to 'a', another non-space c glues to '!', a space drops out.
    text = "".join("a" + chr(c) + "!" for c in CODE_POINTS)
    spans = {span for _, span in hf.Whitespace().pre_tokenize_str(text)}
    word = [c for i, c in enumerate(CODE_POINTS) if (3 * i, 3 * i + 2) in spans]
    taken = {c for i, c in enumerate(CODE_POINTS) if (3 * i + 1, 3 * i + 3) in spans} | set(word)
    space = [c for c in CODE_POINTS if c not in taken]
    return word, space


def white_space() -> list[int]:
    text = "".join(map(chr, CODE_POINTS))
    kept: set[int] = set()
    for _, (a, b) in hf.WhitespaceSplit().pre_tokenize_str(text):
        kept.update(range(a, b))
    return [c for i, c in enumerate(CODE_POINTS) if i not in kept]


# -- scripts ----------------------------------------------------------------------------

_ARM = re.compile(r"^\s*0x([0-9A-Fa-f]+)(?:\.\.=0x([0-9A-Fa-f]+))?\s*=>\s*Script::(\w+),", re.M)


def parse_scripts_rs(path: Path) -> dict[int, str]:
    table: dict[int, str] = {}
    for m in _ARM.finditer(path.read_text(encoding="utf-8")):
        first = int(m.group(1), 16)
        last = int(m.group(2), 16) if m.group(2) else first
        for c in range(first, last + 1):
            table.setdefault(c, m.group(3))  # the first matching arm wins
    return table


def fixed(table: dict[int, str], c: int) -> str:
    """The pre-tokenizer's adjusted script (unicode_scripts/pre_tokenizer.rs, fixed_script)."""
    if c == 0x30FC:
        return "Han"
    if c == 0x20:
        return "Any"
    name = table.get(c, "Any")
    return "Han" if name in ("Hiragana", "Katakana") else name


def check_scripts(table: dict[int, str]) -> None:
    scripts = hf.UnicodeScripts()
    script = {c: fixed(table, c) for c in CODE_POINTS}
    # 1. Any: no cut before c after either marker (Runic U+16A0, Ogham U+1681).
    for marker in ("\u16a0", "\u1681"):
        starts = piece_starts(scripts, "".join(marker + chr(c) for c in CODE_POINTS))
        for i, c in enumerate(CODE_POINTS):
            cut = 2 * i + 1 in starts
            expect = script[c] not in ("Any", fixed(table, ord(marker)))
            if cut != expect:
                sys.exit(f"UnicodeScripts U+{c:04X}: live cut={cut}, scripts.rs says {script[c]}")
    # 2. neighbours among non-Any code points: a cut exactly where the script changes.
    real = [c for c in CODE_POINTS if script[c] != "Any"]
    starts = piece_starts(scripts, "".join(map(chr, real)))
    for i in range(1, len(real)):
        if (i in starts) != (script[real[i]] != script[real[i - 1]]):
            sys.exit(f"UnicodeScripts U+{real[i - 1]:04X} U+{real[i]:04X}: live and scripts.rs disagree")
    # 3. every run agrees with its name's first run, and every two names differ.
    first: dict[str, int] = {}
    pairs: list[tuple[int, int, bool]] = []
    for c in real:
        first.setdefault(script[c], c)
        if script[c] == script[first[script[c]]] and c != first[script[c]]:
            pairs.append((first[script[c]], c, False))
    names = sorted(first)
    pairs += [(first[a], first[b], True) for a in names for b in names if a != b]
    # " " is Any: it separates the pairs without taking part in them.
    text = "".join(chr(a) + chr(b) + " " for a, b, _ in pairs)
    starts = piece_starts(scripts, text)
    for i, (a, b, differ) in enumerate(pairs):
        if (3 * i + 1 in starts) != differ:
            sys.exit(f"UnicodeScripts U+{a:04X} U+{b:04X}: expected differ={differ}")


def script_ranges(table: dict[int, str]) -> list[tuple[int, int, str]]:
    out: list[tuple[int, int, str]] = []
    for c in sorted(table):
        name = table[c]
        if out and out[-1][1] == c - 1 and out[-1][2] == name:
            out[-1] = (out[-1][0], c, name)
        else:
            out.append((c, c, name))
    return out


# -- output -----------------------------------------------------------------------------

def wrap(items: list[str], per_line: int) -> str:
    lines = [", ".join(items[i:i + per_line]) + "," for i in range(0, len(items), per_line)]
    return "".join(f"\n    {line}" for line in lines) + "\n"


def fmt_ranges(name: str, points: list[int], doc: str) -> str:
    items = [f"(0x{a:04X}, 0x{b:04X})" for a, b in ranges(points)]
    return f"# {doc}\n{name}: tuple[tuple[int, int], ...] = ({wrap(items, 5)})\n"


def write_classes() -> None:
    word, space = word_and_space()
    from polytok.text.chars import WHITE_SPACE  # the fixed set polytok already uses: check it, never derive it

    for name, got in (("Whitespace's \\s", space), ("WhitespaceSplit", white_space())):
        if {chr(c) for c in got} != set(WHITE_SPACE):
            sys.exit(f"{name} disagrees with polytok.text.chars.WHITE_SPACE: {sorted(map(hex, got))}")
    parts = [
        '"""Character classes of HF tokenizers\' pre-tokenizers, frozen by tools/gen_char_classes.py (do not edit).\n\n'
        "Ranges are inclusive (first, last) code point pairs, measured on the live\n"
        'reference (see the generator\'s docstring).\n"""\n\n',
        f"TOKENIZERS_VERSION = {tokenizers.__version__!r}\n\n",
        fmt_ranges("PUNCTUATION", punctuation(), "isolated by BertPreTokenizer and Punctuation"),
        fmt_ranges("NUMERIC", numeric(), "Rust char::is_numeric, as Digits sees it"),
        fmt_ranges("WORD", word, "Rust regex crate \\w, as the Whitespace pre-tokenizer sees it"),
    ]
    OUT_CLASSES.write_text("".join(parts), encoding="utf-8")


def write_scripts(path: Path) -> None:
    table = parse_scripts_rs(path)
    check_scripts(table)
    items = [f"(0x{a:04X}, 0x{b:04X}, {n!r})" for a, b, n in script_ranges(table)]
    OUT_SCRIPTS.write_text(
        '"""The script table of HF tokenizers\' UnicodeScripts, frozen by tools/gen_char_classes.py (do not edit).\n\n'
        "Read from tokenizers/src/pre_tokenizers/unicode_scripts/scripts.rs (get_script)\n"
        "and checked against the live pre-tokenizer on every code point. Inclusive\n"
        "(first, last, script) ranges, sorted; a code point outside them is script Any.\n"
        "The pre-tokenizer's own adjustments (kana and U+30FC as Han, U+0020 as Any)\n"
        'are applied by unicode_scripts.py, not here.\n"""\n\n'
        f"TOKENIZERS_VERSION = {tokenizers.__version__!r}\n\n"
        f"SCRIPT_RANGES: tuple[tuple[int, int, str], ...] = ({wrap(items, 3)})\n",
        encoding="utf-8",
    )


def main() -> None:
    sys.path.insert(0, str(ROOT / "src"))
    write_classes()
    write_scripts(Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT_SCRIPTS_RS)
    print(f"wrote {OUT_CLASSES} and {OUT_SCRIPTS} (tokenizers {tokenizers.__version__})")


if __name__ == "__main__":
    main()
