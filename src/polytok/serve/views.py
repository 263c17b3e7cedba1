"""What the page shows, as JSON-ready data: token spans, their bytes and kinds, the aligned
differences of two encodings, and `polytok.parity.explain`'s stages.

Nothing here tokenizes on its own: spans are `Tokenizer.encode_full` (ids, pieces,
character offsets, the post-processor's ``special_tokens_mask``), the first
divergence and its reason names are `polytok.parity.compare`'s, the stages are
`polytok.parity.explain`'s. This module only adds what a person needs to see them:

- each token's bytes: `Tokenizer.token_bytes` (llama.cpp's ``llama_token_to_piece``
  for a GGUF vocabulary, the byte table of tiktoken / tekken, RWKV's token bytes,
  sentencepiece's piece, what an HF decoder chain writes for the piece: a
  byte-fallback piece ``<0xNN>`` is that byte, a byte-level piece maps back
  through the GPT-2 alphabet, ``▁`` is a space);
- its kind as bit flags (`FLAG_*`): special, byte fallback, part of a UTF-8
  character (its bytes do not decode on their own), added by the post-processor,
  the unknown token;
- the differing spans of two encodings of one text: tokens aligned on their
  character offsets (both sides tokenize the same input), so the walk is linear
  and every differing region is found, not only the first (`diff_regions`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import asdict
from typing import TYPE_CHECKING, Any

from ..encoding import Encoding
from ..errors import PolytokError
from ..parity.explain import explain

if TYPE_CHECKING:
    from ..tokenizer import Tokenizer

__all__ = ["FLAG_SPECIAL", "FLAG_BYTE", "FLAG_PARTIAL", "FLAG_ADDED", "FLAG_UNK", "token_view", "ids_view",
           "diff_regions", "explain_view", "chat_view"]

FLAG_SPECIAL = 1  # a special token (the special table, a control token, or a post-processor addition)
FLAG_BYTE = 2  # a byte-fallback piece, <0xNN>
FLAG_PARTIAL = 4  # its bytes are part of a UTF-8 character (not valid UTF-8 on their own)
FLAG_ADDED = 8  # added by the post-processor or padding: no text of the input behind it
FLAG_UNK = 16  # the unknown token: the text under it is lost

_NOT_SPECIAL = ("nl", "unk")
_BYTE_PIECE = re.compile(r"<0x([0-9A-Fa-f]{2})>\Z")

def special_set(tok: Tokenizer) -> frozenset[int]:
    """The ids the page marks as special: named special ids (not llama.cpp's newline ``nl`` nor ``unk``, an
    ordinary piece and its own flag), end-of-generation ids, special added tokens."""
    ids = {i for name, i in tok.special_ids.items() if name not in _NOT_SPECIAL} | set(tok.eog_ids)
    ids.update(i for s, i in tok.added.content_to_id.items() if tok.added.is_special_string(s))
    return frozenset(ids)


def _flags(id_: int, piece: str, data: bytes, special: frozenset[int]) -> int:
    flags = FLAG_SPECIAL if id_ in special else 0
    if len(data) == 1 and _BYTE_PIECE.match(piece):
        flags |= FLAG_BYTE
    if not flags & FLAG_SPECIAL:
        try:
            data.decode("utf-8")
        except UnicodeDecodeError:
            flags |= FLAG_PARTIAL
    return flags


def token_view(tok: Tokenizer, text: str, *, special: str | None, add_special: bool) -> dict[str, Any]:
    """The tokens of `text` for the page: ids, pieces, offsets, bytes (hex), flags, count.

    The ids are ``tok.encode_full(...).ids``, which equal ``tok.encode(...)`` (the same stages).
    """
    enc: Encoding = tok.encode_full(text, add_special=add_special, special=special)
    return ids_view(tok, list(enc.ids), [list(o) for o in enc.offsets], list(enc.special_tokens_mask))


def ids_view(tok: Tokenizer, ids: list[int], offsets: list[list[int]], added: Sequence[int]) -> dict[str, Any]:
    """The page's view of `ids` with their character `offsets`; `added` is 1 for an id the post-processor added."""
    specials = special_set(tok)
    unk = tok.special_ids.get("unk", getattr(tok.model, "unk_id", None))
    seen: dict[int, tuple[str, str, int]] = {}  # one lookup per distinct id: a text repeats its tokens
    pieces, hexes, flags = [], [], []
    for id_, mask in zip(ids, added):
        known = seen.get(id_)
        if known is None:
            shown = tok.id_to_token(id_) or ""
            data = _token_bytes(tok, id_, shown)
            flag = _flags(id_, shown, data, specials) | (FLAG_UNK if id_ == unk else 0)
            known = seen[id_] = (shown, data.hex(), flag)
        pieces.append(known[0])
        hexes.append(known[1])
        flags.append(known[2] | (FLAG_SPECIAL | FLAG_ADDED if mask else 0))
    return {"ids": ids, "pieces": pieces, "offsets": offsets, "bytes": hexes, "flags": flags, "count": len(ids)}


def _token_bytes(tok: Tokenizer, id_: int, piece: str) -> bytes:
    try:
        return tok.token_bytes(id_)
    except PolytokError:  # an id no token has (a pad id past the vocabulary)
        return piece.encode("utf-8", "surrogatepass")


