"""polytok.convert.gguf_to_hf: a GGUF vocabulary written as a HF folder tokenizes as llama.cpp.

Expected ids and detokenized bytes are llama.cpp's (tests/golden/gguf/<name>.jsonl.gz,
llama-cpp-python 0.3.36, see test_gguf_parity.py); the written tokenizer.json is loaded
by HF tokenizers 0.23.3 live. llama.cpp's parse_special=False is HF's
``encode_special_tokens=True``; its detokenize (remove_special, unparse_special) =
(False, True) is ``decode(skip_special_tokens=False)``, (True, False) is
``skip_special_tokens=True``. A vocabulary whose llama.cpp behaviour has no
tokenizer.json form is refused, and the reasons are asserted. Crafted texts (the
Unicode rules of the regex rewrite) are compared with polytok reading the GGUF,
the pure-Python reproduction of llama.cpp that test_gguf_parity.py holds to the goldens.
"""

from __future__ import annotations

import base64
import gzip
import json
from pathlib import Path

import pytest
from fixtures import gguf_vocab_path

import polytok
from polytok.convert.gguf_to_hf import write_hf_folder
from polytok.convert.gguf_to_hf_pipeline import decode_differences
from polytok.convert.gguf_to_hf_specials import overlapping_entries
from polytok.convert.outcome import ConversionRefused

tokenizers = pytest.importorskip("tokenizers")

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "gguf"
NAMES = sorted(p.name.removesuffix(".jsonl.gz") for p in GOLDEN.glob("*.jsonl.gz"))

# vocabulary -> a phrase of each reason its conversion is refused for
REFUSED = {
    "bert-bge": ["strip_accents", "lowercase", "no tokenizer.json puts a mark before every word"],
    "falcon": ["'>>TITLE<<' and '<|endoftext|>' overlap"],
    "nomic-bert-moe": ["UGM", "strip the whitespace beside them"],
    "phi-3": ["64 special tokens"],
}
EXACT = [name for name in NAMES if name not in REFUSED]
# the default run: byte-level BPE with clean_spaces (gpt-2); code-point regexes whose classes span
# non-ASCII whitespace and user-defined entries in the byte alphabet (deepseek-coder)
QUICK = ["deepseek-coder", "gpt-2"]


def golden_rows(name: str) -> list[dict]:
    with gzip.open(GOLDEN / f"{name}.jsonl.gz", "rt", encoding="utf-8") as lines:
        return [json.loads(line) for line in lines][1:]


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    """name -> (GGUF path, HF Tokenizer of the written folder, folder); forced for refused ones."""
    cache: dict[str, tuple[Path, object, Path]] = {}

    def get(name: str):
        if name not in cache:
            source = gguf_vocab_path(name)
            out = tmp_path_factory.mktemp(name)
            write_hf_folder(str(source), str(out), force=name in REFUSED)
            cache[name] = (source, tokenizers.Tokenizer.from_file(str(out / "tokenizer.json")), out)
        return cache[name]

    return get


def first_space_kept(tok, ids: list[int], skip: bool, got: str, expected: str) -> bool:
    """The decode difference `decode_differences` names: the first token renders empty (a special
    one when skipping them) and llama.cpp keeps the space the decoder's Strip removes."""
    return bool(ids) and tok.decode(ids[:1], skip_special_tokens=skip) == "" and expected == " " + got


def mismatches(tok, rows: list[dict], *, decode: bool = True, first_space: list | None = None) -> list[str]:
    """Rows whose ids or decoded texts differ from llama.cpp's; with `first_space` (a list) the named
    decode difference is collected there instead."""
    bad = []
    for row in rows:
        tok.encode_special_tokens = not row["parse_special"]
        got = tok.encode(row["text"], add_special_tokens=row["add_special"]).ids
        if got != row["ids"]:
            bad.append(f"{row['name']} add_special={row['add_special']} parse_special={row['parse_special']}: "
                       f"{got[:16]} != {row['ids'][:16]}")
        for key, skip in (("detok_keep", False), ("detok_skip", True)):
            if decode and key in row:
                expected = base64.b64decode(row[key]).decode("utf-8", "replace")
                got_text = tok.decode(row["ids"], skip_special_tokens=skip)
                if got_text != expected and first_space is not None and first_space_kept(
                        tok, row["ids"], skip, got_text, expected):
                    first_space.append((row["name"], skip, row["ids"][0]))
                elif got_text != expected:
                    bad.append(f"{row['name']} decode(skip_special_tokens={skip}): {got_text[:60]!r} != "
                               f"{expected[:60]!r}")
    return bad


