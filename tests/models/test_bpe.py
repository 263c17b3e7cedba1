"""BPE model vs tokenizers.models.BPE (HF tokenizers 0.23.3): ids and char offsets, loading rules, errors."""

from __future__ import annotations

import random

import pytest

from polytok.errors import EncodeError, FormatError
from polytok.models import BPE, from_config

from ._harness import (
    check_words,
    corpus_texts,
    edge_words,
    random_words,
    real_model,
    real_words,
    reference,
    reference_from_json,
)

tokenizers = pytest.importorskip("tokenizers")
HfBPE = tokenizers.models.BPE

ABC = {"a": 0, "b": 1, "c": 2, "ab": 3, "bc": 4, "abc": 5, "aa": 6, "aaaa": 7, "ba": 8, "bab": 9, "ca": 10}
ABC_MERGES = [("a", "b"), ("b", "c"), ("a", "a"), ("aa", "aa"), ("ab", "c"), ("a", "bc"), ("b", "a"),
              ("ba", "b"), ("c", "a")]


def both(vocab, merges, **options):
    return reference(HfBPE(vocab, merges, **options)), BPE(vocab, merges, **options)


def test_spec_vectors():
    ref, ours = both({"a": 0, "b": 1, "ab": 2}, [("a", "b")])
    check_words(ref, ours, ["abxab", "x", "xx", "ab", "ba"])
    # x is dropped and takes no bytes, so the next token's offsets shift left (as in HF)
    assert ours.tokenize_spans("abxab") == [(2, 0, 2), (2, 2, 4)]
    vocab = {"a": 0, "b": 1, "<unk>": 2}
    for fuse in (False, True):
        check_words(*both(vocab, [], unk_token="<unk>", fuse_unk=fuse), ["axyb", "xyz", "axbyc", "é日b"])
    ref, ours = both({"a": 0, "aa": 1}, [("a", "a")])
    check_words(ref, ours, ["aaaaa", "a" * 7, "a" * 60, "a" * 301])
    assert ours.tokenize("aaaaa") == [1, 1, 0]


def test_merge_order_on_repetitive_words():
    ref, ours = both(ABC, ABC_MERGES)
    words = ["aaaaaaa", "ababab", "abcabc", "bababab", "aabaab", "abcaaaabca", "cabcab"]
    check_words(ref, ours, words + [w * 9 for w in words])


@pytest.mark.parametrize("seed", range(4))
def test_merge_order_random(seed):
    """Random merge tables over 3 letters, words on both sides of the scan/heap switch (48 symbols)."""
    rng = random.Random(seed)
    tokens = list("abc")
    merges = []
    while len(merges) < 14:
        a, b = rng.choice(tokens), rng.choice(tokens)
        if len(a + b) <= 6 and (a, b) not in merges:
            merges.append((a, b))
            tokens += [a + b] if a + b not in tokens else []
    vocab = {t: i for i, t in enumerate(tokens)}
    ref, ours = both(vocab, merges)
    check_words(ref, ours, random_words(rng, "abc", 150, 20) + random_words(rng, "abc", 30, 130))


def test_shared_ids_reproduce_the_heap_exactly():
    """'ab' and 'abc' share id 5: HF's stale (a, b) heap entry merges (a, bc) at rank 1, before (bc, d)."""
    vocab = {"a": 0, "b": 1, "c": 2, "d": 3, "bc": 4, "ab": 5, "bcd": 6, "abc": 5}
    merges = [("b", "c"), ("a", "b"), ("bc", "d"), ("a", "bc")]
    ref, ours = both(vocab, merges)
    assert ref.encode("abcd").ids == [5, 3]  # "lowest rank, leftmost" would give a, bcd
    check_words(ref, ours, ["abcd", "abcdabcd", "dabcd", "abcd" * 20], values=False)


