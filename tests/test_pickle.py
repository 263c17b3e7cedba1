"""Every tokenizer pickles: unpickled in a fresh ``spawn`` process, with its source file gone,
it gives the reference engine's ids and decode.

Each test takes every fixture of its format(s) through `pickle_harness.run`: a copy of the
files is loaded, pickled before any encode and after a warm-up that fills every cache (the two
pickles must be the same size: caches are not pickled), and deleted; one process per test,
started with the ``spawn`` method, unpickles them all, runs the calls and must open no file.

Expected values come from the reference engines as the parity tests get them, never from polytok:

- tokenizer.json (every fixture, plus synthetic files for the component types no fixture has,
  written by HF's own classes) and the built-in gpt2: HF tokenizers 0.23.3, live;
- vocab.json + merges.txt and vocab.txt: transformers 5.24.0 GPT2TokenizerFast / BertTokenizerFast;
- RWKV world vocabulary: rwkv 0.8.32 TRIE_TOKENIZER;
- .model (the real files and tests/data/sentencepiece, BPE, UNIGRAM, WORD and CHAR; the model
  folders of tests/data/convert that redefine pieces): sentencepiece 0.2.3;
- tiktoken ranks: tiktoken 0.14.0 (pattern and special tokens of the known-file table, as
  test_tiktoken_parity); tekken.json: mistral-common 1.13.1's Tekkenizer;
- GGUF: llama.cpp's outputs frozen by tools/gen_llama_goldens.py (llama-cpp-python 0.3.36):
  the 19 vocabularies of the llama-cpp-python sdist (SPM, BPE, WPM, UGM) and the synthetic
  special-rule files; RWKV and PLaMo-2 as the synthetic vocabularies of tests/models, whose
  llama.cpp ids are recorded there.

One property is not against a reference: every llama.cpp pre type (``llama_pre_types``), on a
small byte-level vocabulary relabelled with each name, gives the same pieces and ids unpickled
as the same file loaded fresh (llama.cpp's own splits of each pre type are pinned by
tests/pre_tokenizers; this checks only that the pickled copy is the same tokenizer).
"""

from __future__ import annotations

import base64
import functools
import gzip
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from fixtures import ALL_HF_JSON, GGUF_VOCAB_NAMES, REPO_ROOT, edge_cases, fixture_path, gguf_vocab_path, sha256_file
from pickle_harness import RAISES, Case, call, reference, run

import polytok

GOLDEN = REPO_ROOT / "tests" / "golden" / "gguf"
SPM_DATA = REPO_ROOT / "tests" / "data" / "sentencepiece"


def _available(name: str, files: list[str]) -> dict[str, Path] | None:
    """{file: path} of a fixture's files, or None when one of them cannot be had here."""
    try:
        return {f: fixture_path(name, f) for f in files}
    except pytest.skip.Exception:
        return None


@functools.cache
def _texts() -> tuple[str, ...]:
    """A few edge texts: the first of each category, two more with special markers, a plain one."""
    by_category: dict[str, list[str]] = {}
    for case in edge_cases():
        by_category.setdefault(case.category, []).append(case.text)
    markers = by_category.get("special_markers", [])[1:3]
    return (*(texts[0] for texts in by_category.values()), *markers, "Hello world, it's 2024!\n\n  x")


# --- tokenizer.json and the built-in gpt2: HF tokenizers ----------------------------------


def _hf_ids(ref: Any, text: str, add: bool, mode: str) -> Any:
    ref.encode_special_tokens = mode == "text"
    try:
        return reference(lambda: ref.encode(text, add_special_tokens=add).ids)
    finally:
        ref.encode_special_tokens = False


def _hf_case(label: str, files: dict[str, Path], target: str, ref: Any, extra: tuple[str, ...] = ()) -> Case:
    added = sorted(ref.get_added_tokens_decoder().items())[:3]
    texts = [*_texts(), *extra, *(f"x{token.content} {token.content}y" for _, token in added)]
    case = Case(label, files, target)
    for text in texts:
        for add, mode in ((True, "parse"), (False, "text")):
            ids = _hf_ids(ref, text, add, mode)
            case.add(("encode", text, add, mode), ids)
            if add and ids is not RAISES:
                for skip in (False, True):
                    case.add(("decode", ids, skip), ref.decode(ids, skip_special_tokens=skip))
    return case


