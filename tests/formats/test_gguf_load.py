"""What a GGUF load builds once and shares: the merge pairs (each pair once, its first rank) and
llama.cpp's linefeed id, read without building the BPE model's merge tables.

Both are load-time shortcuts of a longer way that stays the definition: the merge pairs of
``dict.fromkeys(_merge_pairs(lines))`` (the pure path), the linefeed id of ``encode("\\n")``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from fixtures import GGUF_VOCAB_NAMES, gguf_vocab_path

import polytok
from formats import gguf_pack as gp
from polytok import kernels
from polytok.errors import FormatError
from polytok.formats import gguf


def _bpe_file(tmp_path: Path, tokens: list[str], merges: list[str]) -> Path:
    path = tmp_path / "vocab.gguf"
    path.write_bytes(gp.pack_gguf([("tokenizer.ggml.model", gp.STRING, "gpt2"),
                                   ("tokenizer.ggml.pre", gp.STRING, "gpt-2"),
                                   ("tokenizer.ggml.tokens", (gp.ARRAY, gp.STRING), tokens),
                                   ("tokenizer.ggml.merges", (gp.ARRAY, gp.STRING), merges)]))
    return path


def _both(load: Any) -> tuple[Any, Any]:
    fast = load()
    with kernels.pure_path():
        pure = load()
    return fast, pure


def _error(path: Path) -> tuple[str, str | None]:
    with pytest.raises(FormatError) as caught:
        polytok.load(path)
    return caught.value.reason, caught.value.key


@pytest.mark.parametrize("name", GGUF_VOCAB_NAMES)
def test_newline_id_is_the_first_id_of_a_newline(name: str) -> None:
    path = gguf_vocab_path(name)
    vocab = gguf.read_gguf_vocab(path)
    if vocab.vocab_type in ("spm", "wpm"):
        pytest.skip("llama.cpp reads the linefeed id of SPM and WPM without tokenizing")
    tok = gguf.build_tokenizer(vocab)
    nl = tok.facts.named_tokens.get("nl")
    ids = tok.encode("\n", add_special=False, special="text")
    assert (nl.id if nl is not None else None) == (ids[0] if ids else gguf.VOCAB_TYPES[vocab.model][1].get("pad"))


def test_repeated_merges_keep_their_first_rank(tmp_path: Path) -> None:
    # "b c" listed again after "a b": with its first rank "abc" is a b|c → ab, then ab c
    tokens = ["a", "b", "c", "ab", "bc", "abc"]
    path = _bpe_file(tmp_path, tokens, ["a b", "b c", "ab c", "b c", "a b"])
    fast, pure = _both(lambda: polytok.load(path))
    for tok in (fast, pure):
        assert tok.encode("abc", add_special=False) == [5]
        assert tok.encode("bcab", add_special=False) == [4, 3]


@pytest.mark.parametrize(("merges", "key", "reason"), [
    (["a b", "a b", "ab q"], "tokenizer.ggml.merges[2]", "Token `q` out of vocabulary"),
    (["a b", "b a", "a b", "b a", "q a"], "tokenizer.ggml.merges[4]", "Token `q` out of vocabulary"),
    (["a b", "a b", "b b"], "tokenizer.ggml.merges[2]", "Token `bb` out of vocabulary"),
    (["a b", "ab", "a b"], "tokenizer.ggml.merges[1]", "Token `` out of vocabulary"),
])
def test_a_bad_merge_after_repeated_ones_is_named(tmp_path: Path, merges: list[str], key: str, reason: str) -> None:
    path = _bpe_file(tmp_path, ["a", "b", "ab", "ba"], merges)
    fast, pure = _both(lambda: _error(path))
    assert fast == pure == (reason, key)
