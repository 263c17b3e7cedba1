"""Per-turn state tokens (polytok.insert_state_tokens): one test per rule, and hypothesis properties.

No engine has this stage, so the expected ids are written out by hand from the rules
(tests of single rules) or computed by an oracle in this file, written from the rules
on its own: a table of phase transitions that reads a given block one id at a time.
"""

from __future__ import annotations

import os

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import polytok
from polytok import StateTokenError, insert_state_tokens

V, K = 100, 3
EOT, USER, ASSISTANT = 1, 2, 3
S = list(range(V, V + K))
T1, T2 = 50, 51  # ordinary text ids
OPTS = dict(vocab_size=V, k=K, eot=EOT, user=USER, assistant=ASSISTANT)
EXAMPLES = int(os.environ.get("POLYTOK_MAX_EXAMPLES", "300"))


def run(ids, **kw):
    return insert_state_tokens(ids, **{**OPTS, **kw})


def position_of_error(ids, **kw):
    with pytest.raises(StateTokenError) as err:
        run(ids, **kw)
    return err.value.position


# -- module rules 2 and 3: <assistant> opens a reply to an open <user>; an <eot> ends any turn ---


def test_block_after_the_eot_that_closes_an_exchange():
    assert run([USER, T1, ASSISTANT, T2, EOT]) == [USER, T1, ASSISTANT, T2, EOT, *S]
    two = [USER, T1, ASSISTANT, T2, EOT, USER, T2, ASSISTANT, T1, EOT]
    assert run(two) == [USER, T1, ASSISTANT, T2, EOT, *S, USER, T2, ASSISTANT, T1, EOT, *S]


def test_an_assistant_without_an_open_user_starts_nothing():
    assert run([ASSISTANT, T1, EOT]) == [ASSISTANT, T1, EOT]
    # after the exchange closed, a second assistant turn does not reopen it
    closed = [USER, T1, ASSISTANT, T2, EOT]
    assert run(closed + [ASSISTANT, T1, EOT]) == closed + S + [ASSISTANT, T1, EOT]
    # a second <assistant> inside a reply changes nothing: one exchange, one block
    assert run([USER, T1, ASSISTANT, T2, ASSISTANT, T1, EOT]) == [USER, T1, ASSISTANT, T2, ASSISTANT, T1, EOT, *S]


@pytest.mark.parametrize("ids", [
    [USER, EOT, ASSISTANT, T1, EOT],
    [USER, T1, EOT, ASSISTANT, T2, EOT],
    [USER, T1, EOT, ASSISTANT, T2, USER, T1],       # the reply that was never opened is not cut short
    [USER, T1, ASSISTANT, T2, EOT, *S, USER, EOT, ASSISTANT, T1, EOT],
])  # fmt: skip
def test_an_eot_in_an_open_user_turn_closes_nothing_and_ends_that_turn(ids):
    # a later <assistant> answers no <user>: nothing after it is an exchange
    assert run(ids) == ids


def test_after_an_eot_that_ended_a_user_turn_the_next_user_opens_an_exchange_again():
    ids = [USER, EOT, ASSISTANT, T1, EOT, USER, T2, ASSISTANT, T1, EOT]
    assert run(ids) == ids + S
    # a block given after the <eot> that ended the user turn is a stray state id at its own position
    assert position_of_error([USER, EOT, ASSISTANT, T1, EOT, *S]) == 5
    assert position_of_error([USER, T1, EOT, *S]) == 3


# -- module rules 1 and 4: a reply cut short by <user> gets <eot> and the block; the end adds none


def test_a_reply_cut_short_gets_eot_and_block_before_the_next_user():
    assert run([USER, T1, ASSISTANT, T2, USER, T1]) == [USER, T1, ASSISTANT, T2, EOT, *S, USER, T1]
    assert run([USER, T1, ASSISTANT, USER]) == [USER, T1, ASSISTANT, EOT, *S, USER]


def test_an_open_reply_at_the_end_stays_open_and_users_without_reply_get_nothing():
    assert run([USER, T1, ASSISTANT, T2]) == [USER, T1, ASSISTANT, T2]
    assert run([USER, T1, USER, T2, ASSISTANT]) == [USER, T1, USER, T2, ASSISTANT]


# -- module rules 5 and 6: given blocks, checked id by id; stray and negative ids ---------------


def test_a_given_block_is_kept_not_doubled():
    done = [USER, T1, ASSISTANT, T2, EOT, *S, USER, T1, ASSISTANT, T2, EOT, *S]
    assert run(done) == done
    # one exchange with its block, the next without: the block is added only where it is missing
    assert run(done[:8 + K] + [EOT]) == done[:8 + K] + [EOT, *S]


@pytest.mark.parametrize("block", [S[:-1], S[1:], S[::-1], [V] * K, [V, V + 2, V + 1], [V, -1, V + 2], [V, T1, T2]],
                         ids=["short", "no_first", "reversed", "repeated", "wrong_inside", "negative_inside",
                              "text_inside"])