def _synthetic_hf_files(folder: Path) -> dict[str, Path]:
    """tokenizer.json files, trained and written by HF tokenizers, for the component types and
    BPE options that no fixture has: NFD, Nmt and ByteLevel normalizers; UnicodeScripts,
    CharDelimiterSplit and FixedLength pre-tokenizers; BertProcessing and Sequence
    post-processors; CTC and BPEDecoder decoders; continuing_subword_prefix, end_of_word_suffix."""
    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers

    corpus = [case.text for case in edge_cases()] * 3
    first = Tokenizer(models.BPE(unk_token="[UNK]", continuing_subword_prefix="##"))
    first.normalizer = normalizers.Sequence([normalizers.NFD(), normalizers.Nmt()])
    first.pre_tokenizer = pre_tokenizers.Sequence([pre_tokenizers.UnicodeScripts(),
                                                   pre_tokenizers.CharDelimiterSplit("x")])
    first.train_from_iterator(corpus, trainers.BpeTrainer(
        vocab_size=600, special_tokens=["[UNK]", "[CLS]", "[SEP]", "<pad>"], continuing_subword_prefix="##"))
    first.post_processor = processors.BertProcessing(("[SEP]", first.token_to_id("[SEP]")),
                                                     ("[CLS]", first.token_to_id("[CLS]")))
    first.decoder = decoders.CTC(pad_token="<pad>")
    second = Tokenizer(models.BPE(end_of_word_suffix="</w>"))
    second.normalizer = normalizers.ByteLevel()
    second.pre_tokenizer = pre_tokenizers.FixedLength(length=5)
    second.train_from_iterator(corpus, trainers.BpeTrainer(
        vocab_size=700, special_tokens=["<s>"], end_of_word_suffix="</w>",
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    second.post_processor = processors.Sequence([
        processors.ByteLevel(trim_offsets=False),
        processors.TemplateProcessing(single="<s> $A", special_tokens=[("<s>", second.token_to_id("<s>"))])])
    second.decoder = decoders.BPEDecoder(suffix="</w>")
    paths = {"components-nfd-scripts-ctc": first, "components-bytelevel-fixed-bpedecoder": second}
    for name, tokenizer in paths.items():
        (folder / name).mkdir(parents=True)
        tokenizer.save(str(folder / name / "tokenizer.json"))
    return {name: folder / name / "tokenizer.json" for name in paths}


def _duplicate_merges_file(folder: Path) -> Path:
    """A BPE whose merges list ``b c`` twice: HF ranks it by its last line, so ``abc`` is ``abc``
    and ``bcd`` is ``b cd`` (by its first line they would be ``a bc`` and ``bc d``). A pickle taken
    after the pair ranks were built must give the lines back as they were."""
    vocab = {"[UNK]": 0, "a": 1, "b": 2, "c": 3, "d": 4, "bc": 5, "ab": 6, "cd": 7, "abc": 8}
    merges = ["b c", "a b", "c d", "b c", "ab c"]
    doc = {"version": "1.0", "added_tokens": [], "normalizer": None,
           "pre_tokenizer": {"type": "Whitespace"}, "post_processor": None, "decoder": None,
           "model": {"type": "BPE", "unk_token": "[UNK]", "fuse_unk": True, "vocab": vocab, "merges": merges}}
    path = folder / "duplicate-merges.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def test_tokenizer_json_pickles(tmp_path: Path) -> None:
    tokenizers = pytest.importorskip("tokenizers")
    cases = []
    for fixture in ALL_HF_JSON:
        files = _available(fixture.name, list(fixture.files))
        if files is not None:
            ref = tokenizers.Tokenizer.from_file(str(files[fixture.files[0]]))
            cases.append(_hf_case(fixture.name, files, fixture.files[0], ref))
    for name, path in _synthetic_hf_files(tmp_path / "synthetic").items():
        ref = tokenizers.Tokenizer.from_file(str(path))
        cases.append(_hf_case(name, {"tokenizer.json": path}, "tokenizer.json", ref))
    duplicates = _duplicate_merges_file(tmp_path)
    cases.append(_hf_case("bpe-duplicate-merges", {"tokenizer.json": duplicates}, "tokenizer.json",
                          tokenizers.Tokenizer.from_file(str(duplicates)), ("abc bcd abcd", "dcba cabc bcbc")))
    builtin = gzip.decompress(polytok.formats.BUILTIN["gpt2"].read_bytes()).decode("utf-8")
    cases.append(_hf_case("builtin-gpt2", {}, "gpt2", tokenizers.Tokenizer.from_str(builtin)))
    run(cases, tmp_path)


# --- vocab.json + merges.txt, vocab.txt (transformers), RWKV world (rwkv) ----------------


def _transformers_case(label: str, files: dict[str, Path], target: str, ref: Any, ref_as_text: Any,
                       texts: list[str]) -> Case:
    case = Case(label, files, target)
    for text in texts:
        for add in (True, False):
            ids = reference(lambda text=text, add=add: ref(text, add_special_tokens=add)["input_ids"])
            case.add(("encode", text, add, "parse"), ids)
            case.add(("encode", text, add, "text"),
                     reference(lambda text=text, add=add: ref_as_text(text, add_special_tokens=add)["input_ids"]))
            if add and ids is not RAISES:
                for skip in (False, True):
                    case.add(("decode", ids, skip), ref.decode(ids, skip_special_tokens=skip))
    return case


def _gpt2_vocab_cases(transformers: Any, work: Path) -> list[Case]:
    """GPT-2's vocab.json + merges.txt with its two config files (from_pretrained), and bare."""
    files = _available("gpt2", ["vocab.json", "merges.txt", "tokenizer_config.json", "special_tokens_map.json"])
    if files is None:
        return []
    reference = work / "gpt2-reference"  # the config files only: from_pretrained would prefer a tokenizer.json
    reference.mkdir()
    for name, path in files.items():
        shutil.copyfile(path, reference / name)
    texts = [*_texts(), "<|endoftext|>Hello<|endoftext|> x"]
    fast = transformers.GPT2TokenizerFast
    bare = {name: files[name] for name in ("vocab.json", "merges.txt")}
    plain = [str(bare["vocab.json"]), str(bare["merges.txt"])]
    return [
        _transformers_case("gpt2-vocab-folder", files, "", fast.from_pretrained(str(reference)),
                           fast.from_pretrained(str(reference), split_special_tokens=True), texts),
        _transformers_case("gpt2-vocab-bare", bare, "", fast(*plain), fast(*plain, split_special_tokens=True), texts),
    ]


def _rwkv_case(rwkv_tokenizer: Any) -> list[Case]:
    files = _available("rwkv-world-vocab", ["rwkv_vocab_v20230424.txt"])
    if files is None:
        return []
    path = files["rwkv_vocab_v20230424.txt"]
    ref = rwkv_tokenizer.TRIE_TOKENIZER(str(path))
    case = Case("rwkv-world", files, path.name)
    for text in _texts():
        ids = reference(ref.encode, text)
        case.add(("encode", text, True, "parse"), ids)
        case.add(("encode", text, False, "text"), ids)
        if ids is not RAISES:
            case.add(("decode", ids, False), ref.decode(ids))
    return [case]


def test_vocabulary_files_pickle(tmp_path: Path) -> None:
    transformers = pytest.importorskip("transformers")
    rwkv_tokenizer = pytest.importorskip("rwkv.rwkv_tokenizer")
    cases = _gpt2_vocab_cases(transformers, tmp_path)
    for name in ("bert-base-cased-vocab", "bert-chinese-vocab"):
        files = _available(name, ["vocab.txt"])
        if files is not None:
            path = str(files["vocab.txt"])
            cases.append(_transformers_case(
                name, files, "vocab.txt", transformers.BertTokenizerFast(path),
                transformers.BertTokenizerFast(path, split_special_tokens=True), [*_texts(), "[CLS] a [MASK]b[SEP]"]))
    cases += _rwkv_case(rwkv_tokenizer)
    run(cases, tmp_path)


# --- .model: sentencepiece -----------------------------------------------------------------

SPM_FILES = [("spm-botchan-bpe-1000", "spm.model"), ("spm-botchan-unigram-1000", "spm.model"),
             ("spm-kyoto-ja-unigram-8000", "spm.model"), ("spm-bpemb-en-100k", "spm.model"),
             ("spm-mistral-v1", "tokenizer.model"), ("spm-mistral-v2", "tokenizer.model"),
             ("spm-mistral-v3", "tokenizer.model"), ("spm-mistral-v7", "tokenizer.model"),
             ("marian-nmt", "vocab.joint.spm")]


def test_sentencepiece_models_pickle(tmp_path: Path) -> None:
    """The real .model files, every synthetic one of tests/data (BPE, UNIGRAM, WORD, CHAR) and
    the model folders that redefine pieces."""
    spm = pytest.importorskip("sentencepiece")
    sources = [(f"synthetic-{p.stem}", p) for p in sorted(SPM_DATA.glob("*.model"))]
    for name, filename in SPM_FILES:
        files = _available(name, [filename])
        if files is not None:
            sources.append((name, files[filename]))
    cases = []
    for label, path in sources:
        sp = spm.SentencePieceProcessor(model_file=str(path))
        case = Case(label, {path.name: path}, path.name)
        for text in _texts():
            ids = reference(sp.encode, text)  # sentencepiece's encode(t): no BOS/EOS, markers as text
            case.add(("encode", text, False, "text"), ids)
            if ids is not RAISES:
                case.add(("decode", ids, False), sp.decode(ids))
        cases.append(case)
    run(cases + _redefinition_cases(spm), tmp_path)


def _redefinition_cases(spm: Any) -> list[Case]:
    """The model folders whose config gives a piece a new text: each new text parses to the id
    of the piece it renames, read from sentencepiece (as test_convert_redefinitions)."""
    from formats.test_convert_redefinitions import ARCTIC, INTERN, SYNTHETIC

    cases = []
    for folder, renames in (("arctic", ARCTIC), ("internlm2", INTERN), ("llama-redefined", ARCTIC)):
        sp = spm.SentencePieceProcessor(model_file=str(SYNTHETIC / folder / "tokenizer.model"))
        case = Case(f"redefined-{folder}", {f.name: f for f in (SYNTHETIC / folder).iterdir()})
        for new, old in renames.items():
            case.add(("encode", new, True, "parse"), [sp.piece_to_id(old)])
        cases.append(case)
    return cases


# --- tiktoken ranks (tiktoken), tekken.json (mistral-common) -------------------------------

TIKTOKEN_FILES = [("cl100k_base-tiktoken", "cl100k_base.tiktoken"), ("whisper-gpt2-tiktoken", "gpt2.tiktoken"),
                  ("llama3-tiktoken", "tokenizer.model"), ("llama4-tiktoken", "tokenizer.model")]


def _tiktoken_case(tiktoken: Any, name: str, path: Path) -> Case:
    from tiktoken.load import load_tiktoken_bpe

    from polytok.formats.tiktoken_known import KNOWN_RANKS

    known = KNOWN_RANKS[sha256_file(path)]  # the parity test's reference: pattern and specials of the table
    ref = tiktoken.Encoding(known.name, pat_str=known.pattern, mergeable_ranks=load_tiktoken_bpe(str(path)),
                            special_tokens=known.special_tokens)
    specials = sorted(known.special_tokens, key=known.special_tokens.__getitem__)[:3]
    case = Case(name, {path.name: path}, path.name)
    for text in [*_texts(), *(f"x{s} {s}y{s[:-1]}" for s in specials)]:
        ids = reference(ref.encode, text, allowed_special="all")
        case.add(("encode", text, True, "parse"), ids)
        case.add(("encode", text, True, "text"), reference(ref.encode_ordinary, text))
        if ids is not RAISES:
            case.add(("decode", ids, False), ref.decode(ids))
    return case


def _tekken_case(name: str, path: Path) -> Case:
    import re

    from mistral_common.tokens.tokenizers.base import SpecialTokenPolicy
    from mistral_common.tokens.tokenizers.tekken import Tekkenizer

    ref = Tekkenizer.from_file(path)
    specials = [t["token_str"] for t in ref._all_special_tokens]  # as test_tekken_parity reads them
    ids_of = {s: ref.get_special_token(s) for s in specials}
    around = re.compile("(" + "|".join(map(re.escape, sorted(specials, key=len, reverse=True))) + ")")
    case = Case(name, {path.name: path}, path.name)
    for text in [*_texts(), *(f"x{s} {s}y{s[:-1]}" for s in specials[:3])]:
        for add in (True, False):
            ids = reference(ref.encode, text, bos=add, eos=False)
            case.add(("encode", text, add, "text"), ids)
        parsed = [ref.bos_id]  # "parse" has no Tekkenizer call: its ids between the special tokens (as the parity test)
        for index, part in enumerate(around.split(text)):
            parsed += [ids_of[part]] if index % 2 else ref.encode(part, bos=False, eos=False)
        case.add(("encode", text, True, "parse"), parsed)
        for skip, policy in ((False, SpecialTokenPolicy.KEEP), (True, SpecialTokenPolicy.IGNORE)):
            case.add(("decode", parsed, skip), ref.decode(parsed, special_token_policy=policy))
    return case


def test_tiktoken_and_tekken_pickle(tmp_path: Path) -> None:
    tiktoken = pytest.importorskip("tiktoken")
    pytest.importorskip("mistral_common")
    cases = []
    for name, filename in TIKTOKEN_FILES:
        files = _available(name, [filename])
        if files is not None:
            cases.append(_tiktoken_case(tiktoken, name, files[filename]))
    for name in ("tekken-240718", "tekken-240911"):
        files = _available(name, ["tekken.json"])
        if files is not None:
            cases.append(_tekken_case(name, files["tekken.json"]))
    run(cases, tmp_path)


# --- GGUF: llama.cpp's frozen outputs; every pre type against a fresh load ----------------


def _golden_rows(path: Path, every: bool) -> list[dict[str, Any]]:
    """The rows of a golden file (header left out): all of them, or those of the first text of each
    category and of the first three special-marker texts."""
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as lines:
        rows = [json.loads(line) for line in lines][1:]
    if every:
        return rows
    chosen: dict[str, list[str]] = {}
    for row in rows:
        names = chosen.setdefault(row["name"].rsplit("-", 1)[0], [])
        if row["name"] not in names:
            names.append(row["name"])
    keep = {names[0] for category, names in chosen.items() if not category.startswith("bench")}
    keep.update(chosen.get("special_markers", [])[:3])
    return [row for row in rows if row["name"] in keep]


def _gguf_golden_case(label: str, path: Path, rows: list[dict[str, Any]]) -> Case:
    case = Case(label, {path.name: path}, path.name)
    for row in rows:
        mode = "parse" if row["parse_special"] else "text"
        case.add(("encode", row["text"], row["add_special"], mode), row["ids"])
        for key, skip in (("detok_keep", False), ("detok_skip", True)):
            if key in row:
                case.add(("decode", row["ids"], skip), base64.b64decode(row[key]).decode("utf-8", "replace"))
    return case


def _write_gguf(path: Path, model: str, tokens: list[str], types: list[int], *, scores: list[float] | None = None,
                merges: list[str] | None = None, pre: str | None = None, unk_id: int | None = None) -> Path:
    import gguf

    writer = gguf.GGUFWriter(str(path), "llama")
    writer.add_tokenizer_model(model)
    if pre is not None:
        writer.add_tokenizer_pre(pre)
    writer.add_token_list(tokens)
    writer.add_token_types(types)
    if scores is not None:
        writer.add_token_scores(scores)
    if merges is not None:
        writer.add_token_merges(merges)
    if unk_id is not None:
        writer.add_unk_token_id(unk_id)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.close()
    return path


def _rwkv_plamo2_cases(work: Path) -> list[Case]:
    """The RWKV and PLaMo-2 vocabularies of tests/models as GGUF, with the llama.cpp ids recorded there."""
    from models.test_plamo2 import LLAMA_CPP as PLAMO2_IDS
    from models.test_plamo2 import VOCAB as PLAMO2_VOCAB
    from models.test_rwkv import LLAMA_CPP as RWKV_IDS
    from models.test_rwkv import TOKENS as RWKV_TOKENS

    files = [(f"rwkv-unk-{unk_id}", RWKV_IDS[unk_id], _write_gguf(
        work / f"rwkv-{unk_id}.gguf", "rwkv", RWKV_TOKENS, [3] + [1] * (len(RWKV_TOKENS) - 1), unk_id=unk_id))
        for unk_id in RWKV_IDS]
    files.append(("plamo2", PLAMO2_IDS, _write_gguf(
        work / "plamo2.gguf", "plamo2", [p for p, _, _ in PLAMO2_VOCAB], [k for _, _, k in PLAMO2_VOCAB],
        scores=[s for _, s, _ in PLAMO2_VOCAB])))
    cases = []
    for label, expected, path in files:
        case = Case(label, {path.name: path}, path.name)
        for text, ids in expected.items():
            case.add(("encode", text, True, "text"), ids)
        cases.append(case)
    return cases


def _pre_type_cases(work: Path) -> list[Case]:
    """A byte-level vocabulary (the 256 byte characters, then the merge of every pair of a few
    letters, digits and spaces, so the ids show where the words were cut) relabelled with each
    llama.cpp pre type; expected: the same file loaded fresh in this process."""
    from polytok.pre_tokenizers.llama_pre_types import PRE_TYPES

    chars = _byte_chars()
    common = [chars[ord(c)] for c in "aehlnorst0123 '\n"]
    merges = [f"{a} {b}" for a in common for b in common]
    tokens = chars + [m.replace(" ", "") for m in merges]
    texts = [*_texts(), "Hello世界abc's 12345 你好，世界！ こんにちは", "1 12 123 1234 12345 123456 don't WON'T"]
    cases = []
    for index, pre in enumerate(sorted(PRE_TYPES)):
        path = _write_gguf(work / f"pre-{index}.gguf", "gpt2", tokens, [1] * len(tokens), merges=merges, pre=pre)
        fresh = polytok.load(path)
        case = Case(f"pre-{pre}", {path.name: path}, path.name)
        for text in texts:
            for request in (("encode", text, True, "parse"), ("pieces", text)):
                case.add(request, call(fresh, request))
        cases.append(case)
    return cases


def _byte_chars() -> list[str]:
    import importlib.util

    maker_path = REPO_ROOT / "tools" / "make_synthetic_gguf.py"
    spec = importlib.util.spec_from_file_location("make_synthetic_gguf", maker_path)
    assert spec is not None and spec.loader is not None
    maker = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(maker)
    return maker.byte_chars()  # type: ignore[no-any-return]


def test_gguf_pickles(tmp_path: Path) -> None:
    """Every vocabulary type (SPM, BPE, WPM, UGM, RWKV, PLaMo-2) and every pre type."""
    pytest.importorskip("gguf")
    cases = []
    for name in GGUF_VOCAB_NAMES:
        golden = GOLDEN / f"{name}.jsonl.gz"
        if golden.is_file():
            cases.append(_gguf_golden_case(f"vocab-{name}", gguf_vocab_path(name), _golden_rows(golden, every=False)))
    for golden in sorted((GOLDEN / "synthetic").glob("*.jsonl")):
        cases.append(_gguf_golden_case(f"synthetic-{golden.stem}", golden.with_suffix(".gguf"),
                                       _golden_rows(golden, every=True)))
    made = tmp_path / "made"
    made.mkdir()
    cases += _rwkv_plamo2_cases(made) + _pre_type_cases(made)
    run(cases, tmp_path)
