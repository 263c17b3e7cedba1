"""Write a byte-level BPE (tokenizer.json, GGUF, or tiktoken ranks) as Mistral's tekken.json.

The file is what mistral-common 1.13.1 reads (mistral_common/tokens/tokenizers/tekken.py:
``Tekkenizer.from_file``, ``Tekkenizer.__init__``, ``_reload_mergeable_ranks``): ``vocab`` (one
``{rank, token_bytes (base64), token_str}`` per rank, in rank order), ``special_tokens`` (one
``{rank, token_str, is_control}`` per special token, ``rank`` its place), and ``config``
(``pattern``, ``num_vocab_tokens``, ``default_vocab_size``, ``default_num_special_tokens``,
``version``). ``Tekkenizer`` gives special token ``i`` the id ``i`` (padding the list with
``<SPECIAL_i>`` up to ``default_num_special_tokens``) and the vocabulary entry of rank ``r`` the id
``r + default_num_special_tokens``; its first 256 ranks must be the single bytes in byte order.

So the source's ids are kept exactly when its special tokens all have ids below its first
ordinary token, and its ordinary tokens run without a gap from there, the 256 single bytes first
in byte order (a tokenizer.json made from a tekken.json is so; GPT-2's byte order is not): any
other layout would need a remapping of ids, and is refused. The merges must be expressible as
ranks (`to_tiktoken`'s checks). ``Tekkenizer.encode`` reads special-token text as text, so a
source that matches an added token in any text (HF ``special: false``) is refused as well.

``version`` is written as ``v7``: the last version whose files may leave out ``special_tokens``
(these always list them); it only matters for mistral-common's instruct formatting.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

from .outcome import ConversionRefused, Written
from .to_tiktoken import checked_source, special_notes
from .to_tiktoken_source import ByteLevelSource

__all__ = ["write_tekken", "TEKKEN_VERSION"]

TEKKEN_VERSION = "v7"
_FILLER = "<SPECIAL_{}>"  # Tekkenizer.SPECIAL_TOKEN_TEMPLATE


def write_tekken(source: str, out_path: str) -> Written:
    """Write `source`'s byte-level BPE as a tekken.json at `out_path`.

    Args:
        source: a tokenizer.json (or a folder with one), a byte-level BPE GGUF, or a tiktoken rank file.
        out_path: the tekken.json to write.

    Returns:
        The `Written` file (no load options: the file holds pattern and special tokens).

    Raises:
        ConversionRefused: ``Tekkenizer`` would give other ids than the source (each reason named).
        FormatError: the source cannot be read.
    """
    src, pattern = checked_source(source, "tekken")
    num_special, reasons = _layout(src)
    if reasons:
        raise ConversionRefused(source, "tekken", reasons)
    by_rank = sorted(src.ranks.items(), key=lambda item: item[1])
    vocab = [{"rank": id_ - num_special, "token_bytes": base64.b64encode(data).decode("ascii"),
              "token_str": _text(data)} for data, id_ in by_rank]
    texts = {id_: text for text, id_ in src.specials.items()}
    specials = [{"rank": i, "token_str": texts.get(i, _FILLER.format(i)), "is_control": True}
                for i in range(num_special)]
    data: dict[str, Any] = {
        "config": {"pattern": pattern, "num_vocab_tokens": len(vocab), "default_vocab_size": len(vocab) + num_special,
                   "default_num_special_tokens": num_special, "version": TEKKEN_VERSION},
        "vocab": vocab,
        "special_tokens": specials,
    }
    Path(out_path).write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    fillers = num_special - len(src.specials)
    notes = [f"pattern: {pattern}", f"{num_special} special tokens (ids 0..{num_special - 1}; {fillers} of them "
             f"<SPECIAL_i> fillers), {len(vocab)} ranks from id {num_special}",
             *special_notes(src.specials)[:1], *src.notes]
    return Written("tekken", out_path, files=[out_path], notes=notes)


def _text(data: bytes) -> str | None:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _layout(src: ByteLevelSource) -> tuple[int, list[str]]:
    """The number of special tokens, or the reasons the source's ids are not a tekken layout."""
    first = min(src.ranks.values())
    reasons = []
    if src.always_matched:
        text = min(src.always_matched, key=src.specials.__getitem__)
        reasons.append(f"added token {text!r} (id {src.specials[text]}) is matched in any text; Tekkenizer never "
                       "matches its special tokens")
    late = [(id_, text) for text, id_ in src.specials.items() if id_ >= first]
    if late:
        id_, text = min(late)
        reasons.append(f"special token {text!r} has id {id_}, after the first ordinary token (id {first}): "
                       "tekken gives special tokens the ids before every rank")
    fillers = {_FILLER.format(i) for i in range(first)}
    clash = sorted(text for text in src.specials if text in fillers)
    if clash:
        reasons.append(f"special token {clash[0]!r} is a name Tekkenizer gives its fillers")
    by_id = {id_: data for data, id_ in src.ranks.items()}
    for offset in range(len(by_id)):
        data = by_id.get(first + offset)
        expected = bytes([offset]) if offset < 256 else None
        if data is None or (expected is not None and data != expected):
            found = "no token" if data is None else f"{data!r:.40}"
            want = f"the byte {expected!r}" if expected is not None else "a token (ranks run without a gap)"
            reasons.append(f"id {first + offset} holds {found}, where tekken needs {want}: its first 256 ranks are "
                           "the bytes in byte order, and keeping the source's ids would need a remapping")
            break
    return first, reasons
