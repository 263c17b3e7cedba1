"""``polytok convert SRC DEST``: the target from DEST's name or --to, the directions refused, the writer
modules a version lacks, --check-corpus, --json, and the old ``MODEL_DIR OUT.gguf`` usage unchanged.

Test writers replace `polytok.convert.directions.WRITERS` entries where a direction's own writer is not
what is tested (tests/formats/test_convert_proof.py holds the proof's tests).
"""

from __future__ import annotations

import base64
import importlib
import importlib.util
import json
from pathlib import Path

import pytest

import polytok
from polytok.cli.main import main
from polytok.convert import directions, proof
from polytok.convert.outcome import Written
from polytok.errors import PolytokError

SYNTHETIC = Path(__file__).resolve().parent / "data" / "convert"
GPT2_PATTERN = r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""


@pytest.mark.parametrize(("dest", "target"), [
    ("out.gguf", "gguf"), ("x/Model-Q4.GGUF", "gguf"), ("tokenizer.model", "sentencepiece"),
    ("o200k.tiktoken", "tiktoken"), ("tekken.json", "tekken"), ("my-tekken-v3.json", "tekken"),
    ("tokenizer.json", "hf"), ("out/tokenizer.json", "hf"), ("hf_dir/", "hf"), ("hf_dir", "hf")])
def test_the_target_is_what_dest_names(dest, target):
    assert directions.target_of(dest) == target


def test_to_overrides_the_name_and_an_unnamed_suffix_needs_it(tmp_path):
    assert directions.target_of("ranks.bin", "tiktoken") == "tiktoken"
    assert directions.target_of("out.gguf", "hf") == "hf"
    with pytest.raises(PolytokError, match="give --to"):
        directions.target_of("ranks.bin")
    assert directions.target_of(tmp_path) == "hf"  # an existing folder, whatever its name


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(["convert", *map(str, argv)])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_same_format_and_missing_directions_are_one_line(tmp_path, capsys):
    model = SYNTHETIC / "llama-redefined" / "tokenizer.model"
    code, out, err = run(capsys, model, tmp_path / "copy.model")
    assert code == 1 and out == ""
    assert err == f"polytok: error: {model} is already a SentencePiece .model: convert writes another format " \
                  "(--to one of hf, gguf, tiktoken, tekken)\n"
    code, out, err = run(capsys, model, tmp_path / "x.tiktoken")
    assert code == 1 and err.count("\n") == 1
    assert "cannot write a SentencePiece .model as tiktoken (directions from sentencepiece: sentencepiece -> hf)" \
        in err
    ranks = tmp_path / "r.tiktoken"
    ranks.write_text(base64.b64encode(b"a").decode() + " 0\n", encoding="ascii")
    code, out, err = run(capsys, ranks, tmp_path / "out.gguf")
    assert code == 1 and "(directions from tiktoken: none in this version)" in err
    assert list(tmp_path.iterdir()) == [ranks]


def test_a_llama3_tokenizer_model_is_a_tiktoken_source(tmp_path):
    """A rank file named tokenizer.model is tiktoken, as polytok.load reads it, not SentencePiece."""
    ranks = tmp_path / "tokenizer.model"
    ranks.write_text(base64.b64encode(b"a").decode() + " 0\n", encoding="ascii")
    assert directions.source_of(ranks, "hf").format == "tiktoken"
    assert directions.source_of(SYNTHETIC / "arctic", "hf").format == "sentencepiece"  # a folder's .model
    assert directions.source_of(SYNTHETIC / "arctic", "gguf").format == "hf"  # the converter reads the folder
    assert directions.source_of(tmp_path, "gguf") == directions.Source("tiktoken", str(ranks), str(tmp_path))


def test_a_writer_module_this_version_lacks(tmp_path, capsys, monkeypatch):
    real = importlib.import_module

    def without_writer(name: str, *args):
        if name == "polytok.convert.spm_to_hf":
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return real(name, *args)

    monkeypatch.setattr(importlib, "import_module", without_writer)
    code, out, err = run(capsys, SYNTHETIC / "arctic" / "tokenizer.model", tmp_path / "hf")
    assert code == 1 and out == ""
    assert err == "polytok: error: this direction is not available in this version " \
                  "(polytok.convert.spm_to_hf is not installed)\n"
    assert list(tmp_path.iterdir()) == []


