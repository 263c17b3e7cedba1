"""Each `polytok.vocab_export` export, loaded by its engine, accepts what the reference tokenizer writes.

For every fixture of tests/test_vocab_export_refs.py (`CASES`: one per format), the export goes
through JSON text and into xgrammar (``TokenizerInfo.from_vocab_and_metadata``), llguidance
(``LLTokenizer(TokenizerWrapper(...))``) and outlines-core (``Vocabulary``). Then, for the texts
the reference tokenizes without a control token:

- the engine's bytes of the reference's ids (xgrammar ``decoded_vocab``, llguidance
  ``decode_bytes``, the outlines map read back) are the reference's decode of them, after the
  space the format puts in front of a text (what a generation after a prompt writes);
- a regex built by the engine for those bytes accepts the reference's ids, then a stop id ends
  it; the regex of a different text refuses them.

Expected values come from the reference engines (`Reference`), never from polytok.
"""

from __future__ import annotations

import functools
import json
from typing import Any

import pytest
from test_vocab_export_refs import CASES, Reference, reference, usable_texts

from polytok.vocab_export import LLGuidanceVocab, export_vocab, text_bytes


def _export(case: str, kind: str) -> dict[str, Any]:
    """The export as an engine reads it: through its JSON text."""
    return json.loads(json.dumps(export_vocab(reference(case).tok, kind, stop_ids=_stop(reference(case)))))


def _stop(ref: Reference) -> list[int] | None:
    """The reference's stop ids where it has them; a tokenizer.json alone names none: its EOS by text."""
    if ref.stop is not None:
        return sorted(ref.stop)
    found = [ref.tok.token_to_id(t) for t in ("<|endoftext|>", "</s>", "[SEP]")]
    return [next(i for i in found if i is not None)]


def _expected(ref: Reference, ids: list[int]) -> bytes:
    return (b" " if ref.prefix_space else b"") + ref.decode(ids)


_META = set("\\.^$|?*+()[]{}")
_ESCAPES = {"\t": "\\t", "\n": "\\n"}


def _regex(texts: list[str]) -> str:
    """An alternation of the literal texts: metacharacters escaped, tab and newline as ``\\t`` and ``\\n``
    (read alike by all three; xgrammar 0.2.9 reads ``\\x2e`` as U+02EB, so no ``\\xHH``)."""
    def literal(text: str) -> str:
        return "".join(_ESCAPES.get(c, "\\" + c if c in _META else c) for c in text)

    return "(" + "|".join(literal(t) for t in texts) + ")"


def _written(ref: Reference) -> list[tuple[str, list[int]]]:
    """(the text a generation writes, the reference's ids) for each usable text."""
    out = []
    for _, ids in usable_texts(ref):
        data = _expected(ref, ids)
        if ref.clean_spaces and any(c in data for c in b".,!?'"):
            continue  # the decode deletes spaces no per-token bytes can (tests/test_vocab_export_refs.py)
        out.append((data.decode("utf-8"), ids))
    return out


# -- xgrammar ------------------------------------------------------------------------------------


@functools.cache
def _xgrammar(case: str) -> Any:
    xgr = pytest.importorskip("xgrammar")
    export = _export(case, "xgrammar")
    vocab = [text_bytes(t) for t in export["encoded_vocab"]]
    return xgr.TokenizerInfo.from_vocab_and_metadata(vocab, json.dumps(export["metadata"]))


@pytest.mark.parametrize("case", sorted(CASES))
def test_xgrammar(case: str) -> None:
    xgr = pytest.importorskip("xgrammar")
    ref, info = reference(case), _xgrammar(case)
    assert info.vocab_size == ref.tok.n_vocab
    assert info.add_prefix_space is ref.prefix_space
    assert set(info.special_token_ids) >= ref.special - set(info.stop_token_ids)
    decoded = info.decoded_vocab
    written = _written(ref)
    compiler = xgr.GrammarCompiler(info)
    every = compiler.compile_regex(_regex([t for t, _ in written]))
    for text, ids in written:
        assert b"".join(decoded[i] for i in ids) == text.encode(), (case, text)
        matcher = xgr.GrammarMatcher(every)
        assert all(matcher.accept_token(i) for i in ids), (case, text)
        assert matcher.accept_token(info.stop_token_ids[0]) and matcher.is_terminated(), (case, text)
        other = xgr.GrammarMatcher(compiler.compile_regex(_regex([text + "x"])))
        assert not (all(other.accept_token(i) for i in ids) and other.accept_token(info.stop_token_ids[0]))


# -- llguidance ----------------------------------------------------------------------------------


