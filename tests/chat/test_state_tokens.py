"""Per-turn state tokens (polytok.insert_state_tokens): one test per rule, and hypothesis properties.

No engine has this stage, so the expected ids are written out by hand from the rules
(tests of single rules) or computed by an oracle in this file that reads the rules
another way — per ``<user>`` segment instead of polytok's left-to-right state machine.
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


# -- rule 1: the k state ids after every <eot> that closes an exchange -------------------------


def test_block_after_the_eot_that_closes_an_exchange():
    assert run([USER, T1, ASSISTANT, T2, EOT]) == [USER, T1, ASSISTANT, T2, EOT, *S]
    two = [USER, T1, ASSISTANT, T2, EOT, USER, T2, ASSISTANT, T1, EOT]
    assert run(two) == [USER, T1, ASSISTANT, T2, EOT, *S, USER, T2, ASSISTANT, T1, EOT, *S]


def test_an_assistant_without_an_open_user_starts_nothing():
    assert run([ASSISTANT, T1, EOT]) == [ASSISTANT, T1, EOT]
    # after the exchange closed, a second assistant turn does not reopen it
    closed = [USER, T1, ASSISTANT, T2, EOT]
    assert run(closed + [ASSISTANT, T1, EOT]) == closed + S + [ASSISTANT, T1, EOT]


def test_an_eot_before_the_reply_closes_nothing():
    # the user's own <eot> comes before the <assistant>: only the reply's <eot> closes the exchange
    assert run([USER, T1, EOT, ASSISTANT, T2, EOT]) == [USER, T1, EOT, ASSISTANT, T2, EOT, *S]


# -- rule 2: a reply that stopped early gets <eot> and the block before the next <user> --------


def test_a_reply_cut_short_gets_eot_and_block_before_the_next_user():
    assert run([USER, T1, ASSISTANT, T2, USER, T1]) == [USER, T1, ASSISTANT, T2, EOT, *S, USER, T1]
    assert run([USER, T1, ASSISTANT, USER]) == [USER, T1, ASSISTANT, EOT, *S, USER]


def test_an_open_reply_at_the_end_stays_open_and_users_without_reply_get_nothing():
    assert run([USER, T1, ASSISTANT, T2]) == [USER, T1, ASSISTANT, T2]
    assert run([USER, T1, USER, T2, ASSISTANT]) == [USER, T1, USER, T2, ASSISTANT]


# -- rule 3: caller's state ids only as a complete ordered block after a closing <eot> --------


def test_a_given_block_is_kept_not_doubled():
    done = [USER, T1, ASSISTANT, T2, EOT, *S, USER, T1, ASSISTANT, T2, EOT, *S]
    assert run(done) == done
    # one exchange with its block, the next without: the block is added only where it is missing
    assert run(done[:8 + K] + [EOT]) == done[:8 + K] + [EOT, *S]


@pytest.mark.parametrize("block", [S[:-1], S[1:], S[::-1], S + [V], [V] * K], ids=["short", "no_first", "reversed",
                                                                                    "long", "repeated"])
def test_a_bad_block_is_an_error_at_its_eot(block):
    ids = [USER, T1, ASSISTANT, T2, EOT, *block, USER]
    assert position_of_error(ids) == 4
    with pytest.raises(StateTokenError, match=r"position 4: .*complete block 100 101 102"):
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


def oracle(ids):
    """The rules read per <user> segment: where each block goes, and the <eot>s to add."""
    cuts = [i for i, t in enumerate(ids) if t == USER] + [len(ids)]
    out = list(ids[:cuts[0]])  # before the first <user>: nothing opens
    for n, (start, end) in enumerate(zip(cuts, cuts[1:])):
        segment = list(ids[start:end])
        reply = segment.index(ASSISTANT) if ASSISTANT in segment else None
        closing = next((i for i in range(reply or 0, len(segment)) if segment[i] == EOT), None) \
            if reply is not None else None
        if closing is not None:
            segment[closing + 1:closing + 1] = S
        elif reply is not None and end < len(ids):  # cut short by the next <user>
            segment += [EOT, *S]
        out += segment
    return out


alphabet = st.sampled_from([USER, ASSISTANT, EOT, T1, T2])
conversations = st.lists(alphabet, max_size=40)


@settings(max_examples=EXAMPLES, deadline=None)
@given(conversations)
def test_output_equals_the_oracle_and_is_a_fixed_point(ids):
    out = run(ids)
    assert out == oracle(ids)
    assert run(out) == out  # valid input round-trips: complete blocks are kept as given
    assert [t for t in out if t < V] == [t for t in oracle(ids) if t < V]


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
    # inserted into or right beside a block (or right after a closing <eot>): that block is bad
    owner = next((e for e, r in _blocks(valid).items() if e < at <= r.stop), None)
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
        # a negative id in place of the block's first id is itself the first problem
        expected = at if at == r.start else eot_at
        assert position_of_error(bad) == expected
        return
    assert position_of_error(bad) == eot_at
