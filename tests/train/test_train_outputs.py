"""A trained tokenizer written in each format (`polytok.train.outputs`, ``polytok train --out``).

Every file is read back in the test by its reference engine, live (HF tokenizers, transformers,
sentencepiece, tiktoken; polytok's GGUF reader, and llama.cpp when installed), and must give the
trained tokenizer's ids. A writer that is wrong on purpose must fail the check, leave nothing at
the path, and write it with force.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest
from fixtures import bench_slice

import polytok
from polytok.cli.main import main
from polytok.convert import directions
from polytok.convert.outcome import ConversionRefused, Written
from polytok.convert.proof import ConversionProofError
from polytok.errors import PolytokError
from polytok.train import outputs
from polytok.train.bpe_trainer import BpeTrainer
from polytok.train.outputs import OutputCheckError, gguf_architecture, output_format, sample_corpus
from polytok.train.pipeline import BYTE_LEVEL_ALPHABET, TrainedTokenizer, train
from polytok.train.wordpiece_trainer import WordLevelTrainer, WordPieceTrainer

tokenizers = pytest.importorskip("tokenizers")

_BYTE_LEVEL = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True}
BYTE_LEVEL_BPE = {"pre_tokenizer": _BYTE_LEVEL, "decoder": _BYTE_LEVEL,
                  "post_processor": {**_BYTE_LEVEL, "trim_offsets": False}, "model": {"type": "BPE"}}
BERT = {"normalizer": {"type": "BertNormalizer", "clean_text": True, "handle_chinese_chars": True,
                       "strip_accents": None, "lowercase": True},
        "pre_tokenizer": {"type": "BertPreTokenizer"},
        "post_processor": {"type": "BertProcessing", "sep": ["[SEP]", 0], "cls": ["[CLS]", 0]},
        "decoder": {"type": "WordPiece", "prefix": "##", "cleanup": True}, "model": {"type": "WordPiece"}}
# what a .model can express: spaces as "▁", a dummy prefix, no pre-tokenizer (convert/hf_to_spm.py)
METASPACE_BPE = {"normalizer": {"type": "Sequence", "normalizers": [
                     {"type": "Prepend", "prepend": "\u2581"},
                     {"type": "Replace", "pattern": {"String": " "}, "content": "\u2581"}]},
                 "pre_tokenizer": None, "model": {"type": "BPE", "unk_token": "<unk>", "fuse_unk": True}}
EDGE_TEXTS = ["", " ", "Hello  world!\n\ttabs", "<|endoftext|> after", "naïve café 你好 👋", "[CLS] x [SEP]",
              "don't 12345 3.14"]


@pytest.fixture(scope="module")
def corpus_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("corpus") / "corpus.txt"
    path.write_text(bench_slice("bench_multi", 12_000), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def docs(corpus_file: Path) -> list[str]:
    return corpus_file.read_text(encoding="utf-8").splitlines()


@pytest.fixture(scope="module")
def bpe(docs: list[str]) -> TrainedTokenizer:
    return train(docs, BYTE_LEVEL_BPE, BpeTrainer(vocab_size=400, special_tokens=["<|endoftext|>"],
                                                  initial_alphabet=list(BYTE_LEVEL_ALPHABET)))


def texts(docs: list[str]) -> list[str]:
    return [*EDGE_TEXTS, *docs[:40]]


def test_output_format_by_name(tmp_path: Path) -> None:
    assert output_format("a/tokenizer.json") == output_format("wp.json") == "tokenizer.json"
    assert output_format("out/") == output_format("out") == output_format(tmp_path) == "folder"
    assert output_format("x.model") == "sentencepiece"
    assert output_format("x.gguf") == "gguf"
    assert output_format("x.tiktoken") == "tiktoken"
    assert output_format("x.bin", "gguf") == "gguf"
    with pytest.raises(PolytokError, match="does not say which format"):
        output_format("x.bin")
    with pytest.raises(PolytokError, match="'onnx' is not one"):
        output_format("x.bin", "onnx")


def test_gguf_family_of_each_model_kind(bpe: TrainedTokenizer) -> None:
    assert gguf_architecture(bpe.data) == "GPT2LMHeadModel"
    assert gguf_architecture({"model": {"type": "BPE"}, "pre_tokenizer": None}) == "LlamaForCausalLM"
    assert gguf_architecture({"model": {"type": "WordPiece"}}) == "BertModel"
    with pytest.raises(PolytokError, match="WordLevel model has no GGUF form"):
        gguf_architecture({"model": {"type": "WordLevel"}})


def test_sample_is_the_first_documents(corpus_file: Path, docs: list[str]) -> None:
    sample = sample_corpus([str(corpus_file)], limit=5)
    assert [t for _, t in sample] == docs[:5]  # the empty line too: a document as the trainer counts it
    assert sample[0][0] == f"{corpus_file}:document 1"
    assert sample_corpus([str(corpus_file)], limit=0) == []


def test_tokenizer_json_gives_the_trained_ids_in_hf(bpe: TrainedTokenizer, docs: list[str], tmp_path: Path) -> None:
    out = tmp_path / "sub" / "tok.json"
    result = bpe.save_as(out)
    assert result.moved and result.identical and result.files == [str(out)]
    assert [p.target_engine for p in result.proofs] == ["hf"]
    ref = tokenizers.Tokenizer.from_file(str(out))
    for text in texts(docs):
        assert ref.encode(text).ids == bpe.encode(text), text
    assert sorted(p.name for p in out.parent.iterdir()) == ["tok.json"]  # no staging folder is left


def test_folder_is_what_transformers_loads(docs: list[str], tmp_path: Path) -> None:
    transformers = pytest.importorskip("transformers")
    wordpiece = train(docs, BERT, WordPieceTrainer(vocab_size=300,
                                                   special_tokens=["[UNK]", "[CLS]", "[SEP]", "[PAD]", "[MASK]"]))
    out = tmp_path / "folder"
    result = wordpiece.save_as(str(out) + "/")
    assert sorted(p.name for p in out.iterdir()) == ["tokenizer.json", "tokenizer_config.json"]
    assert [p.target_engine for p in result.proofs] == ["hf", "transformers"]
    ref = transformers.AutoTokenizer.from_pretrained(str(out))
    assert (ref.cls_token, ref.sep_token, ref.unk_token, ref.pad_token, ref.mask_token) == \
        ("[CLS]", "[SEP]", "[UNK]", "[PAD]", "[MASK]")
    for text in texts(docs):
        assert ref.encode(text) == wordpiece.encode(text), text
        assert ref.encode(text, add_special_tokens=False) == wordpiece.encode(text, add_special=False), text


def test_tiktoken_ranks(bpe: TrainedTokenizer, docs: list[str], tmp_path: Path) -> None:
    tiktoken = pytest.importorskip("tiktoken")
    from tiktoken.load import load_tiktoken_bpe
    from tiktoken_ext.openai_public import r50k_pat_str  # GPT-2's split, which the ByteLevel pre-tokenizer runs

    out = tmp_path / "x.tiktoken"
    result = bpe.save_as(out)
    assert result.conversion is not None and result.conversion.proof.target_engine == "tiktoken"
    enc = tiktoken.Encoding("trained", pat_str=r50k_pat_str, mergeable_ranks=load_tiktoken_bpe(str(out)),
                            special_tokens={"<|endoftext|>": bpe.token_to_id("<|endoftext|>")})
    for text in texts(docs):
        assert enc.encode(text, disallowed_special=()) == bpe.encode(text, add_special=False, special="text"), text


def test_gguf_read_back(bpe: TrainedTokenizer, docs: list[str], tmp_path: Path) -> None:
    out = tmp_path / "x.gguf"
    result = bpe.save_as(out)
    assert "config.json architectures: GPT2LMHeadModel" in result.lines()[1]
    assert result.conversion is not None and result.conversion.proof.identical
    assert sorted(p.name for p in tmp_path.iterdir()) == ["x.gguf"]
    read = polytok.load(out)  # polytok's GGUF reader: llama.cpp is not in CI
    for text in texts(docs):
        assert read.encode(text) == bpe.encode(text), text
    try:
        import llama_cpp
    except ImportError:
        return
    model = llama_cpp.Llama(str(out), vocab_only=True, verbose=False)
    for text in texts(docs):
        assert model.tokenize(text.encode(), add_bos=False, special=True) == bpe.encode(text), text


def test_hf_bpe_through_the_model_writer(docs: list[str], tmp_path: Path) -> None:
    spm = pytest.importorskip("sentencepiece")
    trained = train(docs, METASPACE_BPE, BpeTrainer(vocab_size=60, special_tokens=["<unk>", "<s>", "</s>"]))
    out = tmp_path / "x.model"
    trained.save_as(out)
    ref = spm.SentencePieceProcessor(model_file=str(out))
    for text in texts(docs):
        assert ref.encode(text) == trained.encode(text, add_special=False, special="text"), text


def test_byte_level_bpe_is_refused_as_model(bpe: TrainedTokenizer, tmp_path: Path) -> None:
    with pytest.raises(ConversionRefused, match="pre-tokenizer ByteLevel"):
        bpe.save_as(tmp_path / "x.model")
    assert list(tmp_path.iterdir()) == []


def test_sentencepiece_model_and_its_tokenizer_json(docs: list[str], tmp_path: Path) -> None:
    spm = pytest.importorskip("sentencepiece")
    from polytok.train.sentencepiece_trainer import train_sentencepiece

    model = train_sentencepiece(docs, model_type="bpe", vocab_size=300)
    trained = spm.SentencePieceProcessor(model_proto=model)
    outputs.save_sentencepiece(model, tmp_path / "x.model")
    assert (tmp_path / "x.model").read_bytes() == model
    result = outputs.save_sentencepiece(model, tmp_path / "x.json")
    assert [p.target_engine for p in result.proofs] == ["sentencepiece", "hf"]
    assert result.files == [str(tmp_path / "x.json")]
    ref = tokenizers.Tokenizer.from_file(str(tmp_path / "x.json"))
    for text in texts(docs):
        assert ref.encode(text, add_special_tokens=False).ids == trained.encode(text), text
    assert sorted(p.name for p in tmp_path.iterdir()) == ["x.json", "x.model"]
    with pytest.raises(PolytokError, match="tiktoken file holds byte-level BPE ranks"):
        outputs.save_sentencepiece(model, tmp_path / "x.tiktoken")


def _swapping_save(original: Any) -> Any:
    """TrainedTokenizer.save writing the ids of two trained pieces the other way round."""
    def save(self: TrainedTokenizer, path: str | Path, pretty: bool = True) -> None:
        original(self, path, pretty)
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        vocab = data["model"]["vocab"]
        a, b = "e", "t"  # the commonest letters: every corpus sample has them
        vocab[a], vocab[b] = vocab[b], vocab[a]
        Path(path).write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return save


def test_wrong_tokenizer_json_fails_and_leaves_nothing(bpe: TrainedTokenizer, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(TrainedTokenizer, "save", _swapping_save(TrainedTokenizer.save))
    for name in ("tok.json", "folder", "x.tiktoken"):
        out = tmp_path / "new" / name
        with pytest.raises(OutputCheckError, match=r"proof failed: text \S+ .* differs.*nothing written") as info:
            bpe.save_as(out)
        assert not info.value.result.moved
        assert not (tmp_path / "new").exists()  # neither the file nor the folder made for it
    result = bpe.save_as(tmp_path / "tok.json", force=True)
    assert result.moved and not result.identical
    assert tokenizers.Tokenizer.from_file(str(tmp_path / "tok.json")).encode("e").ids != bpe.encode("e")


def test_wrong_converter_fails_the_proof(bpe: TrainedTokenizer, tmp_path: Path,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    right = directions.WRITERS[("hf", "tiktoken")]

    def wrong(source: str, out: str, **options: Any) -> Written:
        written = right(source, out, **options)
        lines = Path(out).read_bytes().splitlines()
        e, t = base64.b64encode(b"e"), base64.b64encode(b"t")
        swapped = {e: t, t: e}
        Path(out).write_bytes(b"".join(swapped.get(line.split()[0], line.split()[0]) + b" " + line.split()[1]
                                       + b"\n" for line in lines))
        return written

    monkeypatch.setitem(directions.WRITERS, ("hf", "tiktoken"), wrong)
    with pytest.raises(ConversionProofError, match="proof failed: text"):
        bpe.save_as(tmp_path / "x.tiktoken")
    assert list(tmp_path.iterdir()) == []
    assert bpe.save_as(tmp_path / "x.tiktoken", force=True).moved


def test_cli_fails_on_a_difference_unless_force(corpus_file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "tok.json"
    args = ["train", str(corpus_file), "--model", "bpe", "--vocab-size", "300", "--out", str(out)]
    assert main(args) == 0
    assert "proof: " in capsys.readouterr().err
    out.unlink()
    monkeypatch.setattr(TrainedTokenizer, "save", _swapping_save(TrainedTokenizer.save))
    assert main(args) == 1
    err = capsys.readouterr().err
    assert "polytok: error: proof failed: text " in err and f"nothing written to {out}" in err
    assert not out.exists()
    assert main([*args, "--force"]) == 0
    assert out.exists() and "proof failed" in capsys.readouterr().err


def test_cli_checks_the_sample_of_the_corpus(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    """A difference only the corpus shows (a piece none of the proof texts reaches) is caught by the sample."""
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("zqxjv zqxjv zqxjv zqxjv\n" * 5, encoding="utf-8")
    out = tmp_path / "wl.json"
    original = TrainedTokenizer.save

    def save(self: TrainedTokenizer, path: str | Path, pretty: bool = True) -> None:
        original(self, path, pretty)
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        data["model"]["vocab"] = {("zqxjw" if k == "zqxjv" else k): v for k, v in data["model"]["vocab"].items()}
        Path(path).write_text(json.dumps(data), encoding="utf-8")

    monkeypatch.setattr(TrainedTokenizer, "save", save)
    args = ["train", str(corpus), "--model", "wordlevel", "--vocab-size", "5", "--special-token", "<unk>",
            "--out", str(out)]
    assert main([*args, "--check-lines", "0"]) == 0  # the proof texts alone do not show it
    out.unlink()
    capsys.readouterr()
    assert main(args) == 1
    assert f"text {corpus}:document 1 'zqxjv" in capsys.readouterr().err
    assert not out.exists()


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["bpe", "wordpiece", "wordlevel", "metaspace-bpe"])
@pytest.mark.parametrize("vocab_size", [80, 300, 1000])
@pytest.mark.parametrize("name", ["tok.json", "folder", "x.model", "x.gguf", "x.tiktoken"])
def test_every_format_is_written_right_or_refused(kind: str, vocab_size: int, name: str, docs: list[str],
                                                   tmp_path: Path) -> None:
    pipeline, trainer = {
        "bpe": (BYTE_LEVEL_BPE, BpeTrainer(vocab_size=vocab_size, special_tokens=["<|endoftext|>"],
                                           initial_alphabet=list(BYTE_LEVEL_ALPHABET))),
        "wordpiece": (BERT, WordPieceTrainer(vocab_size=vocab_size, special_tokens=["[UNK]", "[CLS]", "[SEP]"])),
        "wordlevel": ({"pre_tokenizer": {"type": "Whitespace"}, "model": {"type": "WordLevel"}},
                      WordLevelTrainer(vocab_size=vocab_size, special_tokens=["<unk>"])),
        "metaspace-bpe": (METASPACE_BPE, BpeTrainer(vocab_size=vocab_size, special_tokens=["<unk>", "<s>"])),
    }[kind]
    trained = train(docs, pipeline, trainer)
    out = tmp_path / "out" / name
    try:
        result = trained.save_as(out, corpus=[(str(i), d) for i, d in enumerate(docs[:200])])
    except (PolytokError, ValueError):
        assert not (tmp_path / "out").exists()
        return
    assert result.identical and out.exists()
    if name == "tok.json":
        ref = tokenizers.Tokenizer.from_file(str(out))
        assert all(ref.encode(t).ids == trained.encode(t) for t in texts(docs))
    elif name == "x.model":
        spm = pytest.importorskip("sentencepiece")
        sp = spm.SentencePieceProcessor(model_file=str(out))
        assert all(sp.encode(t) == trained.encode(t, add_special=False, special="text") for t in texts(docs))