def check_goldens(name: str, written, *, decode: bool = True) -> list:
    """Assert the written folder gives llama.cpp's ids (and decoded texts) on every golden row, but
    for the decode difference the conversion names; return the rows showing that difference."""
    source, tok, _ = written(name)
    rows = golden_rows(name)
    named = decode_differences(polytok.formats.gguf.read_gguf_vocab(source))
    first_space: list = []
    bad = mismatches(tok, rows, decode=decode, first_space=first_space if named else None)
    assert not bad, f"{name}: {len(bad)} of {len(rows)} rows differ from llama.cpp:\n" + "\n".join(bad[:8])
    return first_space


@pytest.mark.parametrize("name", QUICK)
def test_written_folder_tokenizes_as_llama_cpp(name, written):
    check_goldens(name, written)


@pytest.mark.slow
@pytest.mark.parametrize("name", EXACT)
def test_every_exact_vocabulary_tokenizes_as_llama_cpp(name, written):
    check_goldens(name, written)


def test_the_goldens_split_into_exact_and_refused():
    assert len(NAMES) == 19 and set(REFUSED) <= set(NAMES)


@pytest.mark.parametrize("name", [pytest.param(n, marks=() if n in ("bert-bge", "phi-3") else pytest.mark.slow)
                                  for n in sorted(REFUSED)])
def test_refused_vocabulary_names_each_reason_and_writes_nothing(name, tmp_path):
    source = gguf_vocab_path(name)
    with pytest.raises(ConversionRefused) as refused:
        write_hf_folder(str(source), str(tmp_path / "out"))
    reasons = refused.value.reasons
    for phrase in REFUSED[name]:
        assert any(phrase in reason for reason in reasons), (phrase, reasons)
    assert len(reasons) == len(REFUSED[name]), reasons
    assert refused.value.target == "hf" and not (tmp_path / "out").exists()


def test_spm_ids_equal_llama_cpp_and_decode_differs_only_as_named(written):
    """llama-spm is written: its ids are llama.cpp's in every mode (the Prepend per piece, the
    score-ranked merges with the tied whitespace runs ranked longest-first, byte fallback, the
    special tokens), and its decoded texts too, but for the rows starting with the BOS decoded
    with skip_special_tokens, where llama.cpp keeps the first space."""
    first_space = check_goldens("llama-spm", written)
    assert first_space and {(skip, first) for _, skip, first in first_space} == {(True, 1)}


@pytest.mark.slow
@pytest.mark.parametrize("name", ["falcon", "phi-3"])
def test_forced_ids_equal_llama_cpp_where_only_decode_or_rare_inputs_differ(name, written):
    check_goldens(name, written)


def test_spm_decode_differs_only_by_the_first_space(written):
    """The named decode difference, shown: llama.cpp keeps the space after a BOS that remove_special
    dropped (golden ``[1, 259]`` -> ``"  "``) and strips it without a BOS; one decoder cannot do both,
    and the written one strips it."""
    source, tok, _ = written("llama-spm")
    row = next(r for r in golden_rows("llama-spm") if r["name"] == "whitespace-001" and "detok_skip" in r)
    expected = base64.b64decode(row["detok_skip"]).decode("utf-8")
    assert row["ids"][0] == 1 and tok.decode(row["ids"], skip_special_tokens=True) == expected[1:]
    reference = polytok.load(source)
    assert tok.decode(row["ids"][1:], skip_special_tokens=True) == reference.decode(row["ids"][1:]) == " "


def test_forced_strip_flags_are_written(written):
    """phi-3's RSTRIP entries (a name rule of llama.cpp) keep their flag in the forced folder."""
    _, _, out = written("phi-3")
    data = json.loads((out / "tokenizer.json").read_text(encoding="utf-8"))
    flags = {t["content"]: (t["lstrip"], t["rstrip"]) for t in data["added_tokens"]}
    assert flags["<|end|>"] == (False, True) and flags["</s>"] == (False, True)
    assert flags["<s>"] == (False, False) and flags["<unk>"] == (False, False)