@pytest.mark.parametrize("seed", range(3))
def test_shared_ids_random(seed):
    rng = random.Random(100 + seed)
    for _ in range(40):
        tokens = list("abc")
        merges = []
        for _ in range(rng.randint(3, 10)):
            a, b = rng.choice(tokens), rng.choice(tokens)
            if len(a + b) <= 5 and (a, b) not in merges:
                merges.append((a, b))
                tokens += [a + b] if a + b not in tokens else []
        vocab = {t: i for i, t in enumerate(tokens)}
        longer = [t for t in tokens if len(t) > 1]
        for _ in range(2):
            vocab[rng.choice(longer)] = vocab[rng.choice(longer)]
        check_words(*both(vocab, merges), random_words(rng, "abc", 12, 14), values=False)


def test_duplicate_merge_keeps_last_rank():
    vocab = {"a": 0, "b": 1, "c": 2, "ab": 3, "bc": 4}
    ref, ours = both(vocab, [("b", "c"), ("a", "b"), ("b", "c")])
    assert ref.encode("abc").tokens == ["ab", "c"]
    check_words(ref, ours, ["abc", "abcbc", "bcab"])


def test_ignore_merges():
    vocab = {"a": 0, "b": 1, "c": 2, "bc": 3, "abc": 4, "ab": 5}
    merges = [("b", "c"), ("a", "b")]
    for ignore in (False, True):
        check_words(*both(vocab, merges, ignore_merges=ignore), ["abc", "abcb", "ab", "bc", "cabc"])
    assert BPE(vocab, merges, ignore_merges=True).tokenize("abcb") == [0, 3, 1]


def test_byte_fallback_all_or_nothing_and_order():
    vocab = {"a": 0, "b": 1, "<unk>": 2, "<0x78>": 3, "<0xC3>": 4}
    for fuse in (False, True):
        ref, ours = both(vocab, [], byte_fallback=True, unk_token="<unk>", fuse_unk=fuse)
        # é lacks <0xA9>: unk; a pending unk is emitted after the next byte-fallback char (HF order)
        check_words(ref, ours, ["axéyb", "aéxb", "aééxxéb", "éx", "xé", "é"])
    full = dict(vocab, ab=300, **{f"<0x{b:02X}>": 10 + b for b in range(256)})
    ref, ours = both(full, [("a", "b")], byte_fallback=True, unk_token="<unk>")
    check_words(ref, ours, ["a日b", "日本", "🤗x", "a\nb"] + edge_words())
    assert ours.tokenize("\n") == [10 + 0x0A]


def test_byte_fallback_with_merges_over_bytes():
    vocab = {f"<0x{b:02X}>": b for b in range(256)}
    vocab.update({"a": 256, "<0xC3><0xA9>": 257, "a<0xC3><0xA9>": 258})
    merges = [("<0xC3>", "<0xA9>"), ("a", "<0xC3><0xA9>")]
    ref, ours = both(vocab, merges, byte_fallback=True)
    check_words(ref, ours, ["aé", "éa", "aéaé", "é"])


def test_affixes():
    vocab = {"a": 0, "b": 1, "##a": 2, "##b": 3, "ab": 4, "##ab": 5, "a</w>": 6, "##a</w>": 7, "##b</w>": 8,
             "ab</w>": 9, "<unk>": 10, "##ba": 11}
    merges = [("a", "##b"), ("##a", "##b"), ("a", "##b</w>"), ("##b", "##a")]
    for suffix in ({}, {"end_of_word_suffix": "</w>"}):
        ref, ours = both(vocab, merges, continuing_subword_prefix="##", unk_token="<unk>", **suffix)
        check_words(ref, ours, ["a", "ab", "aab", "abab", "ba", "bab", "axb", "b"])


def test_prefix_is_cut_by_bytes_without_checking():
    """merge result = a + b without b's first len(prefix) *bytes*, whether or not b starts with the prefix."""
    vocab = {"x": 0, "ée": 1, "xe": 2}
    ref, ours = both(vocab, [("x", "ée")], continuing_subword_prefix="@@", unk_token="ée")
    assert ref.encode("xQ").ids == [2]  # x + unk "ée" merge into "xe" ("ée" minus 2 bytes)
    check_words(ref, ours, ["xQ", "xQQ", "Qx"])
    config = {"type": "BPE", "continuing_subword_prefix": "@@", "vocab": vocab, "merges": [["x", "e"]]}
    with pytest.raises(Exception, match="Token `e` out of vocabulary"):  # HF refuses the merge before applying it
        reference_from_json(config)
    with pytest.raises(FormatError, match=r"model\.merges\[0\]"):
        from_config(config)


