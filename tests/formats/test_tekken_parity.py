"""polytok.load(tekken.json) against mistral-common 1.13.1's ``Tekkenizer``, run live.

Files: tekken-240718 (v3, no special-token list: the deprecated 20 plus fillers) and
tekken-240911 (both from the mistral_common wheel). Texts: every edge text, 4000
characters of each bench text, and texts built around the file's own special tokens.

- ``encode(t, add_special=a)`` is ``Tekkenizer.encode(t, bos=a, eos=False)``; the
  default is ``bos=True``.
- ``special="parse"`` has no mistral-common call: expected ids are built from
  Tekkenizer's own, encoding the text between special tokens (longest first) and
  putting each special token's id between.
- decode: ``skip_special`` True / False is ``SpecialTokenPolicy.IGNORE`` / ``KEEP``, and
  ``decoder.decode_policy(ids, "raise")`` raises where ``RAISE`` does; on reference
  ids with special ids put inside words (and multi-byte characters), and on every id of
  the vocabulary, in chunks.
"""

from __future__ import annotations

import functools
import re

import pytest
from fixtures import bench_slice, edge_texts, fixture_path
from mistral_common.tokens.tokenizers.base import SpecialTokenPolicy
from mistral_common.tokens.tokenizers.tekken import Tekkenizer
from parity.diff_report import ids_mismatch

import polytok
from polytok.formats.tiktoken import mergeable_ranks

FILES = ["tekken-240718", "tekken-240911"]


@functools.cache
def _pair(name: str) -> tuple[polytok.Tokenizer, Tekkenizer, str]:
    path = fixture_path(name, "tekken.json")
    return polytok.load(path), Tekkenizer.from_file(path), str(path)


def _specials(ref: Tekkenizer) -> list[str]:
    return [t["token_str"] for t in ref._all_special_tokens]


def _texts(ref: Tekkenizer) -> list[str]:
    specials = _specials(ref)
    named = specials[:24] + specials[-4:]
    around = []
    for s in named:
        around += [s, f"x{s}y", f" {s} ", f"{s}{s}", s[:-1], f"{s[:-1]}{s}", f"Hello{s}\n\nwörld{s}"]
    return (edge_texts() + _bench_slices(4000)
            + around + ["".join(named), "[INST] Hi [/INST]</s><s>[INST]", "<SPECIAL_999><SPECIAL_99>"])



def _bench_slices(n_chars: int) -> list[str]:
    """The first `n_chars` of each bench text; none when ../shared (which holds them) is absent."""
    try:
        return [bench_slice(b, n_chars) for b in ("bench_en", "bench_code", "bench_multi")]
    except pytest.skip.Exception:
        return []

@pytest.mark.parametrize("name", FILES)
def test_encode_equals_tekkenizer(name):
    tok, ref, path = _pair(name)
    reports = []
    for text in _texts(ref):
        for add in (True, False):
            expected = ref.encode(text, bos=add, eos=False)
            report = ids_mismatch(path, text, f"add_special={add}", expected,
                                  tok.encode(text, add_special=add), tok.id_to_token)
            if report:
                reports.append(report)
        assert tok.encode(text, special="text") == ref.encode(text, bos=True, eos=False)
    assert not reports, "\n".join(reports[:5])
    assert tok.encode("x") == ref.encode("x", bos=True, eos=False)  # the default adds BOS


@pytest.mark.parametrize("name", FILES)
def test_parse_mode_cuts_at_special_tokens(name):
    tok, ref, _ = _pair(name)
    specials = _specials(ref)
    alternation = re.compile("(" + "|".join(map(re.escape, sorted(specials, key=len, reverse=True))) + ")")
    ids_of = {s: ref.get_special_token(s) for s in specials}
    for text in _texts(ref):
        expected = [ref.bos_id]
        for i, part in enumerate(alternation.split(text)):
            expected += [ids_of[part]] if i % 2 else ref.encode(part, bos=False, eos=False)
        assert tok.encode(text, special="parse") == expected, text[:80]


def _with_specials(ids: list[int], ref: Tekkenizer) -> list[int]:
    """Reference ids with special ids put at the start, the end and every 3rd place."""
    out = [ref.bos_id]
    for i, id_ in enumerate(ids):
        out.append(id_)
        if i % 3 == 1:
            out.append((7 * i) % ref.num_special_tokens)
    return out + [ref.eos_id]


