"""Inputs shared by the NFC/NFD/NFKC/NFKD tests: each pins one rule of HF's normalization."""

from __future__ import annotations

from ._harness import edge_texts, random_texts

TARGETED = [
    "e\u0301 x",            # composition keeps the first char's offsets
    "e\u0302\u0301",        # two compositions in a row (tag -2)
    "a\u0316\u0301",        # composition across a lower-class blocked mark
    "a\u0301\u0301",        # second identical mark is blocked
    "\u1e0b\u0323",         # decomposition + reorder: tags travel with the chars
    "a\u0301\u0323\u0334",  # reorder of three marks
    "\u0344x\u0f73\u0f75",  # decompositions that start with a mark / unsorted
    "\u1100\u1161\u11a8 \uac01 \uac00\u11a8",  # Hangul compose/decompose
    "\ufb01 \u2460 \uff21\u0301 \u212b \u2126 \u338f",  # compatibility
    "\u0301abc",            # leading non-starter
    "\U00011935\U00011930 \U00011938",  # Unicode 13 composition HF lacks
    "a\u1df6\u0301 a\u07fd\u0334 \u0b47\u0b3e",  # marks HF gives class 0; two-starter composite
    "\u32ff \ua7f2 \U0001fbf0 \U0001f16c",  # compatibility mappings newer than HF
    "\u0915\u093c \u0958",  # composition exclusion
    "",
]

POOL = ("ae\u0301\u0323\u0316\u0334\u0345\u0300\u1e0b\u00c5\uac00\uac01\u1100\u1161\u11a8\ufb01\u2460\uff21"
        "\u03a3\u0344\u0f73\u0f71\u0f72\u0f80\u07fd\u1df6\U00011935\U00011930\U00011938\u32ff\u0915\u093c"
        "\u0b47\u0b3e\u0cc6\u0cc2\u0cd5 x")


def texts() -> list[str]:
    return TARGETED + edge_texts() + random_texts(POOL, 1500, seed=12)
