"""Content is text, markers are markup: special-token markers that a caller wrote are encoded as text.

transformers 5.24.0: ``tokenization_utils_base.py`` ``_get_control_tokens`` (which
added tokens count as control tokens: the special ones, the config's
``chat_control_tokens``, else the non-white-space ones the template's literal text
holds) and ``utils/chat_template_utils.py`` ``mark_control_tokens`` (wrap each
control token in the caller's strings in two private-use code points, longest
token first, after dropping any such code points already there),
``encode_marked_chat`` and ``_encode_chat_piece`` (split the rendered chat at the
markers; a marked token is encoded with no added token matched, the text between
is encoded normally, each piece after the first behind a ``"\\n"`` that is cut off
again so SentencePiece adds no prefix space mid-chat).

Where the format declares its control tokens (`ChatFacts.control_tokens`: a GGUF
vocabulary's CONTROL/UNKNOWN entries) they are the control tokens, and where the
format's own text mode is how content is read (`ChatFacts.content_in_text_mode`:
llama.cpp's ``parse_special=false``, USER_DEFINED entries still match) "as text"
is that mode; llama.cpp has no such chat mode itself, so there is no reference to
match. This module reads only those typed facts (`polytok.facts`), never a format.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from ..errors import EncodeError
from ..normalized import NormalizedString
from ..special import SpecialTokens
from .sandbox import literal_text

if TYPE_CHECKING:
    from ..tokenizer import Tokenizer

__all__ = ["control_tokens", "marker", "encode_marked", "MARKERS"]

# Private-use code points wrapped around control tokens in caller strings (transformers' values,
# so a string marked by either library means the same)
_START, _END = "\U000f0000", "\U000f0001"
#: the two code points `marker` writes and `encode_marked` cuts out
MARKERS = _START + _END


def control_tokens(tok: Tokenizer, source: str) -> tuple[str, ...]:
    """Markers read as text when a caller writes them (transformers' ``_get_control_tokens``)."""
    chat = tok.facts.chat
    if chat.control_tokens is not None:  # the format declares them (GGUF's CONTROL and UNKNOWN entries)
        return chat.control_tokens
    entries = list(tok.added.id_to_entry.values())
    if chat.listed_control_tokens is not None:
        wanted = set(chat.listed_control_tokens)
        return tuple(e.content for e in entries if e.special or e.content in wanted)
    # default: the added tokens the template writes itself, except white-space ones (Gemma's "\n")
    literals = literal_text(source)
    return tuple(e.content for e in entries
                 if e.special or (e.content in literals and not e.content.isspace()))


def _alternation(tokens: Sequence[str]) -> str:
    longest_first = sorted(set(tokens), key=len, reverse=True)
    return "|".join(map(re.escape, longest_first)) or "(?!)"


def marker(control: Sequence[str]) -> Callable[[Any], Any]:
    pattern = re.compile(_alternation(control))

    def mark(obj: Any) -> Any:
        if isinstance(obj, str):
            # drop markers already there, so a caller cannot forge a marked token
            obj = obj.replace(_START, "").replace(_END, "")
            return pattern.sub(lambda m: _START + m.group(0) + _END, obj)
        if isinstance(obj, dict):
            return {k: mark(v) for k, v in obj.items()}
        if isinstance(obj, (list, tuple)):
            return [mark(v) for v in obj]
        return obj

    return mark


def _all_marker_texts(tok: Tokenizer) -> tuple[str, ...]:
    declared = tok.facts.chat.control_tokens
    return declared if declared is not None else tuple(tok.added.content_to_id)


Offsets = list[tuple[int, int]]


def _plain_text_ids(tok: Tokenizer, text: str) -> list[int]:
    """`text` with no added token matched (transformers' ``_encode_without_added_tokens``)."""
    if tok.facts.chat.content_in_text_mode:  # llama.cpp's parse_special=false
        return tok.encode(text, add_special=False, special=SpecialTokens.AS_TEXT)
    out: list[int] = []
    tok.piece_ids(tok.normalize(text), True, out)
    return out


def _plain_text_offsets(tok: Tokenizer, text: str) -> tuple[list[int], Offsets]:
    """`_plain_text_ids` through the aligned stages: the ids and their character offsets in `text`."""
    if tok.facts.chat.content_in_text_mode:
        found = tok.encode_full(text, add_special=False, special=SpecialTokens.AS_TEXT, truncation=False, padding=False)
        return list(found.ids), list(found.offsets)
    ns = NormalizedString.from_original(text, 0)
    if tok.normalizer is not None:
        tok.normalizer.normalize_aligned(ns)
    ids: list[int] = []
    offsets: Offsets = []
    if ns.text:
        for word in tok.pre_tokens_aligned(ns):
            for id_, _, a, b in tok.model_tokens(word.text):
                ids.append(id_)
                offsets.append(word.offsets(a, b) if b > a else word.position(a))
    return ids, offsets


def _parsed_offsets(tok: Tokenizer, text: str) -> tuple[list[int], Offsets]:
    found = tok.encode_full(text, add_special=False, special=SpecialTokens.PARSE, truncation=False, padding=False)
    return list(found.ids), list(found.offsets)


def _piece_ids(tok: Tokenizer, piece: str, as_text: bool, newline: list[int],
               offsets: Offsets | None) -> list[int]:
    """The ids of one piece of a marked chat; with `offsets`, their character offsets in `piece` are appended."""
    def encode(text: str) -> list[int]:
        if as_text:
            return _plain_text_ids(tok, text)
        return tok.encode(text, add_special=False, special=SpecialTokens.PARSE)

    def located(ids: list[int], text: str, shift: int) -> list[int]:
        if offsets is not None:
            full_ids, found = _plain_text_offsets(tok, text) if as_text else _parsed_offsets(tok, text)
            if full_ids[len(full_ids) - len(ids):] != ids:
                raise EncodeError(f"no offsets for {text[:40]!r}: the aligned stages give other ids")
            offsets.extend((max(a - shift, 0), max(b - shift, 0)) for a, b in found[len(found) - len(ids):])
        return ids

    # subtle: encoded after a "\n" that is then cut off, so SentencePiece adds no prefix space mid-chat
    ids = encode("\n" + piece)
    if ids[:len(newline)] == newline:
        return located(ids[len(newline):], "\n" + piece, 1)
    return located(encode(piece), piece, 0)


def encode_marked(tok: Tokenizer, rendered: str, offsets: Offsets | None = None) -> list[int]:
    """Ids of a chat rendered from marked inputs (transformers' ``encode_marked_chat``).

    With `offsets` (a list), each id's ``(start, end)`` character offsets in `rendered` (markers
    included) are appended to it, as `Tokenizer.encode_full` reports them for each piece."""
    markers = re.compile(f"{_START}({_alternation(_all_marker_texts(tok))}){_END}|[{_START}{_END}]")
    newline = tok.encode("\n", add_special=False, special=SpecialTokens.PARSE)
    first = markers.search(rendered)
    head = rendered if first is None else rendered[:first.start()]
    if offsets is None:
        ids = tok.encode(head, add_special=False, special=SpecialTokens.PARSE)
    else:
        ids, found = _parsed_offsets(tok, head)
        offsets.extend(found)
    at = len(head)
    for match in markers.finditer(rendered, at):
        _append_piece(tok, rendered[at:match.start()], at, False, newline, ids, offsets)
        if match.group(1) is not None:  # a lone marker still broke the text
            _append_piece(tok, match.group(1), match.start(1), True, newline, ids, offsets)
        at = match.end()
    _append_piece(tok, rendered[at:], at, False, newline, ids, offsets)
    return ids


def _append_piece(tok: Tokenizer, piece: str, start: int, as_text: bool, newline: list[int], ids: list[int],
                  offsets: Offsets | None) -> None:
    if not piece:
        return
    found: Offsets | None = None if offsets is None else []
    piece_ids = _piece_ids(tok, piece, as_text, newline, found)
    if as_text and tok.token_to_id(piece) in piece_ids:
        raise EncodeError(f"cannot read {piece!r} as text: this tokenizer makes that token from plain text")
    ids += piece_ids
    if offsets is not None and found is not None:
        offsets.extend((a + start, b + start) for a, b in found)