@pytest.mark.parametrize("name", FILES)
def test_decode_under_each_policy(name):
    tok, ref, _ = _pair(name)
    for text in _texts(ref):
        for ids in (ref.encode(text, bos=True, eos=True), _with_specials(ref.encode(text, False, False), ref)):
            assert tok.decode(ids) == ref.decode(ids, special_token_policy=SpecialTokenPolicy.KEEP), text[:80]
            assert tok.decode(ids, skip_special=True) == ref.decode(ids, special_token_policy=SpecialTokenPolicy.IGNORE)
            with pytest.raises(ValueError):
                ref.decode(ids, special_token_policy=SpecialTokenPolicy.RAISE)
            with pytest.raises(polytok.DecodeError, match="raise"):
                tok.decoder.decode_policy(ids, "raise")
        plain = ref.encode(text, bos=False, eos=False)
        assert tok.decoder.decode_policy(plain, "raise") == ref.decode(plain, SpecialTokenPolicy.RAISE)


@pytest.mark.parametrize("name", FILES)
def test_every_id_decodes_as_tekkenizer(name):
    tok, ref, _ = _pair(name)
    ids = list(range(ref.n_words))
    for start in range(0, len(ids), 1009):
        chunk = ids[start:start + 1009]
        assert tok.decode(chunk) == ref.decode(chunk, SpecialTokenPolicy.KEEP), f"ids {chunk[0]}.."
        assert tok.decode(chunk, skip_special=True) == ref.decode(chunk, SpecialTokenPolicy.IGNORE)
    with pytest.raises(KeyError):
        ref.decode([ref.n_words + 3])
    with pytest.raises(polytok.DecodeError, match="position 1"):
        tok.decode([ref.bos_id, ref.n_words + 3])


@pytest.mark.parametrize("name", FILES)
def test_vocabulary_and_special_ids(name):
    tok, ref, _ = _pair(name)
    assert len(tok) == ref.n_words
    assert tok.special_ids["bos"] == ref.bos_id and tok.special_ids["eos"] == ref.eos_id
    assert tok.special_ids["pad"] == ref.pad_id and tok.special_ids["unk"] == ref.unk_id
    assert tok.facts.num_special_tokens == ref.num_special_tokens
    assert tok.facts.details["version"] == ref.version.value
    assert tok.facts.pattern == ref._model._pat_str
    for s in _specials(ref)[:40]:
        assert tok.token_to_id(s) == ref.get_special_token(s)
    assert tok.eog_ids == {ref.eos_id}
    assert mergeable_ranks(tok) == ref._model._mergeable_ranks


@pytest.mark.parametrize("name", FILES)
def test_raise_policy_takes_mistral_common_enum(name):
    tok, ref, _ = _pair(name)
    ids = ref.encode("a é b", bos=True, eos=False)
    for policy in SpecialTokenPolicy:
        if policy is SpecialTokenPolicy.RAISE:
            with pytest.raises(polytok.DecodeError):
                tok.decoder.decode_policy(ids, policy)
        else:
            assert tok.decoder.decode_policy(ids, policy) == ref.decode(ids, policy)


@pytest.mark.parametrize("name", FILES)
def test_decode_stream_adds_up_to_tekkenizer_decode(name):
    tok, ref, _ = _pair(name)
    for text in [*_bench_slices(600)[2:], "Héllo 世界 🙂 [INST] done"]:
        ids = _with_specials(ref.encode(text, bos=False, eos=False), ref)
        stream = tok.decode_stream()
        assert "".join(map(stream.step, ids)) + stream.flush() == ref.decode(ids, SpecialTokenPolicy.KEEP)


@pytest.mark.slow
@pytest.mark.parametrize("name", FILES)
def test_whole_bench_texts_equal_tekkenizer(name):
    tok, ref, path = _pair(name)
    for text in _bench_slices(10**7):
        expected = ref.encode(text, bos=True, eos=False)
        report = ids_mismatch(path, text, "add_special=True", expected, tok.encode(text), tok.id_to_token)
        assert report is None, report
        assert tok.decode(expected) == ref.decode(expected, SpecialTokenPolicy.KEEP)
