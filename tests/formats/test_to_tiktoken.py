"""write_tiktoken: tiktoken 0.14 on the written ranks against the source's engine, run live.

The source's ids come from HF tokenizers 0.23.3 (tokenizer.json, ``add_special_tokens=False``)
or llama.cpp's golden ids (tests/golden/gguf, made by tools/gen_llama_goldens.py); tiktoken's
from ``tiktoken.Encoding(pat_str=..., mergeable_ranks=load_tiktoken_bpe(written), special_tokens=...)``
with ``allowed_special="all"``. Each rule of `to_tiktoken_ranks` has a tiny vocabulary here whose
refusal is shown to be needed: tiktoken with ranks = ids tokenizes some text unlike HF. The sweep
over every fixture is test_to_tiktoken_sweep.py (slow).
"""

from __future__ import annotations

import gzip
import json
import random
from pathlib import Path

import pytest
import tiktoken
import tokenizers
from fixtures import bench_slice, edge_texts, fixture_path, gguf_vocab_path
from tiktoken.load import load_tiktoken_bpe

import polytok
from polytok.convert.outcome import ConversionRefused, Written
from polytok.convert.to_tiktoken import write_tiktoken
from polytok.regex.split_patterns import R50K
from polytok.text.byte_alphabet import BYTES_TO_CHARS

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "gguf"


def texts(n_chars: int = 4000) -> list[str]:
    return edge_texts() + [bench_slice(name, n_chars) for name in ("en", "code", "multi")]


def hf_tokenizer(path: Path) -> tokenizers.Tokenizer:
    raw = path.read_bytes()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    tok = tokenizers.Tokenizer.from_str(raw.decode("utf-8"))
    tok.no_truncation()
    tok.no_padding()
    return tok


def tiktoken_of(written: Written) -> tiktoken.Encoding:
    options = written.load_options
    return tiktoken.Encoding("written", pat_str=options["pattern"], mergeable_ranks=load_tiktoken_bpe(written.path),
                             special_tokens=options["special_tokens"])


def check_against_hf(source: Path, out: Path, sample: list[str]) -> Written:
    written = write_tiktoken(str(source), str(out))
    hf, enc = hf_tokenizer(source), tiktoken_of(written)
    tok = polytok.load(out, **written.load_options)
    specials = sorted(written.load_options["special_tokens"])[:8]
    if specials:
        sample = sample + ["".join(specials), f"x{specials[0]} y"]
    for text in sample:
        expected = hf.encode(text, add_special_tokens=False).ids
        assert enc.encode(text, allowed_special="all") == expected, text[:80]
        assert tok.encode(text, special="parse") == expected, text[:80]
    return written


def test_gpt2_gives_hf_ids_and_tiktoken_s_own_file(tmp_path):
    source = fixture_path("gpt2", "tokenizer.json")
    written = check_against_hf(source, tmp_path / "g.tiktoken", texts())
    # GPT-2's ranks as tiktoken ships them (whisper's gpt2.tiktoken is r50k_base), byte for byte
    assert (tmp_path / "g.tiktoken").read_bytes() == fixture_path("whisper-gpt2-tiktoken", "gpt2.tiktoken").read_bytes()
    assert written.load_options["special_tokens"] == {"<|endoftext|>": 50256}
    assert any("'<|endoftext|>'=50256" in note for note in written.notes)
    assert written.files == [str(tmp_path / "g.tiktoken")]


@pytest.mark.parametrize("name, filename, reason", [
    ("roberta-base", "tokenizer.json", "added token '<mask>' (id 50264) has lstrip"),
    ("falcon", "tokenizer.json", "the pre-tokenizer Sequence[Punctuation, ByteLevel, Digits, Split] is not one regex"),
    ("clip", "tokenizer.json", "a normalizer (Sequence[NFC, Replace, Lowercase])"),
    ("phi-3-mini", "tokenizer.json", "not a byte-level BPE"),
])
def test_refusals_name_their_reason(tmp_path, name, filename, reason):
    with pytest.raises(ConversionRefused) as caught:
        write_tiktoken(str(fixture_path(name, filename)), str(tmp_path / "out.tiktoken"))
    assert any(r.startswith(reason) for r in caught.value.reasons), caught.value.reasons
    assert not (tmp_path / "out.tiktoken").exists()


@pytest.mark.parametrize("name, filename", [
    ("whisper-gpt2-tiktoken", "gpt2.tiktoken"),
    ("cl100k_base-tiktoken", "cl100k_base.tiktoken"),
])
def test_a_rank_file_is_written_back_byte_for_byte(tmp_path, name, filename):
    source = fixture_path(name, filename)
    written = write_tiktoken(str(source), str(tmp_path / "out.tiktoken"))
    assert (tmp_path / "out.tiktoken").read_bytes() == source.read_bytes()
    known = polytok.load(source)
    assert written.load_options["pattern"] == known.facts.pattern
    assert written.load_options["special_tokens"] == dict(known.added.content_to_id)


