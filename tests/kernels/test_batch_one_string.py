"""`Tokenizer.encode` of one long text through the compiled batch pipeline (polytok._kernels.batch),
against the pure path: texts around the length where it starts, every post-processing setting,
tokens added after the pipeline was first used, pickling, and the word cache the pipeline keeps
across calls (one call at a time holds it; others fill their own).
"""

from __future__ import annotations

import functools
import pickle

import pytest

import polytok
from polytok.kernels import pure_path
from polytok.parallel.threads import encode_on_threads
from polytok.special import AddedToken
from polytok.tokenizer.tokenizer import ONE_CALL_CHARS
from polytok.truncation import Padding, Truncation

from ._compiled import compiled

FILES = {"cl100k_base-tiktoken": "cl100k_base.tiktoken", "tekken-240718": "tekken.json",
         "spm-mistral-v1": "tokenizer.model", "spm-botchan-unigram-1000": "spm.model"}


@pytest.fixture(scope="module", autouse=True)
def _module():
    compiled("batch")


def path_of(name: str) -> str:
    from fixtures import fixture_path

    return str(fixture_path(name, FILES[name]))


@functools.cache
def pure_of(name: str) -> polytok.Tokenizer:
    with pure_path():
        return polytok.load(path_of(name))


def texts() -> list[str]:
    from fixtures import bench_slice, edge_texts

    multi = bench_slice("bench_multi", 20000)
    out = [bench_slice(corpus, n) for corpus in ("bench_en", "bench_code") for n in (ONE_CALL_CHARS, 20000)]
    out += [multi[:ONE_CALL_CHARS - 1], multi[:ONE_CALL_CHARS], multi]
    out += ["x" * 5000, "é " * 900, "<s> [INST] <|endoftext|> " * 60, "ok \udfff " * 200, " " * 700]
    return out + ["\n".join(edge_texts())]


def outcome(call, *args, **kwargs):
    try:
        return call(*args, **kwargs)
    except (polytok.EncodeError, UnicodeError) as error:
        return type(error).__name__, str(error)


@pytest.mark.parametrize("name", list(FILES))
def test_long_texts_equal_the_pure_path(name):
    pure, fast = pure_of(name), polytok.load(path_of(name))
    assert fast.batch_pipeline(False) is not None
    for text in texts():
        for options in ({}, {"add_special": False}, {"special": "text"}, {"special": "parse"}):
            assert outcome(fast.encode, text, **options) == outcome(pure.encode, text, **options)


@pytest.mark.parametrize("name", ["tekken-240718", "spm-mistral-v1"])
def test_truncation_and_padding_apply_to_its_ids(name):
    fast = polytok.load(path_of(name))
    with pure_path():
        pure = polytok.load(path_of(name))
    text = texts()[1]
    for truncation, padding in [(Truncation(7), None), (None, Padding(length=9000)), (Truncation(5, stride=2), None)]:
        for tok in (pure, fast):
            tok.truncation, tok.padding = truncation, padding
        for add_special in (True, False):
            assert fast.encode(text, add_special=add_special) == pure.encode(text, add_special=add_special)


def test_a_token_added_after_use_cuts_the_text():
    """The pipeline a tokenizer keeps is asked again: a token added since cuts the text."""
    text = ("say hello to the world " * 40) + "hello"
    fast = polytok.load(path_of("cl100k_base-tiktoken"))
    with pure_path():
        pure = polytok.load(path_of("cl100k_base-tiktoken"))
    assert fast.encode(text) == pure.encode(text)
    assert fast.batch_pipeline(False) is fast.batch_pipeline(False)
    for tok in (fast, pure):
        tok.add_tokens([AddedToken("hello")])
    want = pure.encode(text)
    assert fast.batch_pipeline(False) is None
    assert fast.encode(text) == want
    assert want.count(fast.token_to_id("hello")) == 41


@pytest.mark.parametrize("name", ["cl100k_base-tiktoken", "spm-mistral-v1"])
def test_a_tokenizer_that_ran_the_pipeline_pickles(name):
    fast = polytok.load(path_of(name))
    text = texts()[1]
    want = fast.encode(text)
    assert fast.batch_pipeline(False) is not None
    copy = pickle.loads(pickle.dumps(fast))
    assert copy.encode(text) == want
    assert copy.encode_batch([text, "a b"]) == fast.encode_batch([text, "a b"])


def test_the_kept_word_cache_gives_the_same_ids_on_every_call_and_thread():
    from fixtures import bench_slice

    fast = polytok.load(path_of("tekken-240718"))
    pure = pure_of("tekken-240718")
    pipeline = fast.batch_pipeline(False)
    lines = [line for corpus in ("bench_en", "bench_multi") for line in bench_slice(corpus, 60000).split("\n") if line]
    want = [pure.encode(line, add_special=False) for line in lines]
    for _ in range(3):
        assert pipeline.encode(lines, 0, len(lines)) == want
        assert encode_on_threads(pipeline, lines, 4) == want
    assert pipeline.encode(lines[::-1], 0, len(lines)) == want[::-1]


def letters(i: int) -> str:
    out = ""
    while True:
        i, digit = divmod(i, 26)
        out += "abcdefghijklmnopqrstuvwxyz"[digit]
        if not i:
            return out


def test_the_kept_word_cache_grows_and_empties_with_the_same_ids():
    """More distinct words than the kept cache holds at its largest (it doubles, keeping its
    entries, then is emptied when half full), over several calls."""
    fast = polytok.load(path_of("cl100k_base-tiktoken"))
    pure = pure_of("cl100k_base-tiktoken")
    pipeline = fast.batch_pipeline(False)
    words = [" " + letters(i) for i in range(140000)]
    lines = ["".join(words[i:i + 500]) for i in range(0, len(words), 500)]
    want = [pure.encode(line, add_special=False) for line in lines]
    for _ in range(2):
        assert pipeline.encode(lines, 0, len(lines)) == want
    assert fast.encode("".join(lines), add_special=False) == [i for ids in want for i in ids]
