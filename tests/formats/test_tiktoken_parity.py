"""polytok.load(rank file) against tiktoken 0.14.0, run live, on every tiktoken fixture.

The reference is ``tiktoken.Encoding`` built from ``tiktoken.load.load_tiktoken_bpe`` of
the same file, with the pattern and special tokens of polytok's table (the table
itself is checked against tiktoken's and llama-models' own definitions in
test_tiktoken_known.py). Texts: every edge text, 4000-character slices of the three
bench texts, and texts built around the file's own special tokens. Modes:
``special="text"`` vs ``encode_ordinary``, ``"parse"`` vs ``encode(allowed_special="all")``;
decode vs ``decode`` on the reference ids, and every id of the vocabulary in chunks.
"""

from __future__ import annotations

import functools

import pytest
import tiktoken
from fixtures import bench_slice, edge_texts, fixture_path
from parity.diff_report import ids_mismatch
from tiktoken.load import load_tiktoken_bpe

import polytok
from polytok.formats.tiktoken import mergeable_ranks
from polytok.formats.tiktoken_known import KNOWN_RANKS

FILES = [
    ("cl100k_base-tiktoken", "cl100k_base.tiktoken"),  # GitHub origin: ../shared only
    ("whisper-gpt2-tiktoken", "gpt2.tiktoken"),
    ("whisper-multilingual-tiktoken", "multilingual.tiktoken"),  # its last rank is a token of no bytes
    ("llama3-tiktoken", "tokenizer.model"),
    ("llama4-tiktoken", "tokenizer.model"),
]
IDS = [name for name, _ in FILES]


@functools.cache
def _pair(name: str, filename: str) -> tuple[polytok.Tokenizer, tiktoken.Encoding, str]:
    path = fixture_path(name, filename)
    tok = polytok.load(path)  # recognised: no pattern given
    known = KNOWN_RANKS[tok.facts.details["sha256"]]
    ref = tiktoken.Encoding(known.name, pat_str=known.pattern, mergeable_ranks=load_tiktoken_bpe(str(path)),
                            special_tokens=known.special_tokens)
    return tok, ref, str(path)


def special_texts(specials: list[str]) -> list[str]:
    """Texts around each special token: alone, glued to words, doubled, cut short, between spaces."""
    out = []
    for s in specials:
        out += [s, f"x{s}y", f" {s} ", f"{s}{s}", f"\n{s}\n\nHello", s[:-1], s[1:], f"{s[:-1]}{s}",
                f"'s{s}'ll 123{s}4567"]
    out.append("".join(specials))
    return out


def _texts(tok: polytok.Tokenizer) -> list[str]:
    specials = sorted(tok.added.content_to_id, key=tok.added.content_to_id.__getitem__)
    sample = specials if len(specials) <= 40 else specials[:24] + specials[-8:]
    return (edge_texts() + _bench_slices(4000)
            + special_texts(sample) + ["".join(specials)])



def _bench_slices(n_chars: int) -> list[str]:
    """The first `n_chars` of each bench text; none when ../shared (which holds them) is absent."""
    try:
        return [bench_slice(b, n_chars) for b in ("bench_en", "bench_code", "bench_multi")]
    except pytest.skip.Exception:
        return []

@pytest.mark.parametrize("name,filename", FILES, ids=IDS)
def test_encode_equals_tiktoken_in_both_modes(name, filename):
    tok, ref, path = _pair(name, filename)
    reports = []
    for text in _texts(tok):
        for mode, expected in (("text", ref.encode_ordinary(text)),
                               ("parse", ref.encode(text, allowed_special="all"))):
            got = tok.encode(text, special=mode)
            report = ids_mismatch(path, text, f"special={mode}", expected, got, tok.id_to_token)
            if report:
                reports.append(report)
    assert not reports, "\n".join(reports[:5])


@pytest.mark.parametrize("name,filename", FILES, ids=IDS)
def test_default_mode_is_encode_ordinary_and_adds_nothing(name, filename):
    tok, ref, _ = _pair(name, filename)
    special = next(iter(tok.added.content_to_id))
    text = f"Hello {special} world"
    assert tok.encode(text) == ref.encode_ordinary(text)
    assert tok.encode(text, add_special=True, special="parse") == ref.encode(text, allowed_special="all")
    assert tok.encode(text, add_special=False, special="parse") == ref.encode(text, allowed_special="all")


