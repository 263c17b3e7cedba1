"""``special=`` as tiktoken's ``allowed_special`` / ``disallowed_special``, against the references live.

- tiktoken 0.14 on its own files: a collection of markers equals ``encode(t, allowed_special=S,
  disallowed_special=())``; ``"raise"`` raises exactly where ``encode(t)`` raises and names the
  marker tiktoken names; ``AllowedSpecial(S, others="raise")`` equals ``encode(t, allowed_special=S)``,
  raising where it raises.
- HF tokenizers (Qwen3's tokenizer.json): every marker allowed is HF's default, none is
  ``encode_special_tokens=True``, and a subset equals HF's ids of the text cut at the allowed
  markers (each piece encoded with markers as text, the marker's id between).
- llama.cpp (the GGUF goldens made by tools/make_gguf_goldens.py): none and every marker give
  its ``parse_special=false`` and ``true`` ids.
"""

from __future__ import annotations

import functools
import gzip
import json
import re
from pathlib import Path

import pytest
import tiktoken
import tokenizers
from fixtures import edge_texts, fixture_path, gguf_vocab_path
from tiktoken.load import load_tiktoken_bpe

import polytok
from polytok import AllowedSpecial, EncodeError, PolytokError, SpecialTokens
from polytok.tokenizer.special_controls import markers

TIKTOKEN_FILES = [("whisper-gpt2-tiktoken", "gpt2.tiktoken"), ("llama3-tiktoken", "tokenizer.model"),
                  ("cl100k_base-tiktoken", "cl100k_base.tiktoken")]


@functools.cache
def _tiktoken(name: str, filename: str) -> tuple[polytok.Tokenizer, tiktoken.Encoding]:
    from polytok.formats.tiktoken_known import KNOWN_RANKS

    path = fixture_path(name, filename)
    tok = polytok.load(path)
    known = KNOWN_RANKS[tok.facts.details["sha256"]]
    ref = tiktoken.Encoding(known.name, pat_str=known.pattern, mergeable_ranks=load_tiktoken_bpe(str(path)),
                            special_tokens=known.special_tokens)
    return tok, ref


def _texts(specials: list[str]) -> list[str]:
    a, b = specials[0], specials[-1]
    return ["plain text, no marker", f"{a}", f"x{a}y {b}", f"{b}{a}{b}", f"{a[:-1]} and {b[1:]}",
            f"hello {a}\n\n{b} world {a}", f"'s{b}'ll 123{a}4567", "".join(specials[:6])] + edge_texts()[:40]


def _tiktoken_outcome(call, *args, **kwargs):
    """tiktoken's ids, or the marker named in its ValueError."""
    try:
        return call(*args, **kwargs)
    except ValueError as exc:
        found = re.search(r"disallowed special token ('.*?'|\".*?\")", str(exc))
        assert found, str(exc)
        return ("raises", eval(found.group(1)))  # the repr tiktoken wrote


def _polytok_outcome(call, *args, **kwargs):
    try:
        return call(*args, **kwargs)
    except EncodeError as exc:
        found = re.search(r"special-token marker ('.*?'|\".*?\") at character (\d+)", str(exc))
        assert found, str(exc)
        return ("raises", eval(found.group(1)))


