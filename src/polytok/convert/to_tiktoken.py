"""Write a byte-level BPE (tokenizer.json, GGUF, or tiktoken ranks) as a tiktoken rank file.

The file is tiktoken 0.14's format (tiktoken/load.py ``load_tiktoken_bpe``; ``dump_tiktoken_bpe``
writes the same lines): ``base64(token_bytes) SP rank`` a line, by rank. A rank is the token's id
in the source, so tiktoken's ids are the source's; the conversion is refused (`ConversionRefused`,
every reason named) unless tiktoken then gives the source's ids on every text: the checks are in
`to_tiktoken_source` (what the pipeline does around the model) and `to_tiktoken_ranks` (the merges).

The file holds neither the split pattern nor the special tokens: `Written.load_options` carries
both as `polytok.load` takes them (``pattern``, ``special_tokens``: `formats.tiktoken.read_tiktoken`),
and the notes name them; tiktoken's ``Encoding(name, pat_str=..., mergeable_ranks=...,
special_tokens=...)`` takes the same. A tiktoken file as source is written back line for line.
"""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

from .outcome import ConversionRefused, Written
from .to_tiktoken_ranks import rank_refusals
from .to_tiktoken_source import ByteLevelSource, read_source

__all__ = ["write_tiktoken", "checked_source", "special_notes"]

_LISTED = 12  # special tokens named one by one in a note


def write_tiktoken(source: str, out_path: str) -> Written:
    """Write `source`'s byte-level BPE as tiktoken ranks at `out_path`.

    Args:
        source: a tokenizer.json (or a folder with one), a byte-level BPE GGUF, or a tiktoken rank file.
        out_path: the rank file to write.

    Returns:
        The `Written` file; ``load_options`` are ``pattern`` and ``special_tokens`` for `polytok.load`
        (tiktoken's ``pat_str`` and ``special_tokens``).

    Raises:
        ConversionRefused: tiktoken would give other ids than the source on some text (each reason named).
        FormatError: the source cannot be read.
    """
    src, pattern = checked_source(source, "tiktoken")
    # a token of no bytes is "=" (tiktoken's loader splits an empty first field away; whisper's files)
    lines = [(base64.b64encode(data) or b"=") + b" %d\n" % rank
             for data, rank in sorted(src.ranks.items(), key=lambda item: item[1])]
    Path(out_path).write_bytes(b"".join(lines))
    options: dict[str, Any] = {"pattern": pattern, "special_tokens": dict(src.specials)}
    notes = [f"pattern: {pattern}", *special_notes(src.specials), *src.notes]
    return Written("tiktoken", out_path, files=[out_path], notes=notes, load_options=options)


def checked_source(source: str, target: str) -> tuple[ByteLevelSource, str]:
    """`source` read and its split pattern, or every reason it cannot be written as tiktoken ranks at once."""
    src = read_source(source)
    reasons = list(src.reasons)
    if src.pattern is None and not reasons:
        reasons.append("no split pattern")
    reasons += _id_clashes(src)
    if not reasons and not src.from_ranks:
        reasons += rank_refusals(src.ranks, src.merges, ignore_merges=src.ignore_merges,
                                 specials=src.special_bytes, lines=src.merge_lines)
    if reasons or src.pattern is None:
        raise ConversionRefused(source, target, reasons)
    return src, src.pattern


def _id_clashes(src: ByteLevelSource) -> list[str]:
    by_id: dict[int, bytes] = {}
    for data, id_ in src.ranks.items():
        if id_ in by_id:
            return [f"tokens {by_id[id_]!r:.40} and {data!r:.40} share the id {id_}: a rank is one token's"]
        by_id[id_] = data
    return []


def special_notes(specials: dict[str, int]) -> list[str]:
    """The special tokens, for the report: tiktoken's file holds none."""
    if not specials:
        return ["special tokens: none"]
    ordered = sorted(specials.items(), key=lambda item: item[1])
    shown = ", ".join(f"{text!r}={id_}" for text, id_ in ordered[:_LISTED])
    more = f" and {len(ordered) - _LISTED} more" if len(ordered) > _LISTED else ""
    notes = [f"special tokens (pass them as special_tokens; the rank file has none): {shown}{more}"]
    texts = [text for text, _ in ordered]
    prefixed = next(((a, b) for a in texts for b in texts if a != b and b.startswith(a)), None) \
        if len(texts) <= 2000 else None
    if prefixed:
        notes.append(f"special token {prefixed[0]!r} begins {prefixed[1]!r}: tiktoken's match between them "
                     "depends on its hash order, polytok and the source take the longer")
    return notes
