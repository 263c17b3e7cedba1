"""One long text over several processes (polytok.parallel.long_text): the reference's ids, joined where proven."""

from __future__ import annotations

import functools
import random

import pytest
from fixtures import HF_JSON_FIXTURES, edge_texts, fixture_path
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import polytok
from polytok import parallel
from polytok.parallel import long_text, resumable_scan, shares

tokenizers = pytest.importorskip("tokenizers")
pytestmark = pytest.mark.skipif(not parallel.can_fork(), reason="no fork start method here")


def mixed_text(seed: int, n_chars: int = 260_000) -> str:
    """Edge texts in random order, joined by random separators, until the text is long."""
    rng = random.Random(seed)
    texts = edge_texts()
    out, size = [], 0
    while size < n_chars:
        piece = rng.choice(texts) + rng.choice(["\n", " ", "\n\n", "", "  ", "\t", "<|endoftext|>"])
        out.append(piece)
        size += len(piece)
    return "".join(out)


def reference_pair(name):
    """HF tokenizers and polytok on a tokenizer.json fixture, both with the file's truncation off."""
    path = fixture_path(name, HF_JSON_FIXTURES[name])
    ref = tokenizers.Tokenizer.from_file(str(path))
    ref.no_truncation()
    tok = polytok.load(path)
    tok.truncation = None
    return ref, tok


def small_regions(monkeypatch, name):
    """`reference_pair`, with short texts cut into 64-character overlaps, so joins happen in
    every test text."""
    monkeypatch.setattr(long_text, "MIN_CHARS", 10_000)
    monkeypatch.setattr(long_text, "OVERLAP", 64)
    return reference_pair(name)


@pytest.mark.parametrize("name", ["gpt2", "llama3", "qwen3", "roberta-base"])
def test_long_texts_equal_tokenizers(name, monkeypatch):
    monkeypatch.setattr(long_text, "MIN_CHARS", 100_000)
    ref, tok = reference_pair(name)
    assert parallel.scanner_for(tok) is not None
    texts = [mixed_text(1), "short text", mixed_text(2, 120_000)]
    expected = [e.ids for e in ref.encode_batch(texts)]
    assert long_text.encode_long(tok, texts, add_special=True, special=None, workers=2) == expected


def test_tiktoken_long_text_equals_tiktoken(monkeypatch):
    tiktoken = pytest.importorskip("tiktoken")
    monkeypatch.setattr(long_text, "MIN_CHARS", 100_000)
    path = fixture_path("cl100k_base-tiktoken", "cl100k_base.tiktoken")
    tok = polytok.load(path)
    from tiktoken.load import load_tiktoken_bpe

    enc = tiktoken.Encoding("cl100k", pat_str=tok.facts.pattern, mergeable_ranks=load_tiktoken_bpe(str(path)),
                            special_tokens={})
    text = mixed_text(3)
    assert long_text.encode_long(tok, [text], add_special=False, special="text", workers=3) == \
        [enc.encode_ordinary(text)]


def test_regions_are_joined_at_a_common_piece_start(monkeypatch):
    """Cut inside a run that a scan from the middle reads differently: the join must not trust a
    region's first pieces (a scan starting inside "  word" sees " word", the whole text sees " ", " word")."""
    ref, tok = small_regions(monkeypatch, "gpt2")
    text = "".join(f"{'a' * (i % 7)}{' ' * (i % 5)}w{i}\n" for i in range(4000))
    for workers in (2, 3, 5):
        assert long_text.encode_long(tok, [text], add_special=False, special=None, workers=workers) == \
            [ref.encode(text, add_special_tokens=False).ids]


def test_a_seam_without_a_common_start_is_scanned_again_as_one_part(monkeypatch):
    ref, tok = small_regions(monkeypatch, "gpt2")
    # pieces of 3,000 characters: no seam has a common piece start within the 64-character
    # overlap, and none is long enough (long_text.LONG_PIECE) to stop the sharing
    text = ("x" * 3_000 + " ") * 10
    assert long_text.encode_long(tok, [text], add_special=False, special=None, workers=2) == \
        [ref.encode(text, add_special_tokens=False).ids]