@functools.cache
def _llguidance(case: str) -> Any:
    llguidance = pytest.importorskip("llguidance")
    export = _export(case, "llguidance")
    wrapper = llguidance.TokenizerWrapper(LLGuidanceVocab(export, reference(case).tok))
    return llguidance.LLTokenizer(wrapper, eos_token=export["eos_token_ids"]), export


@pytest.mark.parametrize("case", sorted(CASES))
def test_llguidance(case: str) -> None:
    llguidance = pytest.importorskip("llguidance")
    ref = reference(case)
    lltok, export = _llguidance(case)
    assert lltok.vocab_size == ref.tok.n_vocab
    assert all(lltok.is_special_token(i) for i in ref.special)
    written = _written(ref)
    grammar = llguidance.grammar_from("regex", _regex([t for t, _ in written]))
    for text, ids in written:
        assert lltok.decode_bytes(ids) == text.encode(), (case, text)
        matcher = llguidance.LLMatcher(lltok, grammar)
        assert matcher.consume_tokens(ids), (case, text, matcher.get_error())
        assert matcher.is_accepting(), (case, text)
        assert matcher.consume_token(export["eos_token_id"]) and matcher.is_stopped(), (case, text)
        other = llguidance.LLMatcher(lltok, llguidance.grammar_from("regex", _regex([text + "x"])))
        assert not (other.consume_tokens(ids) and other.is_accepting()), (case, text)


# -- outlines-core -------------------------------------------------------------------------------


@functools.cache
def _outlines(case: str) -> Any:
    outlines_core = pytest.importorskip("outlines_core")
    export = _export(case, "outlines")
    vocab = {text_bytes(t): ids for t, ids in export["vocabulary"].items()}
    return outlines_core.Vocabulary(export["eos_token_id"], vocab), export


def _walk(index: Any, ids: list[int]) -> Any:
    state = index.get_initial_state()
    for id_ in ids:
        state = index.get_next_state(state, id_)
        if state is None:
            return None
    return state


@pytest.mark.parametrize("case", sorted(CASES))
def test_outlines(case: str) -> None:
    outlines_core = pytest.importorskip("outlines_core")
    ref = reference(case)
    vocab, export = _outlines(case)
    bytes_of = {i: text_bytes(t) for t, ids in export["vocabulary"].items() for i in ids}
    assert ref.special.isdisjoint(bytes_of)
    written = _written(ref)
    index = outlines_core.Index(_regex([t for t, _ in written]), vocab)
    for text, ids in written:
        assert b"".join(bytes_of[i] for i in ids) == text.encode(), (case, text)
        state = _walk(index, ids)
        assert state is not None and index.is_final_state(state), (case, text)
        assert export["eos_token_id"] in index.get_allowed_tokens(state)
        other = outlines_core.Index(_regex([text + "x"]), vocab)
        state = _walk(other, ids)
        assert state is None or not other.is_final_state(state), (case, text)


# -- control tokens are never text ---------------------------------------------------------------


def _control_samples(ref: Reference) -> list[tuple[int, str]]:
    """A few control ids whose text the reference writes out (``<|endoftext|>``, ``</s>`` ...), with that text."""
    table = ref.tok.vocab_bytes()
    out = []
    for id_ in sorted(ref.special)[:6]:
        data = table[id_]
        if data and ref.piece is not None and ref.piece(id_) == data:
            out.append((id_, data.decode("utf-8")))
    return out


@pytest.mark.parametrize("case", sorted(CASES))
def test_control_tokens_do_not_match_their_text(case: str) -> None:
    """A grammar that asks for the text ``<|endoftext|>`` never lets the control token of that text stand for it."""
    ref = reference(case)
    samples = _control_samples(ref)
    if not samples:
        pytest.skip(f"{case}: no control token with a per-token reference text")
    regex = _regex([text for _, text in samples])
    xgr = pytest.importorskip("xgrammar")
    llguidance = pytest.importorskip("llguidance")
    outlines_core = pytest.importorskip("outlines_core")
    compiled = xgr.GrammarCompiler(_xgrammar(case)).compile_regex(regex)
    lltok, _ = _llguidance(case)
    try:
        index = outlines_core.Index(regex, _outlines(case)[0])
    except ValueError as exc:  # outlines-core refuses a regex no token sequence can write: none does, then
        assert "incompatible with the regex" in str(exc)
        index = None
    stop = set(_stop(ref) or ())
    for id_, text in samples:
        if id_ in stop:
            continue
        assert not xgr.GrammarMatcher(compiled).accept_token(id_), (case, id_, text)
        assert not llguidance.LLMatcher(lltok, llguidance.grammar_from("regex", regex)).consume_token(id_), (case, text)
        assert index is None or index.get_next_state(index.get_initial_state(), id_) is None, (case, id_, text)
