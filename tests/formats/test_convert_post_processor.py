"""``polytok convert``'s default GGUF adds, around a text, what the HF folder adds, or is refused up front.

llama.cpp (llama-vocab.cpp ``llama_vocab::impl::tokenize``, llama-cpp-python 0.3.36)
adds at most one token before a text (BOS, when add_bos) and one after (EOS, when
add_eos; a WordPiece vocabulary adds BOS and SEP whatever the flags say), and its SPM
session prepends a space while ``add_space_prefix`` is true. The default mode of
`to_gguf` (``like_converter`` off) writes the ids and flags the tokenizer.json's
post-processor implies where the configs name none, ``add_space_prefix`` false where
the tokenizer.json prepends no ``▁``, non-special added tokens USER_DEFINED, and
refuses (FormatError, before anything is written) a post-processor that adds more
than a GGUF can, or an added token that takes the spaces before it (``lstrip``).

Expected ids come from HF tokenizers 0.23.3 run live on the folder's tokenizer.json,
compared with polytok reading the GGUF written (polytok's GGUF reader follows
llama.cpp, held to it by the goldens of tools/gen_convert_goldens.py). The real
folders come from ../shared/fixtures and are skipped, saying so, when absent; the
synthetic folders are built here with HF tokenizers' trainers.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from fixtures import fixture_path

import polytok
from polytok.errors import FormatError

pytest.importorskip("gguf")
tokenizers = pytest.importorskip("tokenizers")

from polytok.convert import gguf_writer  # noqa: E402
from polytok.convert.check import ConversionCheckError  # noqa: E402
from polytok.convert.converter import metadata_digests, to_gguf  # noqa: E402
from polytok.convert.texts import CHECK_TEXTS  # noqa: E402

TEXTS = ["", " ", "\n", "hello world", " hello  world ", "the cat sat on the mat", "x <tag> y",
         "<s> hello </s>", "héllo wörld ✓", *(text for name, text in CHECK_TEXTS if name.startswith("mixed"))]
CORPUS = ["hello world", "the cat sat on the mat", "the hat is on the cat", "hello there, world!",
          "a mat, a hat and a cat", "world of hello"] * 4
ADD_PREFIX = "tokenizer.ggml.add_space_prefix"


def hf_ids(folder: Path, text: str) -> list[int]:
    return tokenizers.Tokenizer.from_file(str(folder / "tokenizer.json")).encode(text).ids


def assert_llama_cpp_adds_as_hf(folder: Path, out: Path, texts: list[str] = TEXTS) -> None:
    """With special tokens added, parsed (llama.cpp parse_special) and as text (HF encode_special_tokens)."""
    tok = polytok.load(out)
    ref = tokenizers.Tokenizer.from_file(str(folder / "tokenizer.json"))
    bad = []
    for special in ("parse", "text"):
        ref.encode_special_tokens = special == "text"
        bad += [(t, special, tok.encode(t, add_special=True, special=special), ref.encode(t).ids) for t in texts
                if tok.encode(t, add_special=True, special=special) != ref.encode(t).ids]
    assert not bad, f"{len(bad)} of {2 * len(texts)} text x mode pairs differ, first: {bad[0]}"


def refuse_writes(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fail the test if the GGUF is written at all: the refusal must come first."""
    def no_write(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("the GGUF was written before the folder was refused")
    monkeypatch.setattr(gguf_writer, "write_gguf", no_write)


# --- synthetic folders ----------------------------------------------------------------------------------


def _save(tok: Any, folder: Path, config: dict[str, Any] | None = None,
          edit: Any = None) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    data = json.loads(tok.to_str())
    if edit is not None:
        edit(data)
    (folder / "tokenizer.json").write_text(json.dumps(data), encoding="utf-8")
    if config is not None:
        (folder / "tokenizer_config.json").write_text(json.dumps(config), encoding="utf-8")
    return folder


def llama_folder(folder: Path, *, post: Any = "bos", prefix: str = "none", config: dict[str, Any] | None = None,
                 tag: bool = False, spaces: bool = False) -> Path:
    """A Llama tokenizer.json (byte-fallback BPE, Sequence decoder: the Llama HF path), no tokenizer.model.

    `prefix`: ``none`` (a Replace normalizer only, as gemma's), ``prepend`` (a Prepend('▁')
    normalizer first) or ``metaspace`` (a Metaspace pre-tokenizer, prepend_scheme always).
    `tag`: a vocabulary piece ``<tag>`` also listed as a non-special added token; `spaces`: the same
    for ``▁▁``, as gemma's whitespace runs.
    """
    from tokenizers import decoders, models, normalizers, pre_tokenizers, processors, trainers

    tok = tokenizers.Tokenizer(models.BPE(unk_token="<unk>", byte_fallback=True))
    steps = [normalizers.Prepend("\u2581")] if prefix == "prepend" else []
    if prefix == "metaspace":
        tok.pre_tokenizer = pre_tokenizers.Metaspace(prepend_scheme="always", split=False)
    else:
        tok.normalizer = normalizers.Sequence([*steps, normalizers.Replace(" ", "\u2581")])
    tok.decoder = decoders.Sequence([decoders.Replace("\u2581", " "), decoders.ByteFallback(), decoders.Fuse()])
    tok.train_from_iterator(CORPUS, trainers.BpeTrainer(vocab_size=90, special_tokens=["<unk>", "<s>", "</s>"],
                                                        show_progress=False))
    if post == "bos":
        tok.post_processor = processors.TemplateProcessing(single="<s> $A", special_tokens=[("<s>", 1)])
    elif post == "bos+eos":
        tok.post_processor = processors.TemplateProcessing(single="<s> $A </s>", special_tokens=[("<s>", 1),
                                                                                                ("</s>", 2)])
    elif post == "two-before":
        tok.post_processor = processors.TemplateProcessing(single="<s> </s> $A", special_tokens=[("<s>", 1),
                                                                                                ("</s>", 2)])

    def edit(data: dict[str, Any]) -> None:
        vocab = data["model"]["vocab"]
        for b in range(256):
            vocab[f"<0x{b:02X}>"] = len(vocab)
        if spaces and "\u2581\u2581" not in vocab:  # a piece the merges make, as in gemma
            data["model"]["merges"].append(["\u2581", "\u2581"] if data["model"]["merges"] and
                                           isinstance(data["model"]["merges"][0], list) else "\u2581 \u2581")
        for piece in ["<tag>"] * tag + ["\u2581\u2581"] * spaces:
            vocab.setdefault(piece, len(vocab))
            data["added_tokens"].append({"id": vocab[piece], "content": piece, "single_word": False,
                                         "lstrip": False, "rstrip": False, "normalized": False, "special": False})
    return _save(tok, folder, config, edit)


def byte_level_folder(folder: Path, post: Any, config: dict[str, Any] | None = None, lstrip: bool = False,
                      mask: str = "<mask>") -> Path:
    """A byte-level BPE (GPT-2's path), specials <s>=0 <pad>=1 </s>=2 <unk>=3 <mask>=4, no config files."""
    from tokenizers import decoders, models, pre_tokenizers, trainers

    tok = tokenizers.Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.train_from_iterator(CORPUS, trainers.BpeTrainer(
        vocab_size=300, special_tokens=["<s>", "<pad>", "</s>", "<unk>", "<mask>"], show_progress=False,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    tok.post_processor = post

    def edit(data: dict[str, Any]) -> None:
        data["added_tokens"][4]["lstrip"] = lstrip
        if mask != "<mask>":
            vocab = data["model"]["vocab"]
            vocab[mask] = vocab.pop("<mask>")
            data["added_tokens"][4]["content"] = mask
    return _save(tok, folder, config, edit)


def wordpiece_folder(folder: Path, cls_id: int, post: bool = True) -> Path:
    """A WordPiece vocabulary (BERT's path): [UNK] [CLS] [SEP] [MASK] from `cls_id` - 1 on, no config files."""
    from tokenizers import decoders, models, normalizers, pre_tokenizers, processors

    words = ["hello", "world", "the", "cat", "sat", "on", "mat", "x", "tag", "y", "s"]
    pieces = [chr(c) for c in range(ord("a"), ord("z") + 1)] + [f"##{chr(c)}" for c in range(ord("a"), ord("z") + 1)]
    pieces += [*words, *".,!?<>/'#@+-:_=&"]
    vocab = {"[PAD]": 0}
    while len(vocab) < cls_id - 1:
        vocab[f"[unused{len(vocab)}]"] = len(vocab)
    for piece in ["[UNK]", "[CLS]", "[SEP]", "[MASK]", *pieces]:
        vocab.setdefault(piece, len(vocab))
    tok = tokenizers.Tokenizer(models.WordPiece(vocab, unk_token="[UNK]"))
    tok.add_special_tokens(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"])
    tok.normalizer = normalizers.BertNormalizer(lowercase=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.decoder = decoders.WordPiece()
    if post:
        tok.post_processor = processors.BertProcessing(("[SEP]", cls_id + 1), ("[CLS]", cls_id))
    return _save(tok, folder)


def roberta_post() -> Any:
    from tokenizers import processors

    return processors.RobertaProcessing(("</s>", 2), ("<s>", 0), add_prefix_space=False)


# --- the post-processor's ids and add flags -------------------------------------------------------------


def test_roberta_processing_without_config_gives_bos_and_eos(tmp_path):
    folder = byte_level_folder(tmp_path / "f", roberta_post())
    to_gguf(folder, tmp_path / "x.gguf")
    assert hf_ids(folder, "hello") == [0, *hf_ids(folder, "hello")[1:-1], 2]
    assert_llama_cpp_adds_as_hf(folder, tmp_path / "x.gguf")


def test_sequence_of_byte_level_and_template_gives_bos_and_eos(tmp_path):
    from tokenizers import processors

    post = processors.Sequence([processors.ByteLevel(trim_offsets=False),
                                processors.TemplateProcessing(single="<s> $A </s>",
                                                              special_tokens=[("<s>", 0), ("</s>", 2)])])
    folder = byte_level_folder(tmp_path / "f", post)
    to_gguf(folder, tmp_path / "x.gguf")
    assert_llama_cpp_adds_as_hf(folder, tmp_path / "x.gguf")


def test_template_naming_tokens_the_config_does_not(tmp_path):
    folder = llama_folder(tmp_path / "f", post="bos+eos")  # no tokenizer_config.json: gguf-py finds no id
    to_gguf(folder, tmp_path / "x.gguf")
    assert_llama_cpp_adds_as_hf(folder, tmp_path / "x.gguf")


def test_no_post_processor_adds_nothing_whatever_add_bos_token_says(tmp_path):
    # transformers 5 keeps the file's post-processor; SPM adds BOS by default, the config asks for it
    folder = llama_folder(tmp_path / "f", post=None, config={"add_bos_token": True, "bos_token": "<s>"})
    assert hf_ids(folder, "hello")[0] != 1
    to_gguf(folder, tmp_path / "x.gguf")
    assert_llama_cpp_adds_as_hf(folder, tmp_path / "x.gguf")


@pytest.mark.parametrize("cls_id", [2, 101])
def test_wordpiece_bos_and_sep_are_the_post_processors(tmp_path, cls_id):
    folder = wordpiece_folder(tmp_path / "f", cls_id)
    report = to_gguf(folder, tmp_path / "x.gguf")
    assert_llama_cpp_adds_as_hf(folder, tmp_path / "x.gguf")
    # llama.cpp's own defaults (100, 101, 102) are right for BERT's ids: nothing more is written then
    assert ("bos" in report.special_ids) == ("unk" in report.special_ids) == (cls_id != 101)


def test_keys_already_right_stay_as_the_converter_writes_them(tmp_path):
    wordpiece_folder(tmp_path / "w", 101)
    byte_level_folder(tmp_path / "b", None)
    llama_folder(tmp_path / "l", post="bos", prefix="prepend", config={"bos_token": "<s>", "eos_token": "</s>",
                                                                         "unk_token": "<unk>", "add_bos_token": True})
    for name in ("w", "b", "l"):
        to_gguf(tmp_path / name, tmp_path / f"{name}.gguf")
        to_gguf(tmp_path / name, tmp_path / f"{name}-c.gguf", like_converter=True)
        ours, theirs = metadata_digests(tmp_path / f"{name}.gguf"), metadata_digests(tmp_path / f"{name}-c.gguf")
        ours.pop("tokenizer.ggml.scores", None)  # the Llama HF path's scores differ by design
        theirs.pop("tokenizer.ggml.scores", None)
        assert ours == theirs, name


# --- what a GGUF cannot add: refused before anything is written -----------------------------------------


def test_two_tokens_before_the_text_are_refused_up_front(tmp_path, monkeypatch):
    folder = llama_folder(tmp_path / "f", post="two-before")
    refuse_writes(monkeypatch)
    with pytest.raises(FormatError, match=r"adds 2 tokens before the text \(<s> </s>\); a GGUF adds at most one "
                                          r"\(BOS\)") as err:
        to_gguf(folder, tmp_path / "x.gguf")
    assert err.value.key == "post_processor" and err.value.file.endswith("tokenizer.json")


def test_two_tokens_after_the_text_are_refused_up_front(tmp_path, monkeypatch):
    from tokenizers import processors

    post = processors.TemplateProcessing(single="$A </s> <pad>", special_tokens=[("</s>", 2), ("<pad>", 1)])
    folder = byte_level_folder(tmp_path / "f", post)
    refuse_writes(monkeypatch)
    with pytest.raises(FormatError, match=r"adds 2 tokens after the text \(</s> <pad>\).*\(EOS\)"):
        to_gguf(folder, tmp_path / "x.gguf")


def test_wordpiece_without_post_processor_is_refused(tmp_path, monkeypatch):
    folder = wordpiece_folder(tmp_path / "f", 2, post=False)
    refuse_writes(monkeypatch)
    with pytest.raises(FormatError, match=r"adds 0 tokens before the text \(none\); a GGUF adds exactly one"):
        to_gguf(folder, tmp_path / "x.gguf")


def test_wordpiece_without_its_unk_token_is_refused_up_front(tmp_path, monkeypatch):
    """HF fails on a word it cannot split when [UNK] is missing (labse-cropped's shape); a GGUF cannot fail."""
    folder = wordpiece_folder(tmp_path / "f", 101)
    data = json.loads((folder / "tokenizer.json").read_text(encoding="utf-8"))
    data["model"]["vocab"] = {t: i for t, i in data["model"]["vocab"].items() if t != "[UNK]"}
    data["added_tokens"] = [t for t in data["added_tokens"] if t["content"] != "[UNK]"]
    (folder / "tokenizer.json").write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(Exception, match="Missing"):
        tokenizers.Tokenizer.from_file(str(folder / "tokenizer.json")).encode("hello \u4e00")
    refuse_writes(monkeypatch)
    with pytest.raises(FormatError, match="unk_token '\\[UNK\\]' is not in the vocabulary") as err:
        to_gguf(folder, tmp_path / "x.gguf")
    assert err.value.key == "model.unk_token" and err.value.file.endswith("tokenizer.json")


def test_lstrip_added_token_is_refused_up_front(tmp_path, monkeypatch):
    folder = byte_level_folder(tmp_path / "f", roberta_post(), lstrip=True, mask="<hole>")
    assert hf_ids(folder, "a <hole>") == hf_ids(folder, "a<hole>")  # HF takes the space with it
    refuse_writes(monkeypatch)
    with pytest.raises(FormatError, match=r"'<hole>' \(id 4\) takes the spaces before it \(lstrip\)") as err:
        to_gguf(folder, tmp_path / "x.gguf")
    assert err.value.key == "added_tokens.4.lstrip"


def test_lstrip_mask_is_written_under_the_twin_pre_name(tmp_path):
    """llama.cpp strips the spaces before '<mask>' only under the jina-v2 pre names, loaded as gpt-2 /
    roberta-bpe are; a no-break space, which HF strips and llama.cpp does not, is named by the check."""
    folder = byte_level_folder(tmp_path / "f", roberta_post(), lstrip=True)
    report = to_gguf(folder, tmp_path / "x.gguf")
    assert report.pre in ("jina-v2-es", "jina-v2-code") and "written jina-v2-" in report.pre_decision.line()
    assert_llama_cpp_adds_as_hf(folder, tmp_path / "x.gguf", [*TEXTS, "a <mask>", "x \t <mask> y <mask>"])
    assert {d for t, *_, d in report.check.differing if t.startswith("lstrip ")} == {"lstrip-space"}


def test_like_converter_keeps_the_converters_keys_and_its_late_failure(tmp_path):
    folder = llama_folder(tmp_path / "f", post="two-before")
    with pytest.raises(ConversionCheckError):
        to_gguf(folder, tmp_path / "x.gguf", like_converter=True)


# --- the Llama HF path: space prefix and added tokens ---------------------------------------------------


@pytest.mark.parametrize("prefix", ["none", "prepend", "metaspace"])
def test_space_prefix_follows_the_tokenizer_json(tmp_path, prefix):
    folder = llama_folder(tmp_path / "f", prefix=prefix)
    to_gguf(folder, tmp_path / "x.gguf")
    # HF's Metaspace adds no ▁ before a text that starts with one; llama.cpp adds its space
    # whatever the text (the check's named difference leading-space)
    texts = [t for t in TEXTS if prefix != "metaspace" or not (t.startswith(" ") or "<s>" in t)]
    assert_llama_cpp_adds_as_hf(folder, tmp_path / "x.gguf", texts)
    written = metadata_digests(tmp_path / "x.gguf").get(ADD_PREFIX)
    assert (written and written["value"]) == (False if prefix == "none" else None)


def test_config_add_prefix_space_is_kept(tmp_path):
    folder = llama_folder(tmp_path / "f", prefix="none", config={"add_prefix_space": True})
    with pytest.raises(ConversionCheckError):  # the config says so; llama.cpp then differs from the file
        to_gguf(folder, tmp_path / "x.gguf")


def test_non_special_added_token_in_the_vocabulary_is_matched_whole(tmp_path):
    folder = llama_folder(tmp_path / "f", tag=True)
    tag = json.loads((folder / "tokenizer.json").read_text())["model"]["vocab"]["<tag>"]
    assert tag in hf_ids(folder, "x <tag> y")
    to_gguf(folder, tmp_path / "x.gguf")
    assert_llama_cpp_adds_as_hf(folder, tmp_path / "x.gguf")


def test_non_special_added_token_holding_the_space_mark_stays_normal(tmp_path, monkeypatch):
    """llama.cpp renders a USER_DEFINED token's text as it is: a '▁▁' typed so would decode as '▁▁' where
    HF's decoder gives two spaces; NORMAL, llama.cpp merges it from the spaces and decodes it as HF."""
    folder = llama_folder(tmp_path / "f", spaces=True)
    spaces = json.loads((folder / "tokenizer.json").read_text())["model"]["vocab"]["\u2581\u2581"]
    report = to_gguf(folder, tmp_path / "x.gguf")
    assert report.type_counts.get("USER_DEFINED", 0) == 0
    hf = tokenizers.Tokenizer.from_file(str(folder / "tokenizer.json"))
    tok = polytok.load(tmp_path / "x.gguf")
    assert tok.decoder.detokenize([spaces], False, False) == hf.decode([spaces]).encode() == b"  "
    assert_llama_cpp_adds_as_hf(folder, tmp_path / "x.gguf", [*TEXTS, "a  b"])
    # the '▁▁' typed as such: HF matches the added token whole, llama.cpp merges 'a▁' first; the check names it
    assert hf_ids(folder, "a\u2581\u2581b") != tok.encode("a\u2581\u2581b", add_special=True, special="parse")
    import polytok.convert.check as check

    monkeypatch.setattr(check, "CHECK_TEXTS", [*check.CHECK_TEXTS, ("typed-mark", "a\u2581\u2581b")])
    report = to_gguf(folder, tmp_path / "y.gguf")
    assert {(t, d) for t, _, _, d in report.check.differing} == {("typed-mark", "added-space-mark")}


# --- the real folders -----------------------------------------------------------------------------------


def real_folder(tmp_path: Path, name: str, files: tuple[str, ...] = ("tokenizer.json",)) -> Path:
    folder = tmp_path / name
    folder.mkdir()
    for file in files:
        shutil.copyfile(fixture_path(name, file), folder / file)
    return folder


@pytest.mark.parametrize(("name", "files", "message"), [
    ("whisper-tiny", ("tokenizer.json",),
     r"adds 2 tokens before the text \(<\|startoftranscript\|> <\|notimestamps\|>\); a GGUF adds at most one"),
    ("chatglm3", ("tokenizer.json", "tokenizer_config.json"),
     r"adds 2 tokens before the text \(\[gMASK\] <!sop!>\); a GGUF adds at most one"),
])
def test_real_folders_adding_two_tokens_are_refused(tmp_path, monkeypatch, name, files, message):
    folder = real_folder(tmp_path, name, files)
    refuse_writes(monkeypatch)
    with pytest.raises(FormatError, match=message):
        to_gguf(folder, tmp_path / "x.gguf")


def test_roberta_base_gets_its_bos_eos_and_mask_lstrip(tmp_path):
    folder = real_folder(tmp_path, "roberta-base")
    report = to_gguf(folder, tmp_path / "x.gguf")
    assert (report.special_ids["bos"], report.special_ids["eos"]) == (0, 2) and report.pre == "jina-v2-code"
    assert_llama_cpp_adds_as_hf(folder, tmp_path / "x.gguf", [*TEXTS, "The capital of France is <mask>."])


@pytest.mark.slow
def test_gemma3_without_tokenizer_model(tmp_path):
    folder = real_folder(tmp_path, "gemma3", ("tokenizer.json", "tokenizer_config.json"))
    report = to_gguf(folder, tmp_path / "x.gguf")
    assert metadata_digests(tmp_path / "x.gguf")[ADD_PREFIX]["value"] is False
    assert report.type_counts["USER_DEFINED"] > 6000  # <unused0>… and <s>, matched whole as HF does
    # "</s>", a non-special added token here, is one llama.cpp makes control whatever the file says
    chat = "<start_of_turn>user\nhi <unused0> there<end_of_turn>\n<start_of_turn>model\n"
    assert_llama_cpp_adds_as_hf(folder, tmp_path / "x.gguf", [t for t in [*TEXTS, chat] if "</s>" not in t])