def test_pipelines_without_a_scan_are_refused():
    assert parallel.scanner_for(polytok.load(fixture_path("bert-base-uncased",
                                                               HF_JSON_FIXTURES["bert-base-uncased"]))) is None
    assert long_text.encode_long(polytok.load(fixture_path("llama2", HF_JSON_FIXTURES["llama2"])), ["x"],
                                     add_special=True, special=None, workers=2) is None


def test_a_scan_from_inside_a_run_of_digits_is_not_trusted_until_it_meets_the_whole_texts(monkeypatch):
    """llama3 cuts digits in threes from the left: a scan that starts inside "1234567" cuts
    234|567 where the whole text cuts 123|456|7, so the first piece start after the region's
    overlap begins is not a safe join; only a start both scans share is."""
    ref, tok = small_regions(monkeypatch, "llama3")
    rng = random.Random(7)
    text = " ".join("".join(rng.choice("0123456789") for _ in range(rng.randrange(1, 200))) for _ in range(600))
    expected = [ref.encode(text, add_special_tokens=False).ids]
    for workers in (2, 3, 4):
        assert long_text.encode_long(tok, [text], add_special=False, special=None, workers=workers) == expected


def far_reading_tokenizer(tmp_path):
    """A Split whose first alternative reads a whole run of "a" before it fails (``a+b|a``):
    a scan of the text cut short at a seam would see single "a"s where the whole text has
    one "aaa…ab" piece, so a share's scan must not stop by cutting the text."""
    from tokenizers import Regex, Tokenizer, models, pre_tokenizers

    ref = Tokenizer(models.WordLevel({"[UNK]": 0, "a": 1, "ab": 2, " ": 3, "x": 4, "y": 5}, unk_token="[UNK]"))
    ref.pre_tokenizer = pre_tokenizers.Split(Regex("a+b|a| "), behavior="isolated")
    path = tmp_path / "tokenizer.json"
    ref.save(str(path))
    return ref, polytok.load(path)


@pytest.mark.parametrize("workers", [2, 3, 4])
def test_a_share_scan_that_reads_past_its_seam_is_exact(tmp_path, monkeypatch, workers):
    monkeypatch.setattr(long_text, "MIN_CHARS", 1_000)
    monkeypatch.setattr(long_text, "OVERLAP", 64)
    ref, tok = far_reading_tokenizer(tmp_path)
    assert parallel.scanner_for(tok) is not None
    text = "x " * 1500 + "a" * 9000 + "b" + " y" * 1500 + "a" * 700 + " x"
    expected = ref.encode(text).ids
    assert long_text.encode_long(tok, [text], add_special=False, special=None, workers=workers) == [expected]
    assert long_text.count_long(tok, [text], add_special=False, special=None, workers=workers) == [len(expected)]


@pytest.mark.parametrize("name", ["llama3", "roberta-base"])  # roberta's post-processor adds <s> and </s>
def test_count_long_equals_tokenizers_over_texts_with_special_tokens(monkeypatch, name):
    ref, tok = small_regions(monkeypatch, name)
    texts = [mixed_text(11, 40_000), "<|begin_of_text|>x", mixed_text(12, 30_000), ""]
    for add in (True, False):
        expected = [len(e.ids) for e in ref.encode_batch(texts, add_special_tokens=add)]
        for workers in (2, 3):
            assert long_text.count_long(tok, texts, add_special=add, special=None, workers=workers) == expected


@given(st.lists(st.integers(1, 3000), min_size=1, max_size=12), st.integers(2, 6))
def test_layout_gives_each_character_to_one_share_or_chunk(lengths, workers):
    """The own parts and zone chunks tile every segment, in order, and a cut leaves at least
    4 × the overlap characters on each side."""
    layout = shares.layout([n * 2 for n in lengths], lengths, workers, overlap=16, zone=long_text.ZONE,
                           chunks=long_text.CHUNKS)
    assert len(layout.own) == workers and len(layout.zones) == workers - 1
    parts = sorted([p for own in layout.own for p in own] + [p for zone in layout.zones for c in zone for p in c])
    covered = {seg: [] for seg in range(len(lengths))}
    for seg, lo, hi in parts:
        covered[seg].append((lo, hi))
    for seg, spans in covered.items():
        assert spans[0][0] == 0 and spans[-1][1] == lengths[seg]
        assert all(a[1] == b[0] for a, b in zip(spans, spans[1:]))
        assert all(hi - lo >= 64 for lo, hi in spans if (lo, hi) != (0, lengths[seg]))