# texts for the rules of the regex rewrite: non-ASCII whitespace inside classes that span it
# (llama.cpp sees \x0b there), letters assigned after Unicode 15.1 (llama.cpp's table says
# "other"), contractions with a long s, '$' at the end, ASCII \s \d \b against wide spaces and
# non-ASCII digits, case categories, marks
CRAFTED = ["a\u3000b", "x \u3000\u3002y", "\u2028\u3000\u2029 z", "\u1c89\u1c8a 1\u1c89a", "Ab\u1c89c d\u1c89 \u1c89",
           "a \n", "x  \u3000\n", "'\u017f 'S 's 'LL", "\u00fc\u3000\u00fc", "\u300c\u30c6\u30b9\u30c8\u300d\u3000x",
           "\u00a0\u00a0a", "\ud55c\uad6d\uc5b4 \u3000\ud55c", "\u0915\u094d\u0937 \U00011f00\U00011f41",
           "a\u0301 e\u0300", "Hello World123456 don't\n\n  x\t\ty", "HTTPServer getURL \u00fcber \u00dcBER",
           "1,234,567 12345 \u0661\u0662\u0663\u0664 \uff14\uff15\uff16\uff17", "<sentinel:12>IMGIMGABZ",
           "\u4f60\u597d\u4e16\u754c \u3053\u3093\u306b\u3061\u306f \uc548\ub155", "x_1 \u00b2\u00bd3 a1b2"]


def test_every_pre_type_splits_as_llama_cpp():
    """Each distinct regex list of llama.cpp's pre types, rewritten, cuts the crafted texts into
    the pieces `LlamaRegexSplit` (polytok's reproduction of unicode_regex_split) gives."""
    from polytok.convert.gguf_to_hf_regex import onig_regex
    from polytok.pre_tokenizers.llama_pre_types import PRE_TYPES
    from polytok.pre_tokenizers.llama_regex_split import LlamaRegexSplit

    refused, bad = set(), []
    for regexes in dict.fromkeys(p.regexes for p in PRE_TYPES.values()):
        patterns = [onig_regex(r) for r in regexes]
        if any(reasons for _, reasons in patterns):
            refused.update(name for name, p in PRE_TYPES.items() if p.regexes == regexes)
            continue
        hf = tokenizers.pre_tokenizers.Sequence(
            [tokenizers.pre_tokenizers.Split(tokenizers.Regex(p), "isolated") for p, _ in patterns])
        reference = LlamaRegexSplit(regexes, byte_encode=False)
        for text in CRAFTED:
            got = [piece for piece, _ in hf.pre_tokenize_str(text)]
            if got != reference.pre_tokenize(text):
                bad.append(f"{regexes[0][:40]!r}: {text!r}: {got} != {reference.pre_tokenize(text)}")
    assert not bad, "\n".join(bad[:5])
    assert refused == {"tiny_aya", "kimi-k2", "afmoe", "cohere2moe"}  # hand-written splitters, not regexes


@pytest.mark.slow
@pytest.mark.parametrize("name", ["deepseek-llm", "deepseek-coder", "qwen35", "llama-bpe"])
def test_crafted_texts_encode_as_llama_cpp(name, written):
    source, tok, _ = written(name)
    reference = polytok.load(source)
    tok.encode_special_tokens = True
    for text in CRAFTED:
        assert tok.encode(text, add_special_tokens=False).ids == reference.encode(
            text, add_special=False, special="text"), repr(text)


def test_user_defined_entry_in_the_byte_alphabet_decodes_to_its_text(written):
    """llama.cpp renders a user-defined entry as its text; HF's ByteLevel decoder would read 'õ' as byte 0xF5."""
    source, tok, _ = written("deepseek-coder")
    reference = polytok.load(source)
    ids = reference.encode("x \u00f5\u00f7 y", add_special=False, special="text")
    assert tok.decode(ids, skip_special_tokens=False) == reference.decode(ids) == "x \u00f5\u00f7 y"


def test_clean_spaces_passes_on_decode(written):
    source, tok, _ = written("gpt-2")
    reference = polytok.load(source)
    for text in ["a ' b 's 're 't", "Hello ? world . x , y !", "it 's  . ' ' x", "don 't 'll 've 'm"]:
        ids = reference.encode(text, add_special=False, special="text")
        assert tok.decode(ids, skip_special_tokens=False) == reference.decode(ids), text


