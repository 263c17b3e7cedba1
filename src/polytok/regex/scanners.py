"""The split patterns with a compiled scanner: exact pattern string -> scanner (`polytok._kernels.split`).

A scanner is ``findall`` of one pattern, hand-written in C (as llama.cpp's ``src/unicode.cpp``
does for its known pre-tokenizer types), over character tables generated from the `regex`
module by ``tools/gen_split_tables.py``, so its pieces equal the pure path's on every text.
It is chosen only by recognising the exact pattern string in its dialect (the translated
`regex` spelling is the key, so an onig and a fancy spelling of one source are told apart);
any other pattern stays on `regex`. Several spellings share a scanner where their matches are
the same on every text (possessive quantifiers that never need to give back; ``\\s`` after
``\\s+(?!\\S)``, which only fails on one char; ``\\s*[\\r\\n]`` and ``\\s*[\\r\\n]+``, which
both end after the last line break of the space run).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from .. import kernels
from . import oniguruma
from .fancy import translate_fancy
from .split_patterns import CL100K, GPT2, GPT2_FACTORED, LLAMA3, O200K, QWEN2, R50K, TEKKEN

__all__ = ["KNOWN", "scanner_for", "scanner_id"]

# (source pattern, dialects it is known in) -> scanner name (`polytok._kernels.split.SCANNERS`)
_SOURCES: list[tuple[str, tuple[str, ...], str]] = [
    (GPT2, ("onig", "fancy"), "gpt2"),  # HF ByteLevel's RE; whisper's pat_str
    (GPT2_FACTORED, ("onig",), "gpt2"),  # polytok's ByteLevel spelling (pre_tokenizers.byte_level)
    (R50K, ("fancy",), "gpt2"),  # r50k_base / p50k_base
    (LLAMA3, ("onig", "fancy"), "llama3"),  # Llama 3 tokenizer.json / llama3 ranks / tekken v3
    (QWEN2, ("onig", "fancy"), "qwen2"),  # Qwen2 / Qwen2.5 / Qwen3 tokenizer.json
    (CL100K, ("fancy",), "cl100k"),  # cl100k_base
    (O200K, ("onig", "fancy"), "o200k"),  # o200k_base, GPT-4o tokenizer.json, llama4 ranks
    (TEKKEN, ("fancy", "onig"), "tekken"),  # tekken.json (Mistral Nemo and later)
]


def _translated(source: str, dialect: str) -> str:
    return oniguruma.translate(source) if dialect == "onig" else translate_fancy(source)


#: the `regex` spelling of every known pattern (as `compile_onig` / `compile_fancy` compile it) -> scanner
KNOWN: dict[str, str] = {_translated(source, dialect): name
                         for source, dialects, name in _SOURCES for dialect in dialects}


def scanner_id(pattern: object) -> int | None:
    """The compiled scanner of `pattern` as its index in ``polytok._kernels.split.SCANNERS`` (what the
    batch kernel takes), or None (pure path, or not a known pattern)."""
    if not isinstance(pattern, oniguruma.OnigPattern):
        return None
    name = KNOWN.get(pattern.native.pattern)
    module = kernels.kernel("split") if name is not None else None
    return None if module is None else module.SCANNERS[name]


def scanner_for(pattern: object) -> Callable[[str], list[str]] | None:
    """``findall`` of `pattern` through its compiled scanner, or None (pure path, or not a known pattern).

    `pattern` is what `compile_onig` / `compile_fancy` return; a literal or any other object gives None.
    """
    if not isinstance(pattern, oniguruma.OnigPattern):
        return None
    name = KNOWN.get(pattern.native.pattern)
    if name is None:
        return None
    module = kernels.kernel("split")
    if module is None:
        return None
    return partial(module.scan, module.SCANNERS[name])