@given(seed=st.integers(0, 10**6), workers=st.integers(2, 5), overlap=st.sampled_from([8, 16, 64, 200]),
       zone=st.sampled_from([0.05, 0.25, 0.6]), chunks=st.integers(1, 24))
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_any_layout_gives_the_reference_ids(seed, workers, overlap, zone, chunks, monkeypatch):
    """Whatever the overlap, zone and chunk sizes, and however many workers share the text,
    the joined ids are HF's (llama3: its digit triples and contractions make seams delicate)."""
    ref, tok = _llama3_pair()
    monkeypatch.setattr(long_text, "MIN_CHARS", 1_000)
    monkeypatch.setattr(long_text, "OVERLAP", overlap)
    monkeypatch.setattr(long_text, "ZONE", zone)
    monkeypatch.setattr(long_text, "CHUNKS", chunks)
    texts = [mixed_text(seed, 6_000), mixed_text(seed + 1, 2_500)]
    expected = [e.ids for e in ref.encode_batch(texts, add_special_tokens=False)]
    assert long_text.encode_long(tok, texts, add_special=False, special=None, workers=workers) == expected


@functools.lru_cache(maxsize=1)
def _llama3_pair():
    return reference_pair("llama3")  # loaded once for every example


def test_progress_reports_every_process_work_in_this_process(monkeypatch):
    """on_done is called in this process only, and what it reports adds up to all the text
    (gpt2 has no added tokens in these texts and no prefix space)."""
    ref, tok = small_regions(monkeypatch, "gpt2")
    texts = [mixed_text(5, 30_000).replace("<|endoftext|>", ""), mixed_text(6, 20_000).replace("<|endoftext|>", "")]
    reported: list[int] = []
    counts = long_text.count_long(tok, texts, add_special=False, special=None, workers=3, on_done=reported.append)
    assert counts == [len(e.ids) for e in ref.encode_batch(texts, add_special_tokens=False)]
    assert len(reported) > 1 and sum(reported) == sum(map(len, texts))


@pytest.mark.parametrize("workers", [2, 3])
def test_a_scan_whose_matches_leave_gaps_is_counted_and_encoded_exactly(tmp_path, monkeypatch, workers):
    """GPT-2's vocabulary behind a Split that matches only letter and digit runs: the text
    between matches is a piece of its own, so a share's pieces do not tile it by matches alone."""
    from tokenizers import Regex, pre_tokenizers

    ref, _ = small_regions(monkeypatch, "gpt2")
    ref.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(r"\p{L}+|\p{N}+"), behavior="isolated"),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
    path = tmp_path / "tokenizer.json"
    ref.save(str(path))
    tok = polytok.load(path)
    tok.truncation = None
    assert parallel.scanner_for(tok) is not None
    texts = [mixed_text(21, 40_000), mixed_text(22, 30_000)]
    expected = [e.ids for e in ref.encode_batch(texts, add_special_tokens=False)]
    assert long_text.encode_long(tok, texts, add_special=False, special=None, workers=workers) == expected
    counts = long_text.count_long(tok, texts, add_special=False, special=None, workers=workers)
    assert counts == list(map(len, expected))


def scan_text(seed: int) -> str:
    """Contractions, runs of white space and line breaks, long letter runs and edge texts, in
    random order: what a findall cut short near a match's end would read differently (``'ll``
    seen as ``'l``, a space run seen to the end without the char after it, a word seen
    without its tail, ``\\n  \\n`` seen without its second line break)."""
    rng = random.Random(seed)
    bits = ["we'll", "they're", "WE'RE", "'ve", "'d", "x'", "'", "   ", "\n\n  ", " \t ", "\n  \n", "\n\t\t\n   ",
            "\r\n    \r\n", "x!\n\n", "a" * 700, " " * 300, "12345", "!!!", "é", "日本語", " word",
            *edge_texts()[:40]]
    return "".join(rng.choice(bits) for _ in range(600))