@pytest.mark.parametrize("name,filename", TIKTOKEN_FILES)
def test_collections_and_raise_equal_tiktoken(name, filename):
    tok, ref = _tiktoken(name, filename)
    specials = sorted(ref.special_tokens_set, key=ref.encode_single_token)
    assert markers(tok) == ref.special_tokens_set
    subsets = [set(), {specials[0]}, {specials[-1]}, set(specials[: len(specials) // 2]), set(specials)]
    for text in _texts(specials):
        for allowed in subsets:
            want = ref.encode(text, allowed_special=allowed, disallowed_special=())
            assert tok.encode(text, special=allowed) == want, (text, allowed)
            assert tok.encode(text, special=sorted(allowed)) == want, "a list is a collection too"
            want = _tiktoken_outcome(ref.encode, text, allowed_special=allowed)
            got = _polytok_outcome(tok.encode, text, special=AllowedSpecial(allowed, others="raise"))
            assert got == want, (text, allowed)
        want = _tiktoken_outcome(ref.encode, text)
        assert _polytok_outcome(tok.encode, text, special="raise") == want, text
        assert _polytok_outcome(tok.encode, text, special=SpecialTokens.RAISE) == want, text


def test_raise_names_the_leftmost_marker_and_its_place():
    tok, ref = _tiktoken("whisper-gpt2-tiktoken", "gpt2.tiktoken")
    text = "ab <|endoftext|> cd <|endoftext|>"
    with pytest.raises(EncodeError, match=r"'<\|endoftext\|>' at character 3\b"):
        tok.encode(text, special="raise")
    with pytest.raises(ValueError):
        ref.encode(text)
    with pytest.raises(EncodeError, match=r"at character 2 of text 1\b"):
        tok.encode_batch(["fine", "ab<|endoftext|>"], special="raise")
    with pytest.raises(EncodeError, match=r"at character 0 of the pair\b"):
        tok.encode("fine", pair="<|endoftext|>", special="raise")
    with pytest.raises(EncodeError, match=r"at character 1 of word 2\b"):
        tok.encode(["a", "b", "c<|endoftext|>"], special="raise")
    assert tok.encode("no marker here", special="raise") == ref.encode("no marker here")


@pytest.mark.parametrize("name,filename", TIKTOKEN_FILES[:2])
def test_batches_and_full_encodings_take_the_same_forms(name, filename):
    tok, ref = _tiktoken(name, filename)
    specials = sorted(ref.special_tokens_set, key=ref.encode_single_token)
    texts = _texts(specials)
    allowed = {specials[0]}
    want = [ref.encode(t, allowed_special=allowed, disallowed_special=()) for t in texts]
    assert tok.encode_batch(texts, special=allowed) == want
    assert tok.encode_batch(texts, special=allowed, workers=2) == want
    assert [tok.encode_full(t, special=frozenset(allowed)).ids for t in texts] == want


def test_hf_every_none_and_some_markers():
    path = fixture_path("qwen3", "tokenizer.json")
    tok = polytok.load(path)
    ref = tokenizers.Tokenizer.from_file(str(path))
    special = sorted(markers(tok), key=tok.token_to_id)
    assert special and all(ref.token_to_id(m) is not None for m in special)
    texts = _texts(special[:8])
    allowed = {"<|im_start|>", "<|im_end|>"}
    pattern = re.compile("(" + "|".join(map(re.escape, sorted(allowed, key=len, reverse=True))) + ")")
    for text in texts:
        parsed = ref.encode(text, add_special_tokens=False).ids
        ref.encode_special_tokens = True
        try:
            as_text = ref.encode(text, add_special_tokens=False).ids
            cut: list[int] = []  # the text cut at the allowed markers, HF on each piece
            for piece in pattern.split(text):
                cut += [ref.token_to_id(piece)] if piece in allowed else \
                    ref.encode(piece, add_special_tokens=False).ids if piece else []
        finally:
            ref.encode_special_tokens = False
        assert tok.encode(text, add_special=False, special=set(special)) == parsed, text
        assert tok.encode(text, add_special=False, special=()) == as_text, text
        assert tok.encode(text, add_special=False, special=allowed) == cut, text


GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "gguf"


@pytest.mark.parametrize("name", ["llama-bpe", "llama-spm", "qwen2"])
def test_gguf_none_and_every_marker_equal_llama_cpp(name):
    golden = GOLDEN / f"{name}.jsonl.gz"
    if not golden.exists():
        pytest.skip(f"no golden file {golden.name}")
    with gzip.open(golden, "rt", encoding="utf-8") as lines:
        rows = [json.loads(line) for line in lines][1:]
    tok = polytok.load(gguf_vocab_path(name))
    every = markers(tok)
    assert every
    checked = 0
    for row in rows:
        special = every if row["parse_special"] else frozenset()
        assert tok.encode(row["text"], add_special=row["add_special"], special=special) == row["ids"], row["text"]
        checked += any(m in row["text"] for m in every)
    assert checked, "no golden text holds a marker"


def test_bad_forms_are_refused():
    tok, _ = _tiktoken("whisper-gpt2-tiktoken", "gpt2.tiktoken")
    for bad in (5, "every", {"a": 1}.items(), b"<|endoftext|>"):
        with pytest.raises(PolytokError, match="special must be"):
            tok.encode("x", special=bad)
    with pytest.raises(PolytokError, match="not one string"):
        AllowedSpecial("<|endoftext|>")
    with pytest.raises(PolytokError, match="'text' or 'raise'"):
        AllowedSpecial({"<|endoftext|>"}, others="parse")  # type: ignore[arg-type]


def test_raise_names_the_marker_parse_would_take(tmp_path):
    """Where one marker starts another, the one named is the one HF's parse splits out there."""
    from tokenizers import Tokenizer, models, pre_tokenizers

    ref = Tokenizer(models.WordLevel({"[UNK]": 0, "a": 1, "b": 2}, unk_token="[UNK]"))
    ref.pre_tokenizer = pre_tokenizers.Split("", "isolated")
    ref.add_special_tokens(["<x>", "<x>y"])
    path = tmp_path / "tokenizer.json"
    ref.save(str(path))
    tok = polytok.load(path)
    text = "a<x>yb"
    parsed = ref.encode(text).tokens
    assert "<x>y" in parsed
    with pytest.raises(EncodeError, match=r"'<x>y' at character 1\b"):
        tok.encode(text, special="raise")
    assert tok.encode(text, special={"<x>", "<x>y"}) == ref.encode(text).ids
