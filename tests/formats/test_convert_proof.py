"""The proof every ``polytok convert`` ends with catches a writer that is wrong on purpose.

A small byte-level BPE is trained with HF tokenizers; test writers registered in
`polytok.convert.directions.WRITERS` write it as tiktoken ranks (right, and with
two ranks swapped) and, from a GGUF of it, as a tokenizer.json (right, and with
one merge removed). The proof runs the reference engines live (HF tokenizers,
tiktoken; llama.cpp where installed) and, with every engine made unavailable,
polytok's own readers: either way a wrong writer fails naming the first differing
text, leaves nothing at DEST, and ``--force`` writes it and prints the difference.
"""

from __future__ import annotations

import base64
import json
import shutil
from pathlib import Path

import pytest

import polytok
from polytok.cli.main import main
from polytok.convert import directions, proof
from polytok.convert.outcome import Written

tokenizers = pytest.importorskip("tokenizers")
pytest.importorskip("tiktoken")

GPT2_PATTERN = r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
CORPUS = ["Hello, world! The quick brown fox jumps over the lazy dog.", "def add(a, b):\n    return a + b\n",
          "tokenizers merge the most frequent pair first; tiktoken merges the lowest rank.",
          "café naïve 你好 世界 👋 1234567890 don't won't"] * 20


def tiny_bpe(folder: Path) -> Path:
    """A byte-level BPE (GPT-2's pre-tokenizer, 400 tokens) trained by HF tokenizers; its tokenizer.json."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=400, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                  show_progress=False)
    tok.train_from_iterator(CORPUS, trainer)
    folder.mkdir(parents=True, exist_ok=True)
    tok.save(str(folder / "tokenizer.json"))
    return folder / "tokenizer.json"


def tiktoken_writer(swap: tuple[int, int] | None = None):
    """Ranks = ids, the token bytes polytok reads; `swap` exchanges two ranks (a wrong writer)."""

    def write(source: str, out: str, **options) -> Written:
        tok = polytok.load(source)
        ranks = {i: i for i in range(tok.model.vocab_size())}
        if swap is not None:
            a, b = swap
            ranks[a], ranks[b] = b, a
        lines = [f"{base64.b64encode(tok.token_bytes(i)).decode()} {ranks[i]}" for i in sorted(ranks)]
        Path(out).write_text("\n".join(lines) + "\n", encoding="ascii")
        return Written("tiktoken", out, [out], notes=["test writer"], load_options={"pattern": GPT2_PATTERN})

    return write


def common_pair(tokenizer_json: Path) -> tuple[int, int]:
    """Two merged tokens both used on the built-in texts: swapping their ranks changes ids."""
    hf = tokenizers.Tokenizer.from_file(str(tokenizer_json))
    seen: list[int] = []
    for _, text in proof.PROOF_TEXTS:
        for i in hf.encode(text, add_special_tokens=False).ids:
            if i >= 256 and i not in seen:
                seen.append(i)
    return seen[0], seen[1]


@pytest.fixture(scope="module")
def bpe(tmp_path_factory) -> Path:
    return tiny_bpe(tmp_path_factory.mktemp("bpe") / "src")


@pytest.fixture
def no_engines(monkeypatch):
    """Every reference engine unavailable: the proof falls back to polytok's readers."""
    monkeypatch.setattr(proof, "engine_available", lambda engine: False)