def diff_regions(keys_a: Sequence[Any], offsets_a: Sequence[Sequence[int]], keys_b: Sequence[Any],
                 offsets_b: Sequence[Sequence[int]], cap: int = 5000) -> list[tuple[int, int, int, int]]:
    """The regions where two encodings of one text differ, as ``(a_start, a_end, b_start, b_end)`` token ranges.

    Two tokens agree when their keys (ids, or bytes) and character offsets are equal.
    From a disagreement, each side takes a token, then the side whose covered text
    ends first takes more until both end at the same character; tokens that overlap
    that end (the other pieces of a character split in bytes) join the region. A
    token with no width (BOS, EOS) that the other side lacks is a region of its own.
    """
    out: list[tuple[int, int, int, int]] = []
    i = j = 0
    na, nb = len(keys_a), len(keys_b)
    while (i < na or j < nb) and len(out) < cap:
        if i < na and j < nb and keys_a[i] == keys_b[j] and list(offsets_a[i]) == list(offsets_b[j]):
            i, j = i + 1, j + 1
            continue
        zero_a = i < na and offsets_a[i][0] == offsets_a[i][1]
        zero_b = j < nb and offsets_b[j][0] == offsets_b[j][1]
        if zero_a or zero_b:
            k, m = i + int(zero_a), j + int(zero_b)
        else:
            k, m = _resync(offsets_a, offsets_b, i, j)
        out.append((i, k, j, m))
        i, j = k, m
    return out


def _resync(oa: Sequence[Sequence[int]], ob: Sequence[Sequence[int]], i: int, j: int) -> tuple[int, int]:
    na, nb = len(oa), len(ob)
    reach_a = reach_b = -1
    if i < na:
        reach_a, i = oa[i][1], i + 1
    if j < nb:
        reach_b, j = ob[j][1], j + 1
    while reach_a != reach_b:
        if reach_a < reach_b:
            if i >= na:
                return i, nb  # A has ended: the rest of B has nothing to meet
            reach_a, i = max(reach_a, oa[i][1]), i + 1
        else:
            if j >= nb:
                return na, j
            reach_b, j = max(reach_b, ob[j][1]), j + 1
    # subtle: the other byte pieces of a character cut at `reach` carry the same offsets
    while i < na and oa[i][0] < oa[i][1] <= reach_a:
        i += 1
    while j < nb and ob[j][0] < ob[j][1] <= reach_b:
        j += 1
    return i, j


def explain_view(tok: Tokenizer, text: str, *, special: str | None, add_special: bool) -> dict[str, Any]:
    """`polytok.parity.explain` of `text` as a JSON-ready dict (the same fields as ``polytok explain --json``),
    with ``added_before_pieces`` / ``added_after_pieces``: the pieces of what the post-processor added."""
    out = asdict(explain(tok, text, special=special, add_special=add_special))
    for key in ("added_before", "added_after"):
        out[f"{key}_pieces"] = [tok.id_to_token(i) or f"<id {i}>" for i in out[key]]
    return out


def chat_view(tok: Tokenizer, messages: list[dict[str, str]], *, add_generation_prompt: bool,
              content_special: str) -> dict[str, Any]:
    """A conversation through the model's chat template: the rendered text, its tokens (as `token_view`)
    and ``role_masks`` (`Tokenizer.apply_chat_template`'s ``return_role_masks``).

    The ids are ``apply_chat_template(tokenize=True)``'s; the offsets are those of ``encode_full`` on the
    rendered text when it gives the same ids (content markers read as text are tokenized apart from the
    template's, so it may not), else where each token's bytes lie when the tokens' bytes, joined, are the
    rendered text's UTF-8; else none (``offsets`` all ``[0, 0]``, ``aligned`` false).
    """
    rendered = tok.apply_chat_template(messages, add_generation_prompt=add_generation_prompt)
    enc = tok.apply_chat_template(messages, add_generation_prompt=add_generation_prompt, tokenize=True,
                                  return_dict=True, return_role_masks=True, content_special=content_special,
                                  state_tokens=0)
    ids = list(enc["input_ids"])
    full = tok.encode_full(rendered, add_special=False, special="parse")
    offsets: list[list[int]] | None = [list(o) for o in full.offsets] if list(full.ids) == ids else \
        _byte_offsets(tok, ids, rendered)
    aligned = offsets is not None
    view = ids_view(tok, ids, offsets or [[0, 0] for _ in ids], [0] * len(ids))
    view.update(text=rendered, role_masks=dict(enc["role_masks"]), aligned=aligned)
    return view


def _byte_offsets(tok: Tokenizer, ids: list[int], text: str) -> list[list[int]] | None:
    """Each token's characters from where its bytes lie in `text`'s UTF-8 (a character cut between
    tokens is in each), or None when the tokens' bytes, joined, are not that UTF-8."""
    datas = [_token_bytes(tok, i, tok.id_to_token(i) or "") for i in ids]
    if b"".join(datas) != text.encode("utf-8", "surrogatepass"):
        return None
    char_at: list[int] = []  # byte position -> the character it belongs to
    for k, ch in enumerate(text):
        char_at.extend([k] * len(ch.encode("utf-8", "surrogatepass")))
    char_at.append(len(text))
    out, pos = [], 0
    for data in datas:
        end = pos + len(data)
        out.append([char_at[pos], char_at[end - 1] + 1 if data else char_at[pos]])
        pos = end
    return out
