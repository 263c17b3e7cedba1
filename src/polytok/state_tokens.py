"""Per-turn state tokens: ``k`` ids past the vocabulary after every exchange.

No reference engine has this stage; it is paperkiln's convention (GGUF key
``paperkiln.state_tokens.k``), and polytok inserts the ids itself — they are not
vocabulary entries, so no tokenizer ever produces them.  A conversation's ids

    <user> U <assistant> A <eot> S_0 … S_{k-1} <user> …      S_j = vocab_size + j

follow three rules, on ids only (no template needed):

1. An exchange opens at ``<user>`` and has a reply once ``<assistant>`` follows
   it; the first ``<eot>`` after that closes it, and the k state ids follow that
   ``<eot>``.  An ``<assistant>`` with no open ``<user>`` starts nothing, and an
   ``<eot>`` that closes nothing is left alone.
2. A reply that stopped early — a ``<user>`` comes after a reply with no
   ``<eot>`` between them — gets ``<eot>`` and the k state ids before that
   ``<user>``.  A reply still open at the end of the input is left open (it is
   being generated).
3. Ids ≥ vocab_size from the caller are accepted only as one complete, ordered
   block ``S_0 … S_{k-1}`` directly after an ``<eot>`` that closes an exchange,
   and kept as given.  The block is the whole run of ids ≥ vocab_size after that
   ``<eot>``: a shorter, longer or reordered run is an error at the ``<eot>``'s
   position.  Any other id ≥ vocab_size (all of them when k = 0), and any
   negative id, is an error at its own position.

With k = 0 nothing is inserted (not even rule 2's ``<eot>``); the ids are only
checked.
"""

from __future__ import annotations

from collections.abc import Sequence

from .errors import StateTokenError

__all__ = ["insert_state_tokens"]


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
    """Length of the run of state ids after the closing ``<eot>`` at `eot_at` (0 or k), checked."""
    end = eot_at + 1
    while end < len(ids) and ids[end] >= vocab_size:
        end += 1
    run = list(ids[eot_at + 1:end])
    if run and run != list(range(vocab_size, vocab_size + k)):
        expected = " ".join(str(vocab_size + j) for j in range(k))
        raise StateTokenError(
            f"the state ids after this <eot> (id {ids[eot_at]}) must be the complete block {expected} (k={k}) "
            f"or absent, not {' '.join(map(str, run))}", position=eot_at)
    return len(run)


def _stray(id_: int, at: int, vocab_size: int, k: int) -> StateTokenError:
    if id_ < 0:
        return StateTokenError(f"negative id {id_}", position=at)
    if k == 0:
        return StateTokenError(f"id {id_} is not below vocab_size {vocab_size} and there are no state tokens (k=0)",
                               position=at)
    return StateTokenError(
        f"state id {id_} (>= vocab_size {vocab_size}) is only accepted in the block directly after an <eot> "
        "that closes an exchange", position=at)


def insert_state_tokens(ids: Sequence[int], *, vocab_size: int, k: int, eot: int, user: int,
                        assistant: int) -> list[int]:
    """The ids of a conversation with the per-turn state ids in place.

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
        StateTokenError: a negative id, an id ≥ vocab_size outside a complete
            ordered block after a closing ``<eot>``, or a bad block; ``.position``
            is the index in `ids` (for a bad block, the index of its ``<eot>``).
    """
    _check_arguments(vocab_size, k, eot, user, assistant)
    block = list(range(vocab_size, vocab_size + k))
    out: list[int] = []
    open_user = replied = False
    at, n = 0, len(ids)
    while at < n:
        id_ = ids[at]
        if id_ < 0 or id_ >= vocab_size:
            raise _stray(id_, at, vocab_size, k)
        if id_ == user:
            if replied and k:  # rule 2: the previous reply stopped early
                out.append(eot)
                out.extend(block)
            open_user, replied = True, False
        elif id_ == assistant:
            replied = open_user
        elif id_ == eot and replied:  # rule 1: this <eot> closes the exchange
            open_user = replied = False
            if k:
                out.append(id_)
                out.extend(block)
                at += 1 + _given_block(ids, at, vocab_size, k)
                continue
        out.append(id_)
        at += 1
    return out
