"""Generate src/polytok/text/unicode_tables.py by probing the installed HF `tokenizers`.

HF tokenizers 0.23.3 mixes Unicode data of several ages: NFC/NFD/NFKC/NFKD come
from `unicode-normalization-alignments` (decompositions ~Unicode 12.0, combining
classes older still), Bert's control / non-spacing-mark tests from
`unicode_categories` (~Unicode 8), `StripAccents` from the normalization crate's
`is_combining_mark`, and `Lowercase` from the Rust standard library (~Unicode 16).
Python's `unicodedata` has its own version, so polytok freezes what the reference
does, found by asking the reference itself about every code point:

* NORM_INERT: code points that HF leaves alone in every normalization form and
  treats as starters (combining class 0) although this Python's `unicodedata`
  decomposes them, gives them a non-zero combining class, or composes them.
* HF_NONZERO_CCC / HF_DECOMPOSABLE: what HF does know (absolute, so polytok can
  recompute NORM_INERT under another `unicodedata` version).
* BERT_CONTROL: what BertNormalizer's clean_text deletes.
* BERT_NONSPACING: the marks BertNormalizer's strip_accents deletes (among
  characters that NFD leaves unchanged, the only ones it ever sees).
* COMBINING_MARKS: what StripAccents deletes.
* LOWER_OVERRIDES: HF's per-character lowercase where Python's `str.lower` on
  that single character differs.

Never derived from polytok. Run: python tools/gen_unicode_tables.py
"""

from __future__ import annotations

import sys
import unicodedata
from pathlib import Path

import tokenizers
from tokenizers import normalizers as hf

OUT = Path(__file__).resolve().parent.parent / "src" / "polytok" / "text" / "unicode_tables.py"
CODE_POINTS = [c for c in range(0x110000) if not 0xD800 <= c < 0xE000]
MARK_CCC_1 = "\u0334"    # combining class 1, lowest non-zero
MARK_CCC_240 = "\u0345"  # combining class 240, highest


def ranges(points: list[int]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for c in sorted(set(points)):
        if out and out[-1][1] == c - 1:
            out[-1] = (out[-1][0], c)
        else:
            out.append((c, c))
    return out


def decomposable() -> list[int]:
    nfkd = hf.NFKD()
    return [c for c in CODE_POINTS if nfkd.normalize_str(chr(c)) != chr(c)]


def ccc_disagreements() -> list[int]:
    """Code points Python gives a non-zero class that HF reorders as class 0."""
    nfd = hf.NFD()
    out = []
    for c in CODE_POINTS:
        if unicodedata.combining(chr(c)) and unicodedata.normalize("NFD", chr(c)) == chr(c):
            for probe in ("a" + chr(c) + MARK_CCC_1, "a" + MARK_CCC_240 + chr(c)):
                if nfd.normalize_str(probe) != unicodedata.normalize("NFD", probe):
                    out.append(c)
                    break
    return out


def composition_disagreements() -> list[int]:
    """Both parts of every pair Python composes and HF does not."""
    nfc = hf.NFC()
    out = []
    for c in CODE_POINTS:
        d = unicodedata.decomposition(chr(c))
        if not d or d.startswith("<"):
            continue
        pair = "".join(chr(int(x, 16)) for x in d.split())
        if len(pair) == 2 and unicodedata.normalize("NFC", pair) == chr(c) and nfc.normalize_str(pair) != chr(c):
            out.extend(ord(x) for x in pair)
    return out


def norm_inert(hf_decomposable: set[int]) -> list[int]:
    inert = set(ccc_disagreements()) | set(composition_disagreements())
    for form in ("NFD", "NFKD", "NFC", "NFKC"):
        ref = getattr(hf, form)()
        for c in CODE_POINTS:
            s = chr(c)
            got, want = ref.normalize_str(s), unicodedata.normalize(form, s)
            if got != want:
                if got != s:
                    sys.exit(f"{form} U+{c:04X}: HF changes it differently from Python; not an inert code point")
                inert.add(c)
    return sorted(inert)


def bert_control() -> list[int]:
    clean = hf.BertNormalizer(clean_text=True, handle_chinese_chars=False, strip_accents=False, lowercase=False)
    return [c for c in CODE_POINTS if clean.normalize_str(chr(c)) == ""]


def bert_nonspacing() -> list[int]:
    strip = hf.BertNormalizer(clean_text=False, handle_chinese_chars=False, strip_accents=True, lowercase=False)
    nfd = hf.NFD()
    return [c for c in CODE_POINTS if nfd.normalize_str(chr(c)) == chr(c) and strip.normalize_str(chr(c)) == ""]


def combining_marks() -> list[int]:
    strip = hf.StripAccents()
    return [c for c in CODE_POINTS if strip.normalize_str(chr(c)) == ""]


def lower_overrides() -> dict[int, str]:
    lower = hf.Lowercase()
    out = {}
    for c in CODE_POINTS:
        got = lower.normalize_str(chr(c))
        if got != chr(c).lower():
            out[c] = got
    return out


def wrap(items: list[str], per_line: int) -> str:
    lines = [", ".join(items[i:i + per_line]) + "," for i in range(0, len(items), per_line)]
    return "".join(f"\n    {line}" for line in lines) + "\n"


def fmt_ranges(name: str, points: list[int], doc: str) -> str:
    items = [f"(0x{a:04X}, 0x{b:04X})" for a, b in ranges(points)]
    return f"# {doc}\n{name}: tuple[tuple[int, int], ...] = ({wrap(items, 5)})\n"


def fmt_lower(overrides: dict[int, str]) -> str:
    items = [f"{chr(c)!a}: {s!a}" for c, s in sorted(overrides.items())]
    return ("# HF Lowercase of one character, where Python's str.lower() of it differs\n"
            f"LOWER_OVERRIDES: dict[str, str] = {{{wrap(items, 4)}}}\n")


def main() -> None:
    hf_decomp = decomposable()
    python_nonzero = [c for c in CODE_POINTS if unicodedata.combining(chr(c))]
    ccc_off = set(ccc_disagreements())
    hf_nonzero = [c for c in python_nonzero if c not in ccc_off]
    lower = lower_overrides()
    parts = [
        '"""Unicode data as HF tokenizers uses it, frozen by tools/gen_unicode_tables.py (do not edit).\n\n'
        "Ranges are inclusive (first, last) code point pairs. See the generator's\n"
        'docstring for what each table means and how it was measured.\n"""\n\n',
        f"TOKENIZERS_VERSION = {tokenizers.__version__!r}\n",
        f"UNIDATA_VERSION = {unicodedata.unidata_version!r}\n\n",
        fmt_ranges("NORM_INERT", norm_inert(set(hf_decomp)),
                   "left alone by HF NF*, class-0 starters there; relative to UNIDATA_VERSION"),
        fmt_ranges("HF_NONZERO_CCC", hf_nonzero, "non-zero canonical combining class in HF NF*"),
        fmt_ranges("HF_DECOMPOSABLE", hf_decomp, "changed by HF NFKD on their own"),
        fmt_ranges("BERT_CONTROL", bert_control(), "deleted by BertNormalizer clean_text"),
        fmt_ranges("BERT_NONSPACING", bert_nonspacing(), "deleted by BertNormalizer strip_accents after NFD"),
        fmt_ranges("COMBINING_MARKS", combining_marks(), "deleted by StripAccents"),
        fmt_lower(lower),
    ]
    OUT.write_text("".join(parts), encoding="utf-8")
    print(f"wrote {OUT} (tokenizers {tokenizers.__version__}, unicodedata {unicodedata.unidata_version})")


if __name__ == "__main__":
    main()