@pytest.mark.parametrize("name,filename", FILES, ids=IDS)
def test_decode_equals_tiktoken(name, filename):
    tok, ref, _ = _pair(name, filename)
    specials = set(ref.special_tokens_set)
    special_ids = {ref.encode_single_token(s) for s in specials}
    for text in _texts(tok):
        ids = ref.encode(text, allowed_special="all")
        assert tok.decode(ids) == ref.decode(ids), text[:80]
        kept = [i for i in ids if i not in special_ids]
        assert tok.decode(ids, skip_special=True) == ref.decode(kept), text[:80]
        # a cut inside a multi-byte character decodes with replacement, as tiktoken's does
        assert tok.decode(ids[1:-1]) == ref.decode(ids[1:-1])


@pytest.mark.parametrize("name,filename", FILES, ids=IDS)
def test_every_id_decodes_as_tiktoken(name, filename):
    tok, ref, path = _pair(name, filename)
    all_ids = sorted(set(range(ref.n_vocab)) - {i for i in range(ref.n_vocab) if _unknown(ref, i)})
    for start in range(0, len(all_ids), 997):
        chunk = all_ids[start:start + 997]
        assert tok.decode(chunk) == ref.decode(chunk), f"ids {chunk[0]}..{chunk[-1]}"
    assert mergeable_ranks(tok) == load_tiktoken_bpe(path)
    assert len(tok) == ref.n_vocab - sum(_unknown(ref, i) for i in range(ref.n_vocab))
    assert tok.facts.pattern == ref._pat_str


def _unknown(ref: tiktoken.Encoding, id_: int) -> bool:
    try:
        ref.decode_single_token_bytes(id_)
    except KeyError:
        return True
    return False


@pytest.mark.parametrize("name,filename", FILES, ids=IDS)
def test_out_of_range_id_is_a_decode_error_naming_the_position(name, filename):
    tok, ref, _ = _pair(name, filename)
    bad = ref.n_vocab + 5
    with pytest.raises(KeyError):
        ref.decode([1, 2, bad])
    with pytest.raises(polytok.DecodeError, match="position 2"):
        tok.decode([1, 2, bad])
    with pytest.raises(polytok.DecodeError, match="position 1"):
        tok.decode([1, -1])


def test_surrogates_are_repaired_as_tiktoken_does():
    tok, ref, _ = _pair("whisper-gpt2-tiktoken", "gpt2.tiktoken")
    for text in ["a\ud83d\ude00b", "lone \ud800 high", "lone \udc00 low", "\udc00\ud800", "x\ud83d",
                 "<|endoftext|>\ud83d\ude00<|endoftext|>\ud800"]:
        assert tok.encode(text) == ref.encode_ordinary(text)
        assert tok.encode(text, special="parse") == ref.encode(text, allowed_special="all")
        assert tok.encode_full(text).ids == ref.encode_ordinary(text)


@pytest.mark.parametrize("name,filename", FILES, ids=IDS)
def test_encode_full_ids_equal_encode(name, filename):
    tok, _, _ = _pair(name, filename)
    for text in edge_texts()[::7] + _bench_slices(1500)[2:]:
        for mode in ("text", "parse"):
            assert tok.encode_full(text, special=mode).ids == tok.encode(text, special=mode)


@pytest.mark.parametrize("name,filename", FILES, ids=IDS)
def test_decode_stream_adds_up_to_tiktoken_decode(name, filename):
    tok, ref, _ = _pair(name, filename)
    for text in [*_bench_slices(600)[2:], "Héllo 世界 🙂 <|endoftext|> done", edge_texts()[42]]:
        ids = ref.encode(text, allowed_special="all")
        stream = tok.decode_stream()
        assert "".join(map(stream.step, ids)) + stream.flush() == ref.decode(ids)


@pytest.mark.slow
@pytest.mark.parametrize("name,filename", FILES, ids=IDS)
def test_whole_bench_texts_equal_tiktoken(name, filename):
    tok, ref, path = _pair(name, filename)
    for text in _bench_slices(10**7):
        for mode, expected in (("text", ref.encode_ordinary(text)),
                               ("parse", ref.encode(text, allowed_special="all"))):
            report = ids_mismatch(path, text, f"special={mode}", expected, tok.encode(text, special=mode),
                                  tok.id_to_token)
            assert report is None, report
        assert tok.decode(expected) == ref.decode(expected)