def test_overlapping_special_texts():
    assert overlapping_entries(["XY", "YZW"]) == ("XY", "YZW")
    assert overlapping_entries(["<a>", "<b>", "<a><b>"]) is None
    assert overlapping_entries(["abc", "bc"]) is None  # contained: both matchers take the longer


@pytest.mark.slow
def test_named_chat_templates_are_listed(written):
    source, _, out = written("command-r")
    config = json.loads((out / "tokenizer_config.json").read_text(encoding="utf-8"))
    names = [t["name"] for t in config["chat_template"]]
    assert names == ["default", "tool_use", "rag"]
    vocab = polytok.formats.gguf.read_gguf_vocab(source)
    assert config["chat_template"][1]["template"] == vocab.metadata["tokenizer.chat_template.tool_use"]
    start = vocab.token_ids["<|START_OF_TURN_TOKEN|>"]
    assert config["added_tokens_decoder"][str(start)]["special"] is False  # user-defined: always matched


def test_tokenizer_config_and_special_tokens_map(written):
    source, _, out = written("phi-3")
    config = json.loads((out / "tokenizer_config.json").read_text(encoding="utf-8"))
    vocab = polytok.formats.gguf.read_gguf_vocab(source)
    assert config["chat_template"] == vocab.metadata["tokenizer.chat_template"]
    assert (config["bos_token"], config["eos_token"], config["unk_token"], config["pad_token"]) == (
        "<s>", "<|endoftext|>", "<unk>", "<|endoftext|>")
    assert config["add_bos_token"] is True and config["add_eos_token"] is False
    assert config["clean_up_tokenization_spaces"] is False
    decoder = config["added_tokens_decoder"]
    assert decoder["1"] == {"content": "<s>", "single_word": False, "lstrip": False, "rstrip": False,
                            "normalized": False, "special": True}
    # '</s>' is user-defined in the file and made CONTROL (an EOG text) by llama.cpp: parsed only as special
    assert decoder["2"]["special"] is True and decoder["2"]["rstrip"] is True
    special_map = json.loads((out / "special_tokens_map.json").read_text(encoding="utf-8"))
    assert special_map["bos_token"]["content"] == "<s>" and set(special_map) == {
        "bos_token", "eos_token", "unk_token", "pad_token"}


SYNTHETIC = GOLDEN / "synthetic"
# the small GGUFs of llama.cpp's special-token rules, and what their conversion meets
SYNTHETIC_REFUSED = {"jina-mask": "strip the whitespace", "phi3-names": "strip the whitespace",
                     "rules": "'XY' and 'YZW' overlap", "unused-mask": "strip the whitespace"}


@pytest.mark.parametrize("name", sorted(p.name.removesuffix(".gguf") for p in SYNTHETIC.glob("*.gguf")))
def test_synthetic_special_token_rules(name, tmp_path):
    """EOG shapes, harmony's always-rendered tokens, LSTRIP/RSTRIP name rules, unused entries and
    overlapping special texts, against llama.cpp's goldens; a refused file's forced folder still
    gives llama.cpp's ids except where its reason shows (rules: ``XYZW``)."""
    source = SYNTHETIC / f"{name}.gguf"
    if name in SYNTHETIC_REFUSED:
        with pytest.raises(ConversionRefused) as refused:
            write_hf_folder(str(source), str(tmp_path))
        assert [SYNTHETIC_REFUSED[name] in r for r in refused.value.reasons] == [True]
    written_folder = write_hf_folder(str(source), str(tmp_path), force=name in SYNTHETIC_REFUSED)
    tok = tokenizers.Tokenizer.from_file(str(tmp_path / "tokenizer.json"))
    rows = [json.loads(line) for line in (SYNTHETIC / f"{name}.jsonl").read_text(encoding="utf-8").splitlines()][1:]
    bad = mismatches(tok, rows)
    if name == "rules":
        assert bad and all(b.startswith(next(r["name"] for r in rows if r["text"] == "XYZW")) for b in bad)
    else:
        assert not bad, "\n".join(bad[:5])
    assert sorted(Path(f).name for f in written_folder.files) == [
        "special_tokens_map.json", "tokenizer.json", "tokenizer_config.json"]