def test_a_bad_block_is_an_error_at_its_eot(block):
    ids = [USER, T1, ASSISTANT, T2, EOT, *block, USER]
    assert position_of_error(ids) == 4
    with pytest.raises(StateTokenError, match=r"position 4: .*complete block 100 101 102"):
        run(ids)


def test_a_block_cut_off_by_the_end_of_the_input_is_an_error_at_its_eot():
    assert position_of_error([USER, T1, ASSISTANT, T2, EOT, V, V + 1]) == 4
    assert position_of_error([USER, T1, ASSISTANT, T2, EOT, V], k=2) == 4
    assert run([USER, T1, ASSISTANT, T2, EOT, V], k=1) == [USER, T1, ASSISTANT, T2, EOT, V]  # complete


@pytest.mark.parametrize(("extra", "where"), [([V], 8), ([V + K], 8), ([V + 1, V + 2], 8), ([T1, V], 9)])
def test_an_id_past_a_complete_block_is_a_stray_at_its_own_position(extra, where):
    ids = [USER, T1, ASSISTANT, T2, EOT, *S, *extra, USER]
    assert position_of_error(ids) == where
    with pytest.raises(StateTokenError, match=rf"position {where}: state id {ids[where]} .*only accepted"):
        run(ids)


@pytest.mark.parametrize(("ids", "where"), [
    ([USER, V, ASSISTANT, T2, EOT], 1),                  # inside a user turn
    ([USER, T1, EOT, V, V + 1, V + 2], 3),               # after an <eot> that closes nothing
    ([V, V + 1, V + 2], 0),                              # at the start
    ([ASSISTANT, T1, EOT, *S], 3),                       # after an <eot> with no open <user>
    ([USER, T1, ASSISTANT, T2, EOT, T1, V], 6),          # not directly after the <eot>
    ([USER, T1, ASSISTANT, -1, EOT], 3),                 # a negative id
    ([USER, T1, ASSISTANT, T2, EOT, -5], 5),             # a negative id where a block may go
])  # fmt: skip
def test_a_state_id_elsewhere_or_a_negative_id_is_an_error_at_its_position(ids, where):
    assert position_of_error(ids) == where


def test_with_k_zero_nothing_is_inserted_and_every_id_past_the_vocabulary_is_an_error():
    ids = [USER, T1, ASSISTANT, T2, USER, T1, ASSISTANT, EOT]
    assert run(ids, k=0) == ids
    assert position_of_error([USER, T1, ASSISTANT, T2, EOT, V], k=0) == 5


def test_the_error_is_a_polytok_error_and_a_value_error_and_names_the_arguments():
    err = pytest.raises(StateTokenError, run, [V])
    assert isinstance(err.value, polytok.PolytokError) and isinstance(err.value, ValueError)
    with pytest.raises(StateTokenError, match="eot id 100 is not in the vocabulary"):
        run([], eot=V)
    with pytest.raises(StateTokenError, match="three different ids"):
        run([], user=EOT)
    with pytest.raises(StateTokenError, match="k must be >= 0"):
        run([], k=-1)


# -- properties -------------------------------------------------------------------------------


class Bad(Exception):
    """The oracle's verdict for ids that break the rules: the position the error must name."""

    def __init__(self, position):
        super().__init__(position)
        self.position = position


# The phase after each marker, from each phase ("reply": an <assistant> that answers an open <user>).
NEXT = {
    "idle": {USER: "user", ASSISTANT: "idle", EOT: "idle"},
    "user": {USER: "user", ASSISTANT: "reply", EOT: "idle"},
    "reply": {USER: "user", ASSISTANT: "reply", EOT: "idle"},
}


def oracle(ids, k=K):
    """The rules as a phase table; a given block is read one id at a time as the ids still expected."""
    block = [V + j for j in range(k)]
    out, phase = [], "idle"
    given = None  # while reading a given block: (index of its <eot>, the state ids still expected)
    for i, t in enumerate(ids):
        if given is not None:
            eot_at, expected = given
            if t != expected[0]:
                raise Bad(eot_at)
            out.append(t)
            given = (eot_at, expected[1:]) if len(expected) > 1 else None
            continue
        if t < 0 or t >= V:
            raise Bad(i)
        if k and phase == "reply" and t == USER:  # a reply cut short
            out += [EOT, *block]
        out.append(t)
        if k and phase == "reply" and t == EOT:  # the exchange closes here
            if i + 1 < len(ids) and ids[i + 1] >= V:
                given = (i, block)
            else:
                out += block
        phase = NEXT[phase].get(t, phase)
    if given is not None:
        raise Bad(given[0])
    return out


def outcome(f, ids, k):
    """What `f` makes of `ids`: the output, or ("error", position)."""
    try:
        return f(ids, k=k)
    except (Bad, StateTokenError) as err:
        return ("error", err.position)


alphabet = st.sampled_from([USER, ASSISTANT, EOT, T1, T2])
conversations = st.lists(alphabet, max_size=40)
ks = st.integers(0, 3)