def gguf_rows(name: str) -> list[dict]:
    with gzip.open(GOLDEN / f"{name}.jsonl.gz", "rt", encoding="utf-8") as lines:
        return [json.loads(line) for line in lines][1:]


def test_gguf_gpt2_gives_llama_cpp_ids(tmp_path):
    written = write_tiktoken(str(gguf_vocab_path("gpt-2")), str(tmp_path / "gpt2.tiktoken"))
    enc = tiktoken_of(written)
    rows = [row for row in gguf_rows("gpt-2") if row["parse_special"]]
    assert rows
    for row in rows:  # llama.cpp's gpt-2 vocabulary adds no BOS: add_special changes nothing
        assert enc.encode(row["text"], allowed_special="all") == row["ids"], row["name"]


def test_gguf_refusal(tmp_path):
    with pytest.raises(ConversionRefused) as caught:
        write_tiktoken(str(gguf_vocab_path("falcon")), str(tmp_path / "out.tiktoken"))
    assert caught.value.reasons == ["pre type 'falcon' runs 3 regexes one after another: tiktoken takes one"]


# --- tiny vocabularies: one rule each --------------------------------------------------------------

def tiny(tmp_path: Path, extra: list[str], merges: list[tuple[str, str]], *, ignore_merges: bool = False) -> Path:
    """A byte-level BPE tokenizer.json: the 256 bytes at their byte values, then `extra` from id 256."""
    vocab = {BYTES_TO_CHARS[b]: b for b in range(256)}
    vocab.update({token: 256 + i for i, token in enumerate(extra)})
    data = {
        "version": "1.0", "truncation": None, "padding": None, "added_tokens": [], "normalizer": None,
        "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True},
        "post_processor": None, "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True,
                                            "use_regex": True},
        "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
                  "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False,
                  "ignore_merges": ignore_merges, "vocab": vocab, "merges": [list(m) for m in merges]},
    }
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def ranks_as_ids(source: Path) -> tiktoken.Encoding:
    """tiktoken over the source's own ids as ranks (what a refused conversion would have written)."""
    vocab = json.loads(source.read_text(encoding="utf-8"))["model"]["vocab"]
    table = {c: b for b, c in enumerate(BYTES_TO_CHARS)}
    ranks = {bytes(table[c] for c in piece): id_ for piece, id_ in vocab.items()}
    return tiktoken.Encoding("ids", pat_str=R50K, mergeable_ranks=ranks,
                             special_tokens={})


def refusal(source: Path, tmp_path: Path) -> list[str]:
    with pytest.raises(ConversionRefused) as caught:
        write_tiktoken(str(source), str(tmp_path / "out.tiktoken"))
    return caught.value.reasons


def differs(source: Path, text: str) -> bool:
    return hf_tokenizer(source).encode(text, add_special_tokens=False).ids != ranks_as_ids(source).encode(text)


def test_merges_out_of_their_results_id_order_are_refused(tmp_path):
    source = tiny(tmp_path, ["ab", "bc"], [("b", "c"), ("a", "b")])
    assert refusal(source, tmp_path) == [
        "merge #1 'a' + 'b' makes id 256 but comes after merge #0 'b' + 'c', which makes id 257: tiktoken "
        "applies merges in the order of their results' ids"]
    assert differs(source, "abc")


def test_a_token_tiktoken_makes_from_a_pair_the_source_never_merges_is_refused(tmp_path):
    source = tiny(tmp_path, ["ab", "bc", "abc"], [("a", "b"), ("b", "c"), ("a", "bc")])
    assert refusal(source, tmp_path) == [
        "token 'abc' (id 258): tiktoken makes it from 'ab' + 'c', which the source never merges"]
    assert differs(source, "abc")


def test_a_token_made_by_no_merge_needs_ignore_merges(tmp_path):
    source = tiny(tmp_path, ["xyz"], [])
    assert refusal(source, tmp_path) == [
        "token 'xyz' (id 256) is made by no merge from its own bytes: tiktoken gives it for a piece of exactly "
        "those bytes, the source (ignore_merges false) does not"]
    assert differs(source, "xyz")
    source = tiny(tmp_path, ["xyz"], [], ignore_merges=True)
    check_against_hf(source, tmp_path / "ok.tiktoken", ["xyz", " xyz", "xyzw xyz", "xxyz"])