def tiny_gguf(path: Path, texts: list[str] | None = None, types: list[int] | None = None,
              extra: tuple = ()) -> Path:
    """A GPT-2 style vocabulary: the 256 byte symbols, an UNUSED entry, a control EOS, "ab" (merge
    "a b") and an entry outside the byte alphabet."""
    from formats.gguf_pack import ARRAY, INT32, STRING, pack_gguf
    from polytok.text.byte_alphabet import BYTES_TO_CHARS

    if texts is None:
        texts = list(BYTES_TO_CHARS) + ["[unused0]", "<|endoftext|>", "ab", "x\u203c"]
        types = [1] * 256 + [5, 3, 1, 1]
    kvs = [("general.architecture", STRING, "gpt2"), ("tokenizer.ggml.model", STRING, "gpt2"),
           ("tokenizer.ggml.pre", STRING, "gpt-2"), ("tokenizer.ggml.tokens", (ARRAY, STRING), texts),
           ("tokenizer.ggml.token_type", (ARRAY, INT32), types), ("tokenizer.ggml.merges", (ARRAY, STRING), ["a b"]),
           *extra]
    path.write_bytes(pack_gguf(kvs))
    return path


def test_unused_entries_decode_to_nothing(tmp_path):
    """An UNUSED-only entry is rendered empty by llama.cpp, a NORMAL one outside the byte alphabet
    as a marker; the decoder rewrites both."""
    source = tiny_gguf(tmp_path / "unused.gguf")
    write_hf_folder(str(source), str(tmp_path / "hf"))
    tok = tokenizers.Tokenizer.from_file(str(tmp_path / "hf" / "tokenizer.json"))
    reference = polytok.load(source)
    ids = [258, 256, 257, 98, 259]
    for skip in (False, True):
        assert tok.decode(ids, skip_special_tokens=skip) == reference.decode(ids, skip_special=skip)
    assert tok.decode(ids, skip_special_tokens=False) == "ab<|endoftext|>bx[UNK_BYTE_0xe280bcx\u203c]"


def test_merge_of_a_missing_symbol_and_plain_bos_are_refused(tmp_path):
    """A merge naming a byte symbol that is no entry (here 'a', 0x61: the missing byte itself is written,
    test_gguf_to_hf_unknown_chars.py), and an added BOS that is not a control token."""
    from formats.gguf_pack import BOOL, UINT32
    from polytok.text.byte_alphabet import BYTES_TO_CHARS

    texts = [c for c in BYTES_TO_CHARS if c not in ("a", BYTES_TO_CHARS[0xFF])] + ["b a"]
    with pytest.raises(ConversionRefused) as refused:
        write_hf_folder(str(tiny_gguf(tmp_path / "bytes.gguf", texts, [1] * len(texts))), str(tmp_path / "a"))
    assert [r.split(":")[0] for r in refused.value.reasons] == ["the merge 'a' 'b' names a text that is not a token"]
    plain_bos = (("tokenizer.ggml.bos_token_id", UINT32, 258), ("tokenizer.ggml.add_bos_token", BOOL, True))
    with pytest.raises(ConversionRefused) as refused:
        write_hf_folder(str(tiny_gguf(tmp_path / "bos.gguf", extra=plain_bos)), str(tmp_path / "b"))
    assert [r.split(":")[0] for r in refused.value.reasons] == ["the added BOS 258 'ab' is not a control token"]


@pytest.mark.parametrize("regex", ["\\s+$", "^ ?[a-z]+", "[a-z]+\\b", "\\d+"])
def test_anchors_and_boundaries_are_llama_cpps(regex):
    """ECMAScript's '^'/'$' anchor the chunk (Oniguruma's the line); '\\b' is ASCII in llama.cpp."""
    from polytok.convert.gguf_to_hf_regex import onig_regex
    from polytok.pre_tokenizers.llama_regex_split import LlamaRegexSplit

    pattern, reasons = onig_regex(regex)
    assert pattern is not None and not reasons
    hf = tokenizers.pre_tokenizers.Split(tokenizers.Regex(pattern), "isolated")
    reference = LlamaRegexSplit([regex], byte_encode=False)
    for text in ["a \nb \n", "x\ny z", "ab \u00e9t\u00e9 caf\u00e9", " \u00fcber \n over 12\u0663\u0664"]:
        assert [p for p, _ in hf.pre_tokenize_str(text)] == reference.pre_tokenize(text), repr(text)


