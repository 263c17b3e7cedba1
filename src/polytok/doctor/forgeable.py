"""``forgeable-markers``: special-token markers a user's text can forge under the default mode.

Where the format's reference engine parses special-token markers in any text its plain
call encodes (`Tokenizer.default_special` is PARSE: HF tokenizers' ``encode``, whose
``encode_special_tokens`` is off unless set, and GGUF, read as llama.cpp's
``parse_special=true``; `polytok.facts.FormatFacts.default_special`), a user who writes
``<|im_end|>`` in a message gets the control id the model was trained to end a turn on.
Each marker ``special=`` governs (`polytok.tokenizer.special_controls.markers`) is encoded
as a text of its own with the default mode; the markers that come out as their own id are reported, the ones the chat
template writes or the tokenizer names (BOS, EOS, end of generation) first. The remedy is
per call: ``special="raise"`` refuses any marker in user text, ``special="text"`` reads
them as text, ``AllowedSpecial({...})`` parses only the listed ones.
"""

from __future__ import annotations

from ..special import SpecialTokens
from ..tokenizer import Tokenizer
from ..tokenizer.special_controls import markers
from .finding import Finding

__all__ = ["forgeable_markers"]

_SHOWN = 6


def _important(tok: Tokenizer, marker: str, id_: int) -> bool:
    named = {t.id for t in tok.facts.named_tokens.values()}
    return id_ in named or id_ in tok.eog_ids or any(marker in t for t in tok.facts.chat.templates.values())


def forgeable_markers(tok: Tokenizer, files: tuple[str, ...]) -> list[Finding]:
    """The finding for `tok`'s markers that its default mode parses in user text."""
    if tok.default_special != SpecialTokens.PARSE:
        return []
    forged = []
    for marker in sorted(markers(tok)):
        id_ = tok.token_to_id(marker)
        if marker and id_ is not None and id_ in tok.encode(marker, add_special=False):
            forged.append({"text": marker, "id": id_, "important": _important(tok, marker, id_)})
    if not forged:
        return []
    forged.sort(key=lambda m: (not m["important"], m["id"]))
    shown = ", ".join(f"{m['text']} ({m['id']})" for m in forged[:_SHOWN])
    more = f" and {len(forged) - _SHOWN} more" if len(forged) > _SHOWN else ""
    message = (f"{len(forged)} special-token markers in user text encode to their control ids by default "
               f"(special={tok.default_special.value}): {shown}{more}; encode user text with special=\"raise\" "
               "to refuse them, special=\"text\" to read them as text, or AllowedSpecial({...}) to parse only some")
    details = {"default_special": tok.default_special.value, "markers": forged,
               "remedies": ['special="raise"', 'special="text"', "AllowedSpecial(markers)"],
               "reasons": ["marker-parsed-one-side"]}
    return [Finding("forgeable-markers", "warning", message, files, details)]