@pytest.mark.parametrize("engines", ["live", "polytok"])
def test_a_right_tiktoken_writer_is_proven(bpe, tmp_path, monkeypatch, capsys, engines, request):
    if engines == "polytok":
        request.getfixturevalue("no_engines")
    monkeypatch.setitem(directions.WRITERS, ("hf", "tiktoken"), tiktoken_writer())
    dest = tmp_path / "tiny.tiktoken"
    assert main(["convert", str(bpe), str(dest)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == f"wrote {dest}"
    assert "test writer" in out
    name = "tiktoken, source engine: hf" if engines == "live" else "polytok, source engine: polytok"
    assert out[-1] == f"proof: {len(proof.PROOF_TEXTS)} texts × 2 modes identical (target engine: {name})"
    assert polytok.load(dest, pattern=GPT2_PATTERN).encode("Hello, world!") == \
        tokenizers.Tokenizer.from_file(str(bpe)).encode("Hello, world!").ids
    assert [p.name for p in tmp_path.iterdir()] == ["tiny.tiktoken"]  # no temporary folder left


@pytest.mark.parametrize("engines", ["live", "polytok"])
def test_swapped_ranks_fail_the_proof_and_force_writes_them(bpe, tmp_path, monkeypatch, capsys, engines,
                                                            request):
    if engines == "polytok":
        request.getfixturevalue("no_engines")
    pair = common_pair(bpe)
    monkeypatch.setitem(directions.WRITERS, ("hf", "tiktoken"), tiktoken_writer(swap=pair))
    dest = tmp_path / "new" / "dir" / "tiny.tiktoken"
    assert main(["convert", str(bpe), str(dest)]) == 1
    captured = capsys.readouterr()
    assert not dest.exists() and list(tmp_path.iterdir()) == []  # nor the folders it would have made
    # the first differing text: the first built-in text whose HF ids use one of the swapped tokens
    hf = tokenizers.Tokenizer.from_file(str(bpe))
    first = next((name, text) for name, text in proof.PROOF_TEXTS
                 if set(pair) & set(hf.encode(text, add_special_tokens=False).ids))
    err = captured.err.strip().splitlines()
    assert len(err) == 1
    assert err[0].startswith(f"polytok: error: proof failed: text {first[0]} {first[1][:60]!r}")
    assert "(add_special=False, special=text)" in err[0] and err[0].endswith(f"nothing written to {dest}")
    assert f"not written {dest}" in captured.out and f"text {first[0]}:" in captured.out
    assert "same pieces, other ids" in captured.out  # compare's kind for ranks that name other bytes

    assert main(["convert", str(bpe), str(dest), "--force"]) == 0
    captured = capsys.readouterr()
    assert dest.is_file() and captured.err == ""
    assert f"wrote {dest}" in captured.out and "proof failed: text " + first[0] in captured.out
    assert f"text {first[0]}:" in captured.out


def test_the_api_raises_with_the_proof(bpe, tmp_path, monkeypatch):
    monkeypatch.setitem(directions.WRITERS, ("hf", "tiktoken"), tiktoken_writer(swap=common_pair(bpe)))
    with pytest.raises(proof.ConversionProofError) as caught:
        polytok.convert.convert(bpe, tmp_path / "x.tiktoken")
    result = caught.value.result
    assert not result.moved and not result.proof.identical and result.proof.differing()
    assert not (tmp_path / "x.tiktoken").exists()


# --- a tokenizer.json target: a GGUF of the tiny BPE, written back with one merge removed -------------

def hf_writer(drop_merge: int | None, tokenizer_json: Path):
    """Writes `tokenizer_json` as the folder's tokenizer.json; `drop_merge` removes that merge (a wrong writer)."""

    def write(source: str, out: str, **options) -> Written:
        data = json.loads(tokenizer_json.read_text(encoding="utf-8"))
        if drop_merge is not None:
            del data["model"]["merges"][drop_merge]
        Path(out).mkdir()
        (Path(out) / "tokenizer.json").write_text(json.dumps(data), encoding="utf-8")
        return Written("hf", out, [str(Path(out) / "tokenizer.json")])

    return write


@pytest.fixture(scope="module")
def tiny_gguf(bpe, tmp_path_factory) -> Path:
    pytest.importorskip("gguf")
    from polytok.convert.converter import to_gguf

    out = tmp_path_factory.mktemp("gguf") / "tiny.gguf"
    to_gguf(bpe.parent, out, pre="gpt-2")
    return out


@pytest.mark.parametrize("engines", ["live", "polytok"])
def test_a_removed_merge_fails_the_proof(bpe, tiny_gguf, tmp_path, monkeypatch, capsys, engines, request):
    if engines == "polytok":
        request.getfixturevalue("no_engines")
    monkeypatch.setitem(directions.WRITERS, ("gguf", "hf"), hf_writer(None, bpe))
    dest = tmp_path / "out"
    assert main(["convert", str(tiny_gguf), str(dest)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == f"wrote {dest}: tokenizer.json"
    source = "llama.cpp" if engines == "live" and proof.engine_available("llama.cpp") else "polytok"
    target = "hf" if engines == "live" else "polytok"
    assert out[-1] == (f"proof: {len(proof.PROOF_TEXTS)} texts × 4 modes identical (target engine: {target}, "
                       f"source engine: {source})")
    shutil.rmtree(dest)

    monkeypatch.setitem(directions.WRITERS, ("gguf", "hf"), hf_writer(0, bpe))  # the first merge, used everywhere
    assert main(["convert", str(tiny_gguf), str(dest), "--json"]) == 1
    captured = capsys.readouterr()
    assert not dest.exists()
    result = json.loads(captured.out)
    first = result["proof"]["differing"][0]
    assert first["text"] == proof.PROOF_TEXTS[first_changed(bpe)][0]
    assert f"proof failed: text {first['text']} " in captured.err
    assert result["moved"] is False and result["proof"]["identical"] is False


def first_changed(tokenizer_json: Path) -> int:
    """The index of the first built-in text HF tokenizes otherwise without the first merge."""
    data = json.loads(tokenizer_json.read_text(encoding="utf-8"))
    full = tokenizers.Tokenizer.from_str(json.dumps(data))
    del data["model"]["merges"][0]
    cut = tokenizers.Tokenizer.from_str(json.dumps(data))
    return next(k for k, (_, text) in enumerate(proof.PROOF_TEXTS)
                if full.encode(text, add_special_tokens=False).ids != cut.encode(text, add_special_tokens=False).ids)


def nfc_folder(bpe: Path, tmp_path: Path) -> Path:
    """The BPE tokenizer.json with an NFC normalizer, which llama.cpp does not run."""
    folder = tmp_path / "nfc"
    folder.mkdir()
    data = json.loads(bpe.read_text(encoding="utf-8"))
    data["normalizer"] = {"type": "NFC"}
    (folder / "tokenizer.json").write_text(json.dumps(data), encoding="utf-8")
    return folder


def test_a_gguf_proof_does_not_count_what_the_check_names(bpe, tmp_path, capsys):
    """An NFC normalizer llama.cpp does not run: the converter's check names 'cafe\\u0301' a known
    difference, and the proof (HF with the normalizer against the GGUF) passes saying so."""
    pytest.importorskip("gguf")
    folder = nfc_folder(bpe, tmp_path)
    assert main(["convert", str(folder), str(tmp_path / "nfc.gguf"), "--pre", "gpt-2"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert "check: " in out[-2] and "normalizer (" in out[-2]
    n = len(proof.CHECK_TEXTS)
    assert out[-1].startswith(f"proof: {n} texts × 4 modes identical (") and "; not counted: " in out[-1]
    # the same GGUF against the source with the excuse ignored: the normalized text differs
    source = directions.source_of(folder, "gguf")
    written = directions.GgufWritten("gguf", str(tmp_path / "nfc.gguf"), [str(tmp_path / "nfc.gguf")])
    bare = proof.prove(source, written)
    assert not bare.identical and bare.differing()[0][1].text == "cafe\u0301"


def test_a_gguf_proof_excuses_a_named_text_only_where_markers_are_read_as_named(bpe, tmp_path):
    """The check names a text per way of reading markers; the proof does not excuse it in the other way."""
    pytest.importorskip("gguf")
    from polytok.convert.converter import to_gguf

    folder = nfc_folder(bpe, tmp_path)
    report = to_gguf(folder, tmp_path / "nfc.gguf", pre="gpt-2")
    assert {special for _, _, special, _ in report.check.differing} == {"text", "parse"}
    report.check.differing = [d for d in report.check.differing if d[2] == "text"]
    written = directions.GgufWritten("gguf", str(tmp_path / "nfc.gguf"), [str(tmp_path / "nfc.gguf")],
                                     report=report)
    result = proof.prove(directions.source_of(folder, "gguf"), written)
    assert result.differing() and {mode[1] for mode, _ in result.differing()} == {"parse"}
    assert {r.text for _, r in result.differing()} == {"cafe\u0301"}