def test_forced_wpm_ids_equal_llama_cpp_on_printable_ascii(written):
    """WPM is refused for its Unicode tables; on printable ASCII (where they agree) the forced
    folder's BertNormalizer, BertPreTokenizer, Metaspace word prefix and WordPiece over the
    phantom-space entries give llama.cpp's ids."""
    _, tok, _ = written("bert-bge")
    rows = [r for r in golden_rows("bert-bge") if all(" " <= c <= "~" or c in "\n\t" for c in r["text"])]
    assert len(rows) > 300
    bad = mismatches(tok, rows, decode=False)
    assert not bad, "\n".join(bad[:5])


def test_a_file_that_is_not_gguf_is_a_format_error(tmp_path):
    from polytok.errors import FormatError

    source = tmp_path / "not.gguf"
    source.write_bytes(b"GGUF\x03\x00\x00\x00" + b"\xff" * 12)
    with pytest.raises(FormatError, match="not.gguf"):
        write_hf_folder(str(source), str(tmp_path / "out"))
    assert not (tmp_path / "out").exists()


def test_spm_entries_the_decoder_would_render_otherwise_are_refused(tmp_path):
    """A NORMAL entry spelt ``<0xNN>`` (ByteFallback would make it a byte) and a control entry
    holding '▁' (the decoder's Replace would make it a space): llama.cpp renders both as text."""
    from formats.gguf_pack import ARRAY, FLOAT32, INT32, STRING, pack_gguf

    texts = ["<unk>", "<s>", "</s>", "<0x41>", "\u2581a", "a", "\u2581", "<ctl\u2581x>"]
    kvs = [("general.architecture", STRING, "llama"), ("tokenizer.ggml.model", STRING, "llama"),
           ("tokenizer.ggml.tokens", (ARRAY, STRING), texts),
           ("tokenizer.ggml.scores", (ARRAY, FLOAT32), [0.0, 0.0, 0.0, -1.0, -2.0, -3.0, -4.0, 0.0]),
           ("tokenizer.ggml.token_type", (ARRAY, INT32), [2, 3, 3, 1, 1, 1, 1, 3])]
    source = tmp_path / "spm.gguf"
    source.write_bytes(pack_gguf(kvs))
    with pytest.raises(ConversionRefused) as refused:
        write_hf_folder(str(source), str(tmp_path / "out"))
    heads = [r.split(":")[0] for r in refused.value.reasons]
    assert "token 7 '<ctl\u2581x>' is rendered as its text by llama.cpp, but the decoder turns its '\u2581' into " \
           "a space" in refused.value.reasons
    assert "token 3 '<0x41>' is not a BYTE token" in heads


def tiny_spm(path: Path, texts: list[str], scores: list[float], types: list[int] | None = None) -> Path:
    """An SPM vocabulary: <unk>, <s>, </s>, then `texts` with `scores` and `types` (NORMAL)."""
    from formats.gguf_pack import ARRAY, FLOAT32, INT32, STRING, pack_gguf

    kvs = [("general.architecture", STRING, "llama"), ("tokenizer.ggml.model", STRING, "llama"),
           ("tokenizer.ggml.tokens", (ARRAY, STRING), ["<unk>", "<s>", "</s>", *texts]),
           ("tokenizer.ggml.scores", (ARRAY, FLOAT32), [0.0, 0.0, 0.0, *scores]),
           ("tokenizer.ggml.token_type", (ARRAY, INT32), [2, 3, 3] + (types or [1] * len(texts)))]
    path.write_bytes(pack_gguf(kvs))
    return path