@st.composite
def ids_with_blocks(draw):
    """Conversations with given blocks, and up to two bad pieces among them: short, long, reordered
    or misplaced blocks, stray and negative ids."""
    k = draw(ks)
    block = list(range(V, V + k))
    good = [[USER], [ASSISTANT], [EOT], [T1], [T2], [USER, T1, ASSISTANT, T2], [EOT, *block],
            [USER, T1, ASSISTANT, T2, EOT, *block]]
    bad = [[V], [V + 1], [V + k], [-1], block[:-1], block[1:], block[::-1], block + [V], [V, T1], [V, -1]]
    chunks = draw(st.lists(st.sampled_from(good), max_size=20))
    for _ in range(draw(st.integers(0, 2))):
        piece = draw(st.sampled_from(bad))
        where = draw(st.sampled_from([[], [EOT], [USER, T1, ASSISTANT, T2, EOT]]))
        chunks.insert(draw(st.integers(0, len(chunks))), where + piece)
    return [t for chunk in chunks for t in chunk], k


@settings(max_examples=EXAMPLES, deadline=None)
@given(conversations, ks)
def test_output_equals_the_oracle_and_is_a_fixed_point(ids, k):
    out = run(ids, k=k)
    assert out == oracle(ids, k=k)
    assert run(out, k=k) == out  # valid input round-trips: complete blocks are kept as given
    if k == 0:
        assert out == ids


@settings(max_examples=EXAMPLES, deadline=None)
@given(ids_with_blocks())
def test_output_or_error_position_equals_the_oracle_with_given_blocks_and_stray_ids(case):
    ids, k = case
    assert outcome(run, ids, k) == outcome(oracle, ids, k)


def test_the_oracle_reads_the_rules_as_the_examples_do():
    assert oracle([USER, EOT, ASSISTANT, T1, EOT]) == [USER, EOT, ASSISTANT, T1, EOT]
    assert outcome(oracle, [USER, T1, ASSISTANT, T2, EOT, *S, V], K) == ("error", 8)
    assert outcome(oracle, [USER, T1, ASSISTANT, T2, EOT, V, V + 2], K) == ("error", 4)
    assert oracle([USER, T1, ASSISTANT, T2, USER], k=0) == [USER, T1, ASSISTANT, T2, USER]


@settings(max_examples=EXAMPLES, deadline=None)
@given(conversations, st.data())
def test_blocks_given_for_some_exchanges_and_not_others_round_trip(ids, data):
    full = run(ids)
    # drop some of the blocks polytok wrote: the rest stay as given, the dropped ones come back
    starts = [i for i in range(len(full)) if full[i] == V]
    drop = data.draw(st.sets(st.sampled_from(starts))) if starts else set()
    partial = [t for i, t in enumerate(full) if not any(0 <= i - s < K for s in drop)]
    assert run(partial) == full


def _blocks(valid):
    """{index of a closing <eot>: its block's range} in a valid output."""
    return {i - 1: range(i, i + K) for i, t in enumerate(valid) if t == V}


@settings(max_examples=EXAMPLES, deadline=None)
@given(conversations, st.data())
def test_a_stray_state_id_raises_at_the_right_position(ids, data):
    valid = run(ids)
    at = data.draw(st.integers(0, len(valid)))
    stray = data.draw(st.sampled_from([*S, V + K, V + 7]))
    bad = valid[:at] + [stray] + valid[at:]
    blocks = _blocks(valid)
    if stray == S[-1] and any(at == r.stop - 1 for r in blocks.values()):
        at += 1  # subtle: the same ids as this stray right after the complete block
    # inserted into a block or right after its <eot>, the block is bad; anywhere else (right after a
    # complete block too) the id is a stray at its own position
    owner = next((e for e, r in blocks.items() if e < at < r.stop), None)
    assert position_of_error(bad) == (owner if owner is not None else at)


@settings(max_examples=EXAMPLES, deadline=None)
@given(conversations.filter(lambda ids: EOT in ids and ASSISTANT in ids), st.data())
def test_a_damaged_block_raises_at_its_eot(ids, data):
    valid = run(ids)
    blocks = _blocks(valid)
    if not blocks:
        return
    eot_at = data.draw(st.sampled_from(sorted(blocks)))
    r = blocks[eot_at]
    how = data.draw(st.sampled_from(["drop", "swap", "negative"]))
    bad = list(valid)
    if how == "drop":
        del bad[data.draw(st.sampled_from(list(r)))]
    elif how == "swap":
        bad[r.start], bad[r.stop - 1] = bad[r.stop - 1], bad[r.start]
    else:
        at = data.draw(st.sampled_from(list(r)))
        bad[at] = -1
        # a negative id in place of the block's first id is no given block: it is an error of its own
        expected = at if at == r.start else eot_at
        assert position_of_error(bad) == expected
        return
    assert position_of_error(bad) == eot_at