def test_unknown_chars_without_unk_are_dropped_and_missing_unk_raises():
    ref, ours = both({"a": 0}, [])
    check_words(ref, ours, ["xax", "xyz", "a"])
    ref, ours = both({"a": 0}, [], unk_token="<unk>")
    assert ours.tokenize("aa") == [0, 0]
    with pytest.raises(Exception, match="not found in the vocabulary"):
        ref.encode("ax")
    with pytest.raises(EncodeError, match="<unk>"):
        ours.tokenize("ax")


def test_dropout():
    vocab = {"a": 0, "b": 1, "ab": 2, "abab": 3}
    merges = [("a", "b"), ("ab", "ab")]
    ref, ours = both(vocab, merges, dropout=1.0, ignore_merges=True)
    check_words(ref, ours, ["abab", "ab", "ba"])  # p = 1 skips every merge, and HF skips ignore_merges
    for p in (0.0, None):
        check_words(*both(vocab, merges, dropout=p), ["abab", "aabb"])
    sampled = BPE(vocab, merges, dropout=0.5)
    for _ in range(30):
        assert "".join(sampled.id_to_token(i) for i in sampled.tokenize("ababab")) == "ababab"
    with pytest.raises(FormatError, match="dropout"):
        BPE(vocab, merges, dropout=1.5)


def test_cut_before_mark_only_where_no_token_crosses():
    """Long words are cut before '▁' except after a character seen before '▁' inside a token."""
    tokens = ["▁", "a", "b", "▁a", "▁b", "▁▁", "a▁", "▁ab", "a▁▁", "ab", "▁▁a"]
    merges = [("▁", "a"), ("▁", "b"), ("▁", "▁"), ("a", "▁"), ("▁a", "b"), ("a", "▁▁"), ("a", "b"), ("▁▁", "a")]
    vocab = {t: i for i, t in enumerate(tokens)}
    ref, ours = both(vocab, merges)
    rng = random.Random(7)
    check_words(ref, ours, ["a▁b▁▁ab▁a▁▁▁b" * 3] + random_words(rng, "▁ab", 200, 40))


def test_no_cut_after_a_character_that_is_not_a_token():
    """'é' falls back to bytes and <0xA9> merges with '▁': no cut between 'é' and '▁'."""
    vocab = {f"<0x{b:02X}>": b for b in range(256)}
    vocab.update({"▁": 256, "a": 257, "▁a": 258, "▁▁": 259, "▁b": 260, "b": 261, "<0xA9>▁": 262, "<unk>▁": 263})
    vocab.update({f"▁{n}": 300 + n for n in range(300)})  # so that '▁', not '<', is the cut mark
    merges = [("▁", "a"), ("▁", "▁"), ("▁", "b"), ("<0xA9>", "▁")]
    ref, ours = both(vocab, merges, byte_fallback=True)
    check_words(ref, ours, ["▁aé▁a▁b▁é▁▁b", "▁a▁b▁aaé▁b▁a"])
    assert ours._cut("▁aé▁a▁b") == ["▁aé▁a", "▁b"]
    ref, ours = both(dict(vocab, **{"<unk>": 264}), merges + [("<unk>", "▁")], unk_token="<unk>")
    check_words(ref, ours, ["▁aé▁a▁b▁é▁▁b", "▁a▁b▁aaé▁b▁a"])


def test_cache_returns_copies():
    ours = BPE(ABC, ABC_MERGES)
    first = ours.tokenize("abcabc")
    first.append(99)
    assert ours.tokenize("abcabc") == first[:-1]


def test_protocol_accessors():
    vocab = {"a": 0, "b": 1, "ab": 2, "b2": 1}
    ours = BPE(vocab, [("a", "b")])
    assert ours.vocab_size() == 4 == reference(HfBPE(vocab, [("a", "b")])).get_vocab_size(False)
    assert ours.token_to_id("ab") == 2 and ours.token_to_id("zz") is None
    assert ours.id_to_token(1) == "b2"  # shared id: the last token listed
    assert ours.id_to_token(7) is None
    assert ours.get_vocab() == vocab