def test_tied_whitespace_runs_join_as_llama_cpp(tmp_path):
    """Runs of '▁' sharing one score (Llama-2's) are joined leftmost-first by llama.cpp: the merges
    (run, '▁'), longest run first, make HF's BPE give the same pieces for every run length."""
    runs = ["\u2581" * k for k in range(2, 6)]
    texts = ["\u2581", "a", "b", "\u2581a", "ab", *runs]
    source = tiny_spm(tmp_path / "runs.gguf", texts, [-1.0, -2.0, -3.0, -4.0, -5.0] + [-9.0] * len(runs))
    write_hf_folder(str(source), str(tmp_path / "hf"))
    tok = tokenizers.Tokenizer.from_file(str(tmp_path / "hf" / "tokenizer.json"))
    reference = polytok.load(source)
    for n in range(1, 14):
        for text in [" " * n, "a" + " " * n + "b", "ab" + " " * n, " " * n + "a " + " " * (n // 2) + "b"]:
            assert tok.encode(text, add_special_tokens=False).ids == reference.encode(
                text, add_special=False, special="text"), (n, text)


def test_equal_scores_no_ranking_follows_are_refused(tmp_path):
    """Every joinable entry with one score (gguf-py's LlamaHfVocab writes -1000 for all): llama.cpp
    joins 'a|b|a' as [ab, a] and 'b|a|b' as [ba, b]; HF's BPE ranks 'ab' or 'ba' first and joins
    one of the two texts otherwise."""
    source = tiny_spm(tmp_path / "ties.gguf", ["\u2581", "a", "b", "ab", "ba"], [-1000.0] * 5)
    with pytest.raises(ConversionRefused) as refused:
        write_hf_folder(str(source), str(tmp_path / "hf"))
    assert [r.split(":")[0] for r in refused.value.reasons] == ["2 entries (first 6 'ab') share the score -1000.0"]
    assert "of 'ab' and 'ba' HF joins the one ranked first in both 'aba' and 'bab'" in refused.value.reasons[0]
    write_hf_folder(str(source), str(tmp_path / "hf"), force=True)
    tok = tokenizers.Tokenizer.from_file(str(tmp_path / "hf" / "tokenizer.json"))
    reference = polytok.load(source)
    same = [tok.encode(text, add_special_tokens=False).ids == reference.encode(text, add_special=False)
            for text in ("aba", "bab")]
    assert sorted(same) == [False, True]


def test_tied_runs_beside_a_longer_run_of_another_score_are_refused(tmp_path):
    """The ranking of tied runs is proved for runs that all share the one score; a longer run
    scored otherwise (joined from tied runs) leaves the proof, and the tie is refused."""
    runs = ["\u2581" * k for k in range(2, 5)]
    texts = ["\u2581", "a", *runs, "\u2581" * 6]
    source = tiny_spm(tmp_path / "runs.gguf", texts, [-1.0, -2.0, -9.0, -9.0, -9.0, -3.0])
    with pytest.raises(ConversionRefused) as refused:
        write_hf_folder(str(source), str(tmp_path / "hf"))
    heads = [r.split(":")[0] for r in refused.value.reasons]
    assert heads == ["3 entries (first 5 '\u2581\u2581') share the score -9.0"]


def test_first_space_is_stripped_from_the_first_token_only(tmp_path):
    """llama.cpp strips one leading space from the first token's piece: an unused first token
    (rendered empty) takes the strip, a <0x20> or user-defined ' x' first token loses its space.
    The decoder's Metaspace step does the same; only a special first token skipped by
    skip_special_tokens differs (the named difference), where llama.cpp keeps the space."""
    texts = ["\u2581", "a", "\u2581a", "<0x20>", "[unused]", " x", "\u2581\u2581", " ", "x"]
    source = tiny_spm(tmp_path / "space.gguf", texts, [-1.0, -2.0, -3.0, 0.0, 0.0, 0.0, -4.0, -5.0, -6.0],
                      [1, 1, 1, 6, 5, 4, 1, 1, 1])
    written_folder = write_hf_folder(str(source), str(tmp_path / "hf"))
    assert any("skip_special_tokens whose first id is a CONTROL" in n for n in written_folder.notes)
    tok = tokenizers.Tokenizer.from_file(str(tmp_path / "hf" / "tokenizer.json"))
    reference = polytok.load(source)
    a, byte_space, unused, user, runs = 5, 6, 7, 8, 9
    for ids in ([unused, a], [byte_space, 4], [user, a], [a, a], [runs, a], [a, byte_space, unused, a], [unused]):
        for skip in (False, True):
            assert tok.decode(ids, skip_special_tokens=skip) == reference.decode(ids, skip_special=skip), (ids, skip)
    assert tok.decode([unused, a]) == " a" and tok.decode([user, a]) == "x a" and tok.decode([runs]) == " "
    for special in (1, 2):
        assert tok.decode([special, a], skip_special_tokens=False) == reference.decode([special, a], skip_special=False)
        assert reference.decode([special, a], skip_special=True) == " a"
        assert tok.decode([special, a], skip_special_tokens=True) == "a"