def test_a_missing_dependency_of_a_writer_is_not_hidden(monkeypatch):
    real = importlib.import_module

    def broken(name: str, *args):
        if name == "polytok.convert.spm_to_hf":
            raise ModuleNotFoundError("No module named 'somedep'", name="somedep")
        return real(name, *args)

    monkeypatch.setattr(importlib, "import_module", broken)
    with pytest.raises(ModuleNotFoundError, match="somedep"):
        directions.WRITERS[("sentencepiece", "hf")]("x.model", "out")


@pytest.mark.parametrize("option", [["--pre", "llama-bpe"], ["--like-converter"]])
def test_gguf_options_are_for_a_gguf_target_only(tmp_path, capsys, option):
    code, _, err = run(capsys, SYNTHETIC / "arctic" / "tokenizer.model", tmp_path / "hf", *option)
    assert code == 1 and "--pre, --base and --like-converter apply to a GGUF target only (this conversion " \
        "writes hf)" in err


# --- the old usage: MODEL_DIR OUT.gguf ----------------------------------------------------------------

def test_the_old_usage_prints_the_converter_report_and_the_proof(tmp_path, capsys):
    pytest.importorskip("gguf")
    from polytok.convert.converter import to_gguf

    folder = SYNTHETIC / "llama-redefined"
    # what the command printed before the proof: the converter's report lines, nothing else
    before = "\n".join(to_gguf(folder, tmp_path / "old.gguf").lines()).replace(str(tmp_path / "old.gguf"),
                                                                               str(tmp_path / "new.gguf"))
    code, out, err = run(capsys, folder, tmp_path / "new.gguf")
    assert code == 0
    lines = out.splitlines()
    assert "\n".join(lines[:-1]) == before
    assert lines[0] == f"wrote {tmp_path / 'new.gguf'}" and lines[1] == "architecture: llama"
    target = "llama.cpp" if proof.engine_available("llama.cpp") else "polytok"
    source = "sentencepiece" if proof.engine_available("sentencepiece") else "polytok"
    # the folder's tokenizer.model: sentencepiece's one mode (no BOS, no markers parsed)
    assert lines[-1] == (f"proof: {len(proof.CHECK_TEXTS)} texts × 1 mode identical (target engine: {target}, "
                         f"source engine: {source})")
    assert (tmp_path / "new.gguf").read_bytes() == (tmp_path / "old.gguf").read_bytes()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["new.gguf", "old.gguf"]


# --- --check-corpus and --json, on a test writer --------------------------------------------------------

def tiktoken_writer(source: str, out: str, **options) -> Written:
    tok = polytok.load(source)
    lines = [f"{base64.b64encode(tok.token_bytes(i)).decode()} {i}" for i in range(tok.model.vocab_size())]
    Path(out).write_text("\n".join(lines) + "\n", encoding="ascii")
    return Written("tiktoken", out, [out], notes=["ranks are ids"], load_options={"pattern": GPT2_PATTERN})


@pytest.fixture
def bpe(tmp_path, monkeypatch) -> Path:
    pytest.importorskip("tokenizers")
    from formats.test_convert_proof import tiny_bpe

    monkeypatch.setitem(directions.WRITERS, ("hf", "tiktoken"), tiktoken_writer)
    return tiny_bpe(tmp_path / "src")


@pytest.mark.parametrize("kind", ["lines", "jsonl"])
def test_check_corpus_adds_every_text(bpe, tmp_path, capsys, kind):
    texts = ["one corpus line", "  two  ", "第三行 🙂"]
    corpus = tmp_path / f"corpus.{kind}"
    rows = texts if kind == "lines" else [json.dumps({"text": t, "id": n}) for n, t in enumerate(texts)]
    corpus.write_text("\n".join(rows[:2]) + "\n\n" + rows[2] + "\n", encoding="utf-8")
    assert proof.read_corpus(corpus) == [(f"{corpus}:1", texts[0]), (f"{corpus}:2", texts[1]),
                                         (f"{corpus}:4", texts[2])]
    code, out, _ = run(capsys, bpe.parent, tmp_path / "t.tiktoken", "--check-corpus", corpus)
    assert code == 0
    assert out.splitlines()[-1].startswith(f"proof: {len(proof.PROOF_TEXTS) + 3} texts × 2 modes identical")