# -- from_config ------------------------------------------------------------


def _config(**fields):
    base = {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
            "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False, "ignore_merges": False,
            "vocab": {"a": 0, "b": 1, "c": 2, "ab": 3, "bc": 4, "abc": 5}, "merges": ["a b", "b c", "ab c"]}
    base.update(fields)
    return base


@pytest.mark.parametrize("merges", [
    ["a b", "b c", "ab c"],
    [["a", "b"], ["b", "c"], ["ab", "c"]],
    ["#version: 0.2", "b c", "a b", "#version x", "ab c", "b c"],
    [],
])
def test_merges_spellings(merges):
    config = _config(merges=merges)
    check_words(reference_from_json(config), from_config(config), ["abc", "abcabc", "cab", "bca"])


def test_merges_with_spaces_need_pairs():
    config = _config(vocab={"a": 0, "b c": 1, "ab c": 2}, merges=[["a", "b c"]])
    assert from_config(config).tokenize("a") == [0]
    with pytest.raises(FormatError, match=r"model\.merges\[0\]"):
        from_config(_config(vocab={"a": 0, "b c": 1, "ab c": 2}, merges=["a b c"]))


@pytest.mark.parametrize("merges,key", [
    (["a b", "b x"], r"model\.merges\[1\]"),
    (["#version: 0.2", "a b", "x c"], r"model\.merges\[2\]"),
    (["a b", "c a"], r"model\.merges\[1\]"),  # result "ca" is not in the vocab
    (["a b", "a  b"], r"model\.merges\[1\]"),
    (["a b", ["b", "c"]], r"model\.merges\[1\]"),
    ([["a", "b"], ["b", "c", "d"]], r"model\.merges\[1\]"),
    ([["a", "b"], "b c"], r"model\.merges\[1\]"),
])
def test_bad_merges_name_the_entry(merges, key):
    config = _config(merges=merges)
    with pytest.raises(Exception):  # noqa: B017 - tokenizers raises a plain Exception
        reference_from_json(config)
    with pytest.raises(FormatError, match=key):
        from_config(config)


@pytest.mark.parametrize("fields,key", [
    ({"dropout": 1.5}, r"model\.dropout"),
    ({"dropout": "x"}, r"model\.dropout"),
    ({"vocab": {"a": 0.0}}, r"model\.vocab\.a"),
    ({"vocab": {"a": -1}}, r"model\.vocab\.a"),
    ({"fuse_unk": 1}, r"model\.fuse_unk"),
    ({"unk_token": 3}, r"model\.unk_token"),
    ({"merges": None}, r"model\.merges"),
])
def test_bad_fields(fields, key):
    config = _config(**fields)
    with pytest.raises(Exception):  # noqa: B017 - tokenizers raises a plain Exception
        reference_from_json(config)
    with pytest.raises(FormatError, match=key):
        from_config(config)


def test_nulls_and_missing_options_are_defaults():
    config = {"vocab": {"a": 0, "b": 1, "ab": 2}, "merges": ["a b"], "fuse_unk": None, "dropout": 0}
    assert isinstance(from_config(dict(config, type="BPE")), BPE)
    assert isinstance(from_config(config), BPE)  # untyped old serialization
    check_words(reference_from_json(config), from_config(config), ["ab", "abab"])


# -- real vocabularies --------------------------------------------------------


@pytest.mark.parametrize("name", ["gpt2", "llama2", "llama3", "roberta-base"])
def test_real_vocabularies(name):
    """gpt2/roberta: byte-level words; llama2: byte_fallback on whole '▁' texts; llama3: ignore_merges."""
    full, config = real_model(name)
    ours = from_config(config)
    words = real_words(full, corpus_texts(6000))
    check_words(reference(full.model), ours, words, spans=False)
    check_words(reference(full.model), ours, words[:300] + [w for w in words if len(w) > 60][:20])