def test_a_merge_that_never_fires_may_stand_anywhere(tmp_path):
    # 'xyz' is never made by merging, so 'xyz' + 'a' (id 257, listed before id 256's merge) never fires
    source = tiny(tmp_path, ["ab", "xyz", "xyza"], [("xyz", "a"), ("a", "b")], ignore_merges=True)
    check_against_hf(source, tmp_path / "ok.tiktoken", ["xyza", "xyzab", "ab xyz", "abab", "xyz"])


def test_several_merges_to_one_result_fire_only_as_tiktoken_makes_it(tmp_path):
    # 'abc' from 'ab' + 'c' (tiktoken's pair: 'ab' ranks below 'bc') and from 'a' + 'bc', listed first
    source = tiny(tmp_path, ["ab", "bc", "abc"], [("a", "b"), ("b", "c"), ("a", "bc"), ("ab", "c")])
    check_against_hf(source, tmp_path / "ok.tiktoken", ["abc", "abcabc", "bcabc", "aabc", "abbc"])


def test_a_merge_into_a_special_token_is_refused(tmp_path):
    source = tiny(tmp_path, ["ab"], [("a", "b")])
    data = json.loads(source.read_text(encoding="utf-8"))
    data["added_tokens"] = [{"id": 256, "content": "ab", "single_word": False, "lstrip": False, "rstrip": False,
                             "normalized": False, "special": True}]
    source.write_text(json.dumps(data), encoding="utf-8")
    assert refusal(source, tmp_path) == [
        "merge #0 'a' + 'b' involves 'ab', whose id 256 is a special token's: tiktoken never merges into or out "
        "of a special token"]


def random_vocabulary(rng: random.Random) -> tuple[list[str], list[tuple[str, str]], bool]:
    """Tokens over 'a' and 'b' made by random merges, other splits of them added, then listed by result
    id with ties shuffled and, now and then, two neighbours swapped."""
    extra: list[str] = []
    merges: list[tuple[str, str]] = []
    for _ in range(rng.randint(2, 9)):
        left, right = rng.choice(["a", "b", *extra]), rng.choice(["a", "b", *extra])
        if len(left + right) <= 6:
            if left + right not in extra:
                extra.append(left + right)
            merges.append((left, right))
    known = {"a", "b", *extra}
    for token in extra:
        cut = rng.randint(1, len(token) - 1)
        if rng.random() < 0.5 and token[:cut] in known and token[cut:] in known:
            merges.append((token[:cut], token[cut:]))
    rng.shuffle(merges)
    merges.sort(key=lambda m: extra.index(m[0] + m[1]))
    merges = list(dict.fromkeys(merges))
    if rng.random() < 0.2 and len(merges) > 1:
        i = rng.randrange(len(merges) - 1)
        merges[i], merges[i + 1] = merges[i + 1], merges[i]
    return extra, merges, rng.random() < 0.5


def test_random_vocabularies_written_give_hf_ids(tmp_path):
    """Whatever is written tokenizes as HF does (refusals may be stricter than needed)."""
    rng = random.Random(7)
    written = 0
    for case in range(300):
        extra, merges, ignore_merges = random_vocabulary(rng)
        folder = tmp_path / str(case)
        folder.mkdir()
        source = tiny(folder, extra, merges, ignore_merges=ignore_merges)
        try:
            write_tiktoken(str(source), str(folder / "out.tiktoken"))
        except ConversionRefused:
            continue
        written += 1
        hf, enc = hf_tokenizer(source), ranks_as_ids(source)
        for n in range(1, 14):
            for _ in range(6):
                text = "".join(rng.choice("ab") for _ in range(n))
                assert enc.encode(text) == hf.encode(text).ids, (extra, merges, ignore_merges, text)
    assert written > 100


def test_an_added_token_over_another_vocabulary_token_is_refused(tmp_path):
    source = tiny(tmp_path, ["ab"], [("a", "b")])
    data = json.loads(source.read_text(encoding="utf-8"))
    data["added_tokens"] = [{"id": 256, "content": "<|x|>", "single_word": False, "lstrip": False, "rstrip": False,
                             "normalized": False, "special": True}]
    source.write_text(json.dumps(data), encoding="utf-8")
    assert refusal(source, tmp_path) == [
        "token 'ab' has id 256, which the added token '<|x|>' takes: tiktoken keeps one token an id"]


def test_a_file_that_is_no_tokenizer_is_a_format_error_naming_it(tmp_path):
    source = tmp_path / "tokenizer.json"
    source.write_text('{"version": "1.0"}', encoding="utf-8")
    with pytest.raises(polytok.FormatError) as caught:
        write_tiktoken(str(source), str(tmp_path / "out.tiktoken"))
    assert caught.value.file == str(source) and caught.value.key == "model"