def test_a_text_corpus_may_start_with_braces(tmp_path):
    corpus = tmp_path / "code.txt"
    corpus.write_text("{ int x = 1; }\n{\"a\": 1}\n", encoding="utf-8")
    assert [text for _, text in proof.read_corpus(corpus)] == ["{ int x = 1; }", '{"a": 1}']


def test_a_bad_jsonl_corpus_line_is_named(bpe, tmp_path, capsys):
    corpus = tmp_path / "c.jsonl"
    corpus.write_text('{"text": "a"}\n{"txt": "b"}\n', encoding="utf-8")
    code, out, err = run(capsys, bpe, tmp_path / "t.tiktoken", "--check-corpus", corpus)
    assert code == 1 and out == ""
    assert err == f"polytok: error: {corpus}: line 2: a JSONL corpus line needs a string \"text\"\n"
    assert not (tmp_path / "t.tiktoken").exists()


def test_json_output(bpe, tmp_path, capsys):
    dest = tmp_path / "t.tiktoken"
    code, out, _ = run(capsys, bpe, dest, "--to", "tiktoken", "--json")
    assert code == 0
    result = json.loads(out)
    assert result["source"] == {"path": str(bpe), "format": "hf"} and result["target"] == "tiktoken"
    assert result["moved"] is True
    assert result["written"] == {"path": str(dest), "files": [str(dest)], "notes": ["ranks are ids"],
                                 "load_options": {"pattern": GPT2_PATTERN}}
    p = result["proof"]
    assert p["identical"] is True and p["texts"] == len(proof.PROOF_TEXTS)
    assert p["modes"] == [{"add_special": False, "special": "text"}, {"add_special": False, "special": "parse"}]
    assert p["differing"] == [] and p["reports"] == [] and p["known_differences"] == []
    assert p["skipped_modes"] == []
    assert {p["target_engine"], p["source_engine"]} <= {"tiktoken", "hf", "polytok"}


# --- each direction end to end, with its own writer -----------------------------------------------------

def writer_module(name: str) -> None:
    try:
        importlib.import_module(f"polytok.convert.{name}")
    except ModuleNotFoundError:
        pytest.skip(f"polytok.convert.{name} is not in this version")


def byte_ordered_bpe(folder: Path) -> Path:
    """The tiny BPE with the 256 bytes first in byte order and each merge's token next (a tekken layout)."""
    from formats.test_convert_proof import tiny_bpe

    data = json.loads(tiny_bpe(folder).read_text(encoding="utf-8"))
    gpt2 = polytok.load("gpt2")  # its first 256 tokens: ByteLevel's spelling of each byte
    spelled = {gpt2.token_bytes(i): gpt2.id_to_token(i) for i in range(256)}
    vocab = {spelled[bytes([b])]: b for b in range(256)}
    for merge in data["model"]["merges"]:
        left, right = merge.split(" ") if isinstance(merge, str) else merge
        vocab.setdefault(left + right, len(vocab))
    data["model"]["vocab"] = vocab
    (folder / "tokenizer.json").write_text(json.dumps(data), encoding="utf-8")
    return folder / "tokenizer.json"


def proven(out: str) -> str:
    last = out.splitlines()[-1]
    assert last.startswith("proof: ") and " identical (target engine: " in last, out
    return last


def test_gguf_to_hf(tmp_path, capsys):
    writer_module("gguf_to_hf")
    pytest.importorskip("tokenizers")
    from formats.test_convert_proof import tiny_bpe

    code, out, err = run(capsys, tiny_bpe(tmp_path / "src").parent, tmp_path / "l.gguf", "--pre", "gpt-2")
    assert code == 0, err
    code, out, err = run(capsys, tmp_path / "l.gguf", tmp_path / "hf")
    assert code == 0, err
    assert out.startswith(f"wrote {tmp_path / 'hf'}: tokenizer.json") and (tmp_path / "hf" / "tokenizer.json").is_file()
    assert "× 4 modes identical" in proven(out)


