"""Metaspace pre-tokenizer against the live `tokenizers`, incl. the prepend schemes and config rules."""

from __future__ import annotations

import pytest

from polytok.errors import FormatError
from polytok.normalized import NormalizedString

from ._helpers import all_texts, assert_same, expected, ours, reference, tokenizers

CONFIGS = [
    {"type": "Metaspace", "replacement": r, "prepend_scheme": scheme, "split": split}
    for r in ("\u2581", "_") for scheme in ("always", "first", "never") for split in (True, False)
]


@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: f"{c['replacement']}-{c['prepend_scheme']}-{c['split']}")
def test_whole_texts(config):
    assert_same(config, all_texts())


@pytest.mark.parametrize("cuts", [(3,), (1, 6), (2, 4, 9)])
@pytest.mark.parametrize("scheme", ["always", "first", "never"])
def test_every_split_and_first_only_at_origin(scheme, cuts):
    # later splits start past offset 0: "first" must not prepend there, "always" must
    config = {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": scheme, "split": True}
    assert_same(config, all_texts(n_random=100, seed=2), cuts=cuts)


def test_replacement_equal_to_space():
    assert_same({"type": "Metaspace", "replacement": " ", "prepend_scheme": "always", "split": True},
                all_texts(n_random=50))


def test_spec_vectors():
    """The spec's examples; expected pieces are HF's, run live (the literals only say what they are)."""
    config = {"type": "Metaspace", "replacement": "\u2581"}
    for text, pieces in [(" Hello  world", ["▁Hello", "▁", "▁world"]),
                         ("▁Hello▁▁world▁", ["▁Hello", "▁", "▁world", "▁"])]:
        assert ours(config).pre_tokenize(text) == [p for p, _ in expected(reference(config), text)] == pieces
    config = {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "first", "split": False}
    first = ours(config)
    assert first.pre_tokenize("Hello world", True) == [p for p, _ in expected(reference(config), "Hello world")]
    assert first.pre_tokenize("Hello world", True) == ["▁Hello▁world"]
    # a later split (not at offset 0): HF prepends nothing there
    later = [p for p, _ in expected(reference(config), "xHello world", cuts=(1,))][1:]
    assert first.pre_tokenize("Hello world", False) == later == ["Hello▁world"]


def test_first_reads_the_real_original_start():
    # a normalizer that deleted leading chars leaves the split at original offset 0
    pt = ours({"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "first"})
    ns = NormalizedString("Hello", [(i + 2, i + 3) for i in range(5)], 0, 7)
    assert [p.text for p in pt.pre_tokenize_aligned(ns)] == ["▁Hello"]
    ref = reference({"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "first"})
    pre = tokenizers.PreTokenizedString("  Hello")
    pre.normalize(lambda n: n.strip())
    ref.pre_tokenize(pre)
    assert [(p, o) for p, o, _ in pre.get_splits()] == [("▁Hello", (2, 7))]


def test_legacy_keys():
    base = {"type": "Metaspace", "replacement": "\u2581"}
    for extra, scheme in [({"add_prefix_space": True}, "always"), ({"add_prefix_space": None}, "always"),
                          ({"add_prefix_space": False, "prepend_scheme": "never"}, "never"),
                          ({"add_prefix_space": True, "prepend_scheme": "first"}, "first"),
                          ({"str_rep": "\u2581"}, "always"), ({"split": None}, "always")]:
        config = {**base, **extra}
        reference(config)  # the reference accepts it too
        pt = ours(config)
        assert pt.prepend_scheme == scheme and pt.split is True


@pytest.mark.parametrize("extra, key", [
    ({"add_prefix_space": False}, "pre_tokenizer.add_prefix_space"),
    ({"add_prefix_space": False, "prepend_scheme": "first"}, "pre_tokenizer.add_prefix_space"),
    ({"prepend_scheme": "First"}, "pre_tokenizer.prepend_scheme"),
    ({"prepend_scheme": None}, "pre_tokenizer.prepend_scheme"),
    ({"replacement": "ab"}, "pre_tokenizer.replacement"),
    ({"replacement": ""}, "pre_tokenizer.replacement"),
    ({"split": "yes"}, "pre_tokenizer.split"),
    ({"str_rep": 5}, "pre_tokenizer.str_rep"),
])
def test_rejected_configs(extra, key):
    config = {"type": "Metaspace", "replacement": "\u2581", **extra}
    with pytest.raises(Exception):  # noqa: B017 - tokenizers raises a plain Exception
        reference(config)
    with pytest.raises(FormatError) as info:
        ours(config)
    assert info.value.key == key


def test_replacement_is_required():
    with pytest.raises(FormatError):
        ours({"type": "Metaspace"})


def test_first_offsets_in_pre_tokenize_str():
    config = {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "first"}
    assert expected(reference(config), " Hello") == [("▁Hello", (0, 6))]