@pytest.mark.parametrize("name", ["gpt2", "llama3", "qwen3"])
@pytest.mark.parametrize("reach", [1, 3, 256])
def test_a_scan_stopped_short_gives_the_pieces_of_the_whole_text(monkeypatch, name, reach):
    """ByteLevel's own pattern is decided within 2 chars of a match's end, Llama 3's and Qwen2's
    too but for the runs of white space their matches read whole, so `Scanner.until` runs
    ``findall`` with an end position a little past the stop and keeps the matches that end 2
    chars before it (and, for the latter two, that start before the run of white space ending
    there): the starts and pieces must be HF's pre-tokenizer's, for every stop."""
    monkeypatch.setattr(resumable_scan, "_REACH", reach)
    ref, tok = reference_pair(name)
    scanner = parallel.scanner_for(tok)
    assert scanner is not None and scanner.decided_within == 2 and scanner.reads_space_runs == (name != "gpt2")
    for seed in range(2):
        text = scan_text(seed)
        spans = [span for _, span in ref.pre_tokenizer.pre_tokenize_str(text)]
        view = scanner.view(text)
        for first in range(0, len(spans), 97):  # scans start at true piece starts
            pos = spans[first][0]
            for stop in range(pos + 1, min(len(text), pos + 400)):
                wanted = [(s, text[s:e]) for s, e in spans[first:] if s < stop]
                starts, pieces = scanner.until(text, view, pos, stop)
                assert list(zip(starts, pieces)) == wanted, (seed, pos, stop)


@pytest.mark.parametrize("name", ["gpt2", "llama3"])
@pytest.mark.parametrize("workers", [2, 3])
def test_shares_stopped_short_give_the_reference_ids(monkeypatch, name, workers):
    """The same through `encode_long` and `count_long`, with seams everywhere."""
    ref, tok = small_regions(monkeypatch, name)
    monkeypatch.setattr(resumable_scan, "_REACH", 3)
    monkeypatch.setattr(long_text, "CHUNKS", 24)
    texts = [scan_text(7), scan_text(8)]
    expected = [e.ids for e in ref.encode_batch(texts, add_special_tokens=False)]
    assert long_text.encode_long(tok, texts, add_special=False, special=None, workers=workers) == expected
    assert long_text.count_long(tok, texts, add_special=False, special=None, workers=workers) == \
        [len(ids) for ids in expected]


def test_a_special_that_is_not_a_policy_is_left_to_the_callers_encode(monkeypatch):
    """`encode_long` and `count_long` decline a `special` that is not a SpecialTokens policy
    (None); the caller's encode in one process raises the error that names it."""
    monkeypatch.setattr(long_text, "MIN_CHARS", 1_000)
    tok = polytok.load("gpt2")
    texts = [mixed_text(9, 5_000)]
    assert long_text.encode_long(tok, texts, add_special=False, special=None, workers=2) is not None
    assert long_text.encode_long(tok, texts, add_special=False, special="bogus", workers=2) is None
    assert long_text.count_long(tok, texts, add_special=False, special="bogus", workers=2) is None
    with pytest.raises(polytok.PolytokError, match="bogus"):
        tok.encode(texts[0], special="bogus")


@pytest.mark.parametrize("name, workers", [("gpt2", 2), ("llama3", 1), ("llama3", 3)])
def test_counts_in_progress_steps_equal_tokenizers(name, workers, monkeypatch):
    """With progress asked for, each share is counted in steps (`long_text.STEPS`), one worker
    included; the steps' seams join as the shares' do (llama3 reads runs of white space whole)."""
    ref, tok = small_regions(monkeypatch, name)
    monkeypatch.setattr(long_text, "STEP_OVERLAPS", 4)
    texts = [mixed_text(11, 40_000), "short", mixed_text(12, 25_000) + "   \n\n  12345 " * 300]
    reported: list[int] = []
    counts = long_text.count_long(tok, texts, add_special=True, special=None, workers=workers,
                                  on_done=reported.append)
    assert counts == [len(e.ids) for e in ref.encode_batch(texts)]
    assert len([n for n in reported if n]) >= 10  # the special tokens' text is no segment's: at most all of it
    assert 0.9 * sum(map(len, texts)) < sum(reported) <= sum(map(len, texts)) - len("short")
