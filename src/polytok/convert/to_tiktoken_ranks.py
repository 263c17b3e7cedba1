"""Whether a merge list can be written as tiktoken ranks, and the ranks when it can.

A byte-level BPE of ``tokenizer.json`` (HF tokenizers 0.23.3, tokenizers/src/models/bpe/word.rs,
``Word::merge_all``) or of a GGUF (llama.cpp, llama-vocab.cpp ``llm_tokenizer_bpe_session::tokenize``)
merges, in a word, the adjacent pair that comes first in its merge list, leftmost among equals.
tiktoken 0.14 (src/lib.rs ``byte_pair_merge``) merges the adjacent pair whose concatenation has
the lowest rank, leftmost among equals, and gives a piece that is itself a rank as that one token.
With ranks equal to the source's ids, the two agree on every text when (checked in this order):

1. every merge's two parts and its result are tokens of the ranks (a merge naming anything else,
   or making a special token, is refused);
2. the merges that can fire -- both parts single bytes or made by merges that can fire (a fixed
   point; a merge that never fires changes nothing in either engine) -- come in the order of their
   results' ids: tiktoken applies a merge at its result's rank, so a merge listed after one with a
   higher result id would run first there. Several merges to one result (duplicate results) must
   stand together, which this implies;
3. for every token, the pair tiktoken makes it from -- the last merge of its own bytes merged by
   ``byte_pair_merge`` -- is a merge of the source that can fire. Within the bytes of a token the
   merges are those of the bytes alone (a neighbour can only take a byte away, and then the token
   is not made), so each engine makes a token from one pair only, wherever it stands: other merges
   to the same result never fire, and a pair whose part outranks the result (`` `` + ``the``,
   made only if ``the`` stands after a lone space, which GPT-2's merges never leave) counts only
   if it is that pair;
4. a token its own bytes do not merge into (made by no merge: unreachable) is given only for a
   piece of exactly its bytes: tiktoken does that always, the source only with ``ignore_merges``
   (HF ``BPE.ignore_merges``, llama.cpp's per-pre-type flag).

Given 1-3, in any word both engines see the same mergeable pairs at every step (by induction, a
pair that stands is the pair its result is made from) and order them alike (2), so they merge
alike. Each rule refuses with the first offending merge or token.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

__all__ = ["rank_refusals", "tiktoken_parts", "source_parts"]

_SHOWN = 60  # characters of a token shown in a reason


def rank_refusals(ranks: dict[bytes, int], merges: Sequence[tuple[bytes, bytes]], *,
                  ignore_merges: bool, specials: dict[bytes, int] | None = None,
                  lines: Sequence[int] | None = None) -> list[str]:
    """The reasons `merges` (in priority order) cannot be written as `ranks` (a token's rank is its id).

    Args:
        ranks: ``{token_bytes: id}`` of every token tiktoken may merge into (the special tokens left out).
        merges: the source's merge list, first merged first, as token bytes.
        ignore_merges: the source gives a piece that is a token as that token without merging.
        specials: ``{token_bytes: id}`` of the special tokens the source's vocabulary also holds.
        lines: each merge's index in the source file, for the reasons (default: its place in `merges`).

    Returns:
        One reason per rule that fails, naming the first merge or token that breaks it; empty if the
        ranks give the source's ids on every text.
    """
    numbered = _Numbered(merges, lines)
    reasons = _unknown_parts(ranks, numbered, specials or {})
    if reasons:
        return reasons
    live = _live_merges(merges)
    order = _order_reason(ranks, numbered, live)
    if order:
        reasons.append(order)
    reasons += _split_reasons(ranks, {merges[k] for k in live}, ignore_merges)
    return reasons


def _show(data: bytes) -> str:
    return repr(data.decode("utf-8", "backslashreplace")[:_SHOWN])


class _Numbered:
    """The merges with the names the reasons give them."""

    def __init__(self, merges: Sequence[tuple[bytes, bytes]], lines: Sequence[int] | None) -> None:
        self.merges = merges
        self.lines = lines

    def name(self, k: int) -> str:
        a, b = self.merges[k]
        return f"merge #{k if self.lines is None else self.lines[k]} {_show(a)} + {_show(b)}"


def _unknown_parts(ranks: dict[bytes, int], numbered: _Numbered, specials: dict[bytes, int]) -> list[str]:
    for k, (a, b) in enumerate(numbered.merges):
        for part in (a, b, a + b):
            if part in ranks:
                continue
            if part in specials:
                return [f"{numbered.name(k)} involves {_show(part)}, whose id {specials[part]} is a special "
                        "token's: tiktoken never merges into or out of a special token"]
            return [f"{numbered.name(k)}: {_show(part)} is not a token of the vocabulary"]
    missing = [b for b in range(256) if bytes([b]) not in ranks]
    if missing:
        return [f"no token for the single byte {bytes(missing[:1])!r} ({len(missing)} of the 256 missing): "
                "tiktoken needs one for every byte"]
    return []


def _live_merges(merges: Sequence[tuple[bytes, bytes]]) -> list[int]:
    """The indexes of the merges that can fire: both parts are bytes or results of merges that can."""
    waiting: dict[bytes, list[int]] = defaultdict(list)
    made: set[bytes] = set()
    ready: list[int] = []
    missing = [0] * len(merges)
    for k, (a, b) in enumerate(merges):
        for part in {a, b}:
            if len(part) > 1:
                waiting[part].append(k)
                missing[k] += 1
        if not missing[k]:
            ready.append(k)
    live = []
    while ready:
        k = ready.pop()
        live.append(k)
        result = merges[k][0] + merges[k][1]
        if result in made:
            continue
        made.add(result)
        for j in waiting.pop(result, ()):
            missing[j] -= 1
            if not missing[j]:
                ready.append(j)
    return sorted(live)


def _order_reason(ranks: dict[bytes, int], numbered: _Numbered, live: list[int]) -> str | None:
    previous = -1
    before = 0
    for k in live:
        a, b = numbered.merges[k]
        made = ranks[a + b]
        if made < previous:
            return (f"{numbered.name(k)} makes id {made} but comes after {numbered.name(before)}, which "
                    f"makes id {previous}: tiktoken applies merges in the order of their results' ids")
        previous, before = made, k
    return None


def _split_reasons(ranks: dict[bytes, int], live: set[tuple[bytes, bytes]], ignore_merges: bool) -> list[str]:
    limit = max(ranks.values(), default=0) + 1
    for token, rank in sorted(ranks.items(), key=lambda item: item[1]):
        if len(token) < 2:
            continue
        parts, last = _tiktoken_merge(token, ranks, limit)
        if parts == [token]:
            if last not in live:
                return [f"token {_show(token)} (id {rank}): tiktoken makes it from {_show(last[0])} + "
                        f"{_show(last[1])}, which the source never merges"]
        elif not ignore_merges:
            return [f"token {_show(token)} (id {rank}) is made by no merge from its own bytes: tiktoken gives "
                    "it for a piece of exactly those bytes, the source (ignore_merges false) does not"]
    return []


def _tiktoken_merge(data: bytes, ranks: dict[bytes, int], limit: int) -> tuple[list[bytes], tuple[bytes, bytes]]:
    """`tiktoken_parts` of `data`, and the last pair merged (`limit`: above every rank)."""
    parts = [data[i:i + 1] for i in range(len(data))]
    get = ranks.get
    # pair_ranks[i]: the rank of parts[i] + parts[i + 1]; only the merged pair's neighbours change
    pair_ranks = [get(data[i:i + 2], limit) for i in range(len(data) - 1)]
    last = (b"", b"")
    while pair_ranks:
        best = min(pair_ranks)
        if best >= limit:
            break
        at = pair_ranks.index(best)  # the leftmost of equals, as byte_pair_merge
        last = (parts[at], parts[at + 1])
        parts[at:at + 2] = [parts[at] + parts[at + 1]]
        del pair_ranks[at]
        if at > 0:
            pair_ranks[at - 1] = get(parts[at - 1] + parts[at], limit)
        if at < len(pair_ranks):
            pair_ranks[at] = get(parts[at] + parts[at + 1], limit)
    return parts, last


def tiktoken_parts(data: bytes, ranks: dict[bytes, int]) -> list[bytes]:
    """`data` merged as tiktoken's ``byte_pair_merge`` merges a piece (without its whole-piece lookup)."""
    return _tiktoken_merge(data, ranks, max(ranks.values(), default=0) + 1)[0]


def source_parts(data: bytes, priority: dict[tuple[bytes, bytes], int]) -> list[bytes]:
    """`data` merged as the source's BPE merges a word: the listed pair first, leftmost among equals."""
    limit = max(priority.values(), default=0) + 1
    parts = [data[i:i + 1] for i in range(len(data))]
    while len(parts) > 1:
        best, at = limit, -1
        for i in range(len(parts) - 1):
            k = priority.get((parts[i], parts[i + 1]), best)
            if k < best:
                best, at = k, i
        if at < 0:
            break
        parts[at:at + 2] = [parts[at] + parts[at + 1]]
    return parts