def test_force_lets_a_writer_write_its_nearest_form(tmp_path, capsys):
    """A refused GGUF (falcon: overlapping special texts) is written with --force, the reason kept as a
    note, and the proof still runs (its ids are llama.cpp's here)."""
    writer_module("gguf_to_hf")
    pytest.importorskip("tokenizers")
    from fixtures import gguf_vocab_path

    source = gguf_vocab_path("falcon")
    code, out, err = run(capsys, source, tmp_path / "refused", "--to", "hf")
    assert code == 1 and "cannot be written as hf exactly: special tokens '>>TITLE<<'" in err and out == "", (out, err)
    assert not (tmp_path / "refused").exists()
    code, out, err = run(capsys, source, tmp_path / "forced", "--to", "hf", "--force")
    assert code == 0, err
    assert "not exact (forced): special tokens '>>TITLE<<'" in out, out
    assert (tmp_path / "forced" / "tokenizer.json").is_file() and "× 4 modes identical" in proven(out)


def test_sentencepiece_to_hf_and_back(tmp_path, capsys):
    writer_module("spm_to_hf")
    writer_module("hf_to_spm")
    code, out, err = run(capsys, SYNTHETIC / "arctic" / "tokenizer.model", tmp_path / "hf")
    assert code == 0, err
    assert "× 1 mode identical" in proven(out)
    code, out, err = run(capsys, tmp_path / "hf", tmp_path / "back.model")
    assert code == 0, err
    proven(out)
    spm = pytest.importorskip("sentencepiece")
    a = spm.SentencePieceProcessor(model_file=str(SYNTHETIC / "arctic" / "tokenizer.model"))
    b = spm.SentencePieceProcessor(model_file=str(tmp_path / "back.model"))
    text = "Hello world, 你好 <s> test"
    assert b.encode(text) == a.encode(text)


def test_tokenizer_json_to_tiktoken_and_tekken(tmp_path, capsys):
    writer_module("to_tiktoken")
    writer_module("to_tekken")
    pytest.importorskip("tokenizers")
    source = byte_ordered_bpe(tmp_path / "src")
    code, out, err = run(capsys, source, tmp_path / "t.tiktoken")
    assert code == 0, err
    assert "× 2 modes identical" in proven(out)
    code, out, err = run(capsys, source, tmp_path / "tekken.json")
    assert code == 0, err
    # no <s> in the source: mistral-common cannot add a BOS, where HF adds nothing
    assert "× 1 mode identical" in proven(out) and "add_special=True, special=text not compared" in out


# (fixture, file in it or "" for the folder, DEST name, writer module): directions that convert exactly
SWEEP = [("gpt2", "", "gpt2.gguf", "converter"), ("llama3", "", "llama3.gguf", "converter"),
         ("qwen3", "", "qwen3.gguf", "converter"), ("bert-base-uncased", "", "bert.gguf", "converter"),
         ("gpt2", "", "gpt2.tiktoken", "to_tiktoken"), ("llama2", "", "llama2.model", "hf_to_spm"),
         ("spm-botchan-bpe-1000", "spm.model", "hf", "spm_to_hf"),
         ("spm-kyoto-ja-unigram-8000", "spm.model", "hf", "spm_to_hf")]


@pytest.mark.slow
@pytest.mark.parametrize(("name", "file", "dest", "module"), SWEEP, ids=[f"{n}->{d}" for n, _, d, _ in SWEEP])
def test_fixture_conversions_are_proven(tmp_path, capsys, name, file, dest, module):
    from fixtures import fixture_path

    writer_module(module)
    if module == "converter":
        pytest.importorskip("gguf")
    first = {"spm-botchan-bpe-1000": "spm.model", "spm-kyoto-ja-unigram-8000": "spm.model"}.get(name,
                                                                                             "tokenizer.json")
    path = fixture_path(name, first)
    src = path if file else path.parent
    code, out, err = run(capsys, src, tmp_path / dest)
    assert code == 0, err
    proven(out)
    if name == "gpt2" and dest.endswith(".gguf") and importlib.util.find_spec("polytok.convert.gguf_to_hf"):
        code, out, err = run(capsys, tmp_path / dest, tmp_path / "back")  # and the GGUF back to a folder
        assert code == 0, err
        assert "× 4 modes identical" in proven(out)
