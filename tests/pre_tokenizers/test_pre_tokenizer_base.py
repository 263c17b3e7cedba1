"""`PreTokenizerBase`'s defaults (polytok/pre_tokenizers/base.py) against the live `tokenizers`.

- ``pre_tokenize_each(pieces)``: each piece pre-tokenized as HF does a split that does
  not start the input (the splits of a ``PreTokenizedString`` cut after a first split,
  as added tokens cut a text), the words concatenated; ByteLevel overrides it.
- ``reads_origin``: only Metaspace ``prepend_scheme="first"`` and a Sequence holding one
  look at ``at_origin``; Sequence hands such a member, and the members before it, each
  piece with its own ``at_origin`` (HF: the ``▁`` goes only to the piece at offset 0).
- ``splits_empty_text``: only a Split keeping the empty match of an empty text (tiktoken's),
  and a Sequence whose first member is one.
- ``caches``: ByteLevel's byte-form cache, once per Sequence however often it is held.
"""

from __future__ import annotations

from typing import Any

import pytest

import polytok.pre_tokenizers
from polytok.pre_tokenizers.base import PreTokenizerBase
from polytok.pre_tokenizers.byte_level import ByteLevel
from polytok.pre_tokenizers.llama_regex_split import LlamaRegexSplit
from polytok.pre_tokenizers.llama_wordpiece_split import LlamaWordPieceSplit
from polytok.pre_tokenizers.metaspace import Metaspace
from polytok.pre_tokenizers.sequence import Sequence
from polytok.pre_tokenizers.split import Split

from ._helpers import all_texts, expected, ours, reference

METASPACE_FIRST = {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "first", "split": True}
CONFIGS = [
    {"type": "Whitespace"},
    {"type": "WhitespaceSplit"},
    {"type": "BertPreTokenizer"},
    {"type": "Digits", "individual_digits": True},
    {"type": "Punctuation", "behavior": "Isolated"},
    {"type": "CharDelimiterSplit", "delimiter": "_"},
    {"type": "Split", "pattern": {"Regex": "\\s+"}, "behavior": "MergedWithPrevious", "invert": False},
    {"type": "UnicodeScripts"},
    {"type": "FixedLength", "length": 3},
    {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "always", "split": True},
    METASPACE_FIRST,
    {**METASPACE_FIRST, "split": False},
    {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True},
    {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": False},
    {"type": "Sequence", "pretokenizers": [{"type": "WhitespaceSplit"}, METASPACE_FIRST]},
]
LEAD = "#"  # the first split of each text, so the pieces after it do not start the input


def _ids(config: dict[str, Any]) -> str:
    inner = ",".join(_ids(p) for p in config.get("pretokenizers", []))
    scheme = f"-{config['prepend_scheme']}" if "prepend_scheme" in config else ""
    return config["type"] + (f"[{inner}]" if inner else "") + scheme


@pytest.mark.parametrize("config", CONFIGS, ids=_ids)
def test_pre_tokenize_each_is_every_piece_away_from_the_origin(config):
    ref, pt = reference(config), ours(config)
    bad = []
    for index, text in enumerate(all_texts(n_random=120)):
        text = LEAD + text
        cuts = (1, *range(3 + index % 3, len(text), 2 + index % 5))
        pieces = [text[a:b] for a, b in zip(cuts, (*cuts[1:], len(text))) if b > a]
        want = [p for p, (start, _) in expected(ref, text, cuts) if start >= len(LEAD)]
        got = pt.pre_tokenize_each(pieces)
        if got != want:
            bad.append(f"{pieces!r}\n  expected={want!r}\n  actual  ={got!r}")
    assert not bad, f"{len(bad)} differ; first:\n" + "\n".join(bad[:3])


SEQUENCES_READING = [
    [METASPACE_FIRST, {"type": "Digits", "individual_digits": True}],
    [{"type": "Sequence", "pretokenizers": [METASPACE_FIRST]}, {"type": "Punctuation", "behavior": "Isolated"}],
    [{"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": False},
     {**METASPACE_FIRST, "split": False}, {"type": "WhitespaceSplit"}],
]


@pytest.mark.parametrize("members", SEQUENCES_READING, ids=lambda m: "+".join(_ids(p) for p in m))
def test_a_sequence_holding_metaspace_first_reads_the_origin(members):
    config = {"type": "Sequence", "pretokenizers": members}
    ref, pt = reference(config), ours(config)
    assert pt.reads_origin and pt.exact_without_alignment
    prefixed = 0
    for text in all_texts(n_random=80):
        want = [p for p, _ in expected(ref, text)]
        assert pt.pre_tokenize(text, True) == want, text
        prefixed += bool(want) and want[0].startswith("\u2581") and not text.startswith("\u2581")
    assert prefixed > 50


def test_reads_origin_flags():
    first = Metaspace(prepend_scheme="first")
    assert first.reads_origin
    assert not Metaspace(prepend_scheme="always").reads_origin and not Metaspace(prepend_scheme="never").reads_origin
    assert Sequence([ByteLevel(), Sequence([Split(" ", "isolated"), first])]).reads_origin
    assert not Sequence([ByteLevel(), Sequence([Metaspace()])]).reads_origin
    assert not any(ours(c).reads_origin for c in CONFIGS if c is not METASPACE_FIRST and "prepend_scheme" not in c
                   and c["type"] != "Sequence")


def test_splits_empty_text_flags():
    keeps = Split(r"\s*", "removed", invert=True, empty_matches="keep")  # tiktoken's split
    assert keeps.splits_empty_text and keeps.pre_tokenize("", True) == [""]
    assert Sequence([keeps, ByteLevel(use_regex=False)]).splits_empty_text
    assert not Sequence([ByteLevel(use_regex=False), keeps]).splits_empty_text
    assert not Split(r"\s*", "removed", invert=True).splits_empty_text and not Sequence([]).splits_empty_text
    assert not any(ours(c).splits_empty_text for c in CONFIGS)


def test_caches():
    byte_level = ByteLevel()
    byte_level.pre_tokenize("Hello world", True)
    [cache] = byte_level.caches()
    assert cache[" world"] == "\u0120world" and cache.limit > 0
    assert Sequence([byte_level, Split(" ", "isolated"), Sequence([byte_level])]).caches() == [cache]
    assert [c is cache for c in Sequence([ByteLevel(), byte_level]).caches()] == [False, True]
    assert Metaspace().caches() == [] and Sequence([Metaspace()]).caches() == []


def test_every_pre_tokenizer_inherits_the_base():
    for cls in [*polytok.pre_tokenizers.REGISTRY.values(), LlamaRegexSplit, LlamaWordPieceSplit]:
        assert issubclass(cls, PreTokenizerBase), cls.__name__
