"""Per-turn state tokens: ``k`` ids past the vocabulary after every exchange.

No reference engine has this stage; it is paperkiln's convention (GGUF key
``paperkiln.state_tokens.k``), and polytok inserts the ids itself — they are not
vocabulary entries, so no tokenizer ever produces them.  A conversation's ids

    <user> U <assistant> A <eot> S_0 … S_{k-1} <user> …      S_j = vocab_size + j

are read left to right, on ids only (no template needed), in one of three phases:
*idle* (the start), *user* (a ``<user>`` turn is open, no reply yet) and *reply*
(an ``<assistant>`` turn answers that ``<user>``).

1. ``<user>`` opens a user turn from any phase.  From *reply* it first closes the
   reply that stopped early: ``<eot>`` and the k state ids go in before it.  From
   *idle* or *user* nothing is added (a user turn with no reply gets no block).
2. ``<assistant>`` in *user* opens the reply; in *idle* it starts nothing (stays
   *idle*); in *reply* it changes nothing.
3. ``<eot>`` always ends the exchange: every phase goes to *idle*.  From *reply*
   it closes the exchange and the k state ids follow it.  From *user* or *idle*
   it closes nothing, so a later ``<assistant>`` starts nothing until the next
   ``<user>`` (``<user> <eot> <assistant> A <eot>`` gets no block).
4. Other ids below vocab_size change nothing.  The end of the input adds
   nothing: a reply still open there is left open (it is being generated).
5. A block may be given: when the id right after a closing ``<eot>`` is
   ≥ vocab_size, the k ids after that ``<eot>`` are the given block, checked id
   by id against ``S_0 … S_{k-1}`` and kept as they are (never doubled).  A
   mismatch there — a wrong or reordered state id, a negative id or an id below
   vocab_size (a short block), or the end of the input — is an error at the
   ``<eot>``'s position.  Once the k ids match, reading goes on as usual.
6. Every other id ≥ vocab_size is a stray id, an error at its own position:
   one after a complete block (an over-long run), one after an ``<eot>`` that
   closes nothing, one anywhere else, and all of them when k = 0.  A negative id
   is an error at its own position unless rule 5 reads it inside a given block.

The first problem met left to right is the one reported.  With k = 0 nothing is
inserted (not even rule 1's ``<eot>``): the output equals the input, which is only
checked.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import Enum

from ..errors import StateTokenError

__all__ = ["insert_state_tokens"]


class _Phase(Enum):
    IDLE = "idle"
    USER = "user"
    REPLY = "reply"


def _check_arguments(vocab_size: int, k: int, eot: int, user: int, assistant: int) -> None:
    if vocab_size <= 0:
        raise StateTokenError(f"vocab_size must be positive, not {vocab_size}")
    if k < 0:
        raise StateTokenError(f"k must be >= 0, not {k}")
    for name, value in (("eot", eot), ("user", user), ("assistant", assistant)):
        if not 0 <= value < vocab_size:
            raise StateTokenError(f"{name} id {value} is not in the vocabulary [0, {vocab_size})")
    if len({eot, user, assistant}) != 3:
        raise StateTokenError(f"eot, user and assistant must be three different ids, not {eot}, {user}, {assistant}")


def _given_block(ids: Sequence[int], eot_at: int, vocab_size: int, k: int) -> int:
    """How many ids after the closing ``<eot>`` at `eot_at` are a given block: 0, or k once checked."""
    first = eot_at + 1
    if first >= len(ids) or ids[first] < vocab_size:
        return 0
    for j in range(k):
        at = first + j
        if at < len(ids) and ids[at] == vocab_size + j:
            continue
        found = f"position {at} holds {ids[at]}" if at < len(ids) else f"the input ends at position {at}"
        expected = " ".join(str(vocab_size + i) for i in range(k))
        raise StateTokenError(
            f"the state ids after this <eot> (id {ids[eot_at]}) must be the complete block {expected} (k={k}) "
            f"or absent, but {found} where {vocab_size + j} belongs", position=eot_at)
    return k


def _stray(ids: Sequence[int], at: int, vocab_size: int, k: int) -> StateTokenError:
    id_ = ids[at]
    if id_ < 0:
        return StateTokenError(f"negative id {id_}", position=at)
    if k == 0:
        return StateTokenError(f"id {id_} is not below vocab_size {vocab_size} and there are no state tokens (k=0)",
                               position=at)
    where = " (the block before it is already complete)" if at and ids[at - 1] == vocab_size + k - 1 else ""
    return StateTokenError(
        f"state id {id_} (>= vocab_size {vocab_size}) is only accepted in the block directly after an <eot> "
        f"that closes an exchange{where}", position=at)


def insert_state_tokens(ids: Sequence[int], *, vocab_size: int, k: int, eot: int, user: int,
                        assistant: int) -> list[int]:
    """The ids of a conversation with the per-turn state ids in place (the rules: this module's docstring).

    Args:
        ids: the conversation's ids; may already hold complete state blocks.
        vocab_size: the first state id; ``S_j = vocab_size + j``.
        k: the number of state ids per exchange (GGUF ``paperkiln.state_tokens.k``).
        eot: the id that ends a turn.
        user: the id that opens a user turn.
        assistant: the id that opens an assistant turn.

    Returns:
        A new list: `ids` with ``<eot>`` (for replies that stopped early) and the
        k state ids after every ``<eot>`` that closes an exchange; blocks given in
        `ids` are kept, never doubled.

    Raises:
        StateTokenError: a bad argument; a bad given block (``.position`` is its
            ``<eot>``'s index in `ids`); a negative id or an id ≥ vocab_size
            anywhere else (``.position`` is its own index).
    """
    _check_arguments(vocab_size, k, eot, user, assistant)
    block = list(range(vocab_size, vocab_size + k))
    out: list[int] = []
    phase = _Phase.IDLE
    at, n = 0, len(ids)
    while at < n:
        id_ = ids[at]
        if id_ < 0 or id_ >= vocab_size:
            raise _stray(ids, at, vocab_size, k)
        if id_ == user:
            if phase is _Phase.REPLY and k:  # the reply stopped early
                out.append(eot)
                out.extend(block)
            phase = _Phase.USER
        elif id_ == assistant:
            if phase is _Phase.USER:
                phase = _Phase.REPLY
        elif id_ == eot:
            # subtle: an <eot> ends a user turn too, even though it closes nothing
            closes, phase = phase is _Phase.REPLY, _Phase.IDLE
            if closes and k:
                out.append(id_)
                out.extend(block)
                at += 1 + _given_block(ids, at, vocab_size, k)
                continue
        out.append(id_)
        at += 1
    return out
