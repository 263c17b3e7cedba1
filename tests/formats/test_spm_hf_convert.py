"""SentencePiece .model <-> tokenizer.json (polytok.convert.spm_to_hf, hf_to_spm), proven live.

.model -> tokenizer.json: HF tokenizers on the written file, ``encode(text,
add_special_tokens=False)``, gives ``sp.encode(text)`` of sentencepiece on the source,
on every edge text whose normalized form the two engines agree on; the others are the
charsmap's grapheme clusters of several characters (HF applies a charsmap per grapheme cluster: the
``unicode-normalization`` difference), checked to be no more than that. Then
tokenizer.json -> .model: sentencepiece on the round-tripped model gives the source's
ids again, on every edge text.

tokenizer.json -> .model on the tokenizer.json fixtures: sentencepiece on the written
model gives HF's ids on every text that spells no special token (HF cuts those out,
sentencepiece reads them as text: ``marker-parsed-one-side``), or the conversion
refuses, naming each reason.

The rest run small models written here (`model_bytes`, a hand-written tokenizer.json) to
show each subtle rule both ways. The sweep of every fixture with the bench texts is
behind ``slow``.
"""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path
from typing import Any

import pytest
import regex
from fixtures import SHARED_TOKENIZERS, bench_slice, edge_texts, fixture_path

from polytok.convert.hf_to_spm import write_model_from_hf
from polytok.convert.outcome import ConversionRefused
from polytok.convert.spm_to_hf import write_hf_from_model
from polytok.formats.sentencepiece_writer import model_bytes

spm = pytest.importorskip("sentencepiece")
tokenizers = pytest.importorskip("tokenizers")

QUICK = [("spm-botchan-bpe-1000", "spm.model"), ("spm-kyoto-ja-unigram-8000", "spm.model"),
         ("spm-mistral-v1", "tokenizer.model")]
SLOW = [("spm-bpemb-en-100k", "spm.model"), ("spm-mistral-v2", "tokenizer.model")]
NORMALIZED = {"trainer_spec": {"model_type": 2, "vocab_size": 6, "unk_id": 0, "bos_id": -1, "eos_id": -1},
              "normalizer_spec": {"name": "identity", "add_dummy_prefix": False, "remove_extra_whitespaces": False}}


def _ids(sp: Any, text: str) -> list[int] | None:
    try:
        return list(sp.encode(text))
    except RuntimeError:  # a lone surrogate
        return None


def _hf(folder: Path) -> Any:
    return tokenizers.Tokenizer.from_file(str(folder / "tokenizer.json"))


def _clustered(text: str) -> bool:
    """Whether `text` has a grapheme cluster of several characters (in it, or in its NFD form)."""
    return any(len(regex.findall(r"\X", form)) < len(form) for form in (text, unicodedata.normalize("NFD", text)))


def _round_trip(name: str, filename: str, texts: list[str], tmp_path: Path) -> None:
    source = str(fixture_path(name, filename))
    folder = tmp_path / "hf"
    write_hf_from_model(source, str(folder))
    sp, hf = spm.SentencePieceProcessor(model_file=source), _hf(folder)
    bad, normalized_apart = [], []
    for text in texts:
        expected = _ids(sp, text)
        if expected is None:
            continue
        if sp.normalize(text) != hf.normalizer.normalize_str(text):
            normalized_apart.append(text)
        elif hf.encode(text, add_special_tokens=False).ids != expected:
            bad.append(text)
    assert not bad, f"{source}: HF gives other ids on {len(bad)} texts, first {bad[:3]!r}"
    assert all(_clustered(text) for text in normalized_apart), normalized_apart
    model = tmp_path / "round.model"
    write_model_from_hf(str(folder), str(model))
    again = spm.SentencePieceProcessor(model_file=str(model))
    bad = [text for text in texts if _ids(again, text) != _ids(sp, text)]
    assert not bad, f"{source}: the round-tripped .model gives other ids on {len(bad)} texts, first {bad[:3]!r}"


@pytest.mark.parametrize(("name", "filename"), QUICK, ids=[n for n, _ in QUICK])
def test_model_to_hf_and_back_gives_sentencepiece_ids(name, filename, tmp_path):
    _round_trip(name, filename, edge_texts() + [" " * n + "a" + " " * n + "b" for n in range(1, 20)], tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize(("name", "filename"), QUICK + SLOW, ids=[n for n, _ in QUICK + SLOW])
def test_model_to_hf_and_back_on_bench_text(name, filename, tmp_path):
    texts = [bench_slice(corpus, 20000) for corpus in ("en", "code", "multi")]
    _round_trip(name, filename, edge_texts() + texts + [line for t in texts for line in t.splitlines()], tmp_path)


@pytest.mark.parametrize(("name", "filename", "reasons"), [
    ("spm-botchan-unigram-1000", "spm.model", ["marker-parsed-one-side"]),
    ("spm-mistral-v3", "tokenizer.model", ["user-defined symbols"]),
    ("marian-nmt", "vocab.joint.spm", ["user-defined symbols", "treat_whitespace_as_suffix",
                                       "marker-parsed-one-side"]),
], ids=["botchan-unigram", "mistral-v3", "marian"])
def test_model_to_hf_refusals(name, filename, reasons, tmp_path):
    with pytest.raises(ConversionRefused) as caught:
        write_hf_from_model(str(fixture_path(name, filename)), str(tmp_path / "hf"))
    got = caught.value.reasons
    assert len(got) == len(reasons) and all(r.startswith(w) for r, w in zip(got, reasons, strict=True)), got


def _tied_model(first: str, second: str) -> bytes:
    """BPE over a, b, c with "ab" and "bc" of one score: on "abc" sentencepiece merges the leftmost pair."""
    pieces = [("<unk>", 0.0, 2), ("a", -5.0, 1), ("b", -5.0, 1), ("c", -5.0, 1), (first, -1.0, 1), (second, -1.0, 1)]
    return model_bytes(pieces, **NORMALIZED)


def test_equal_scores_that_rank_apart_are_refused(tmp_path):
    path = tmp_path / "tied.model"
    path.write_bytes(_tied_model("bc", "ab"))  # HF would rank "bc" first: "abc" -> a, bc
    assert spm.SentencePieceProcessor(model_file=str(path)).encode_as_pieces("abc") == ["ab", "c"]
    with pytest.raises(ConversionRefused, match="spm-space-runs"):
        write_hf_from_model(str(path), str(tmp_path / "hf"))


def test_equal_scores_that_rank_alike_convert(tmp_path):
    path = tmp_path / "tied.model"
    path.write_bytes(_tied_model("ab", "bc"))
    write_hf_from_model(str(path), str(tmp_path / "hf"))
    sp, hf = spm.SentencePieceProcessor(model_file=str(path)), _hf(tmp_path / "hf")
    for text in ("abc", "bcab", "abcabc", "cab", "abab", "bcbc", "x abc"):
        assert hf.encode(text, add_special_tokens=False).ids == sp.encode(text), text


def test_model_to_hf_writes_no_post_processor_and_names_the_special_tokens(tmp_path):
    write_hf_from_model(str(fixture_path("spm-botchan-bpe-1000", "spm.model")), str(tmp_path))
    document = json.loads((tmp_path / "tokenizer.json").read_text(encoding="utf-8"))
    assert document["post_processor"] is None and document["added_tokens"] == []
    assert json.loads((tmp_path / "special_tokens_map.json").read_text(encoding="utf-8")) == \
        {"unk_token": "<unk>", "bos_token": "<s>", "eos_token": "</s>"}
    hf = _hf(tmp_path)
    sp = spm.SentencePieceProcessor(model_file=str(fixture_path("spm-botchan-bpe-1000", "spm.model")))
    assert hf.encode("Hello <s> world").ids == sp.encode("Hello <s> world")  # add_special_tokens=True too


def _shared_json(name: str) -> Path:
    folder = SHARED_TOKENIZERS / name
    if not folder.is_dir():
        pytest.skip(f"{name} is only in ../shared/fixtures, which is absent")
    return folder


def _specials(document: dict[str, Any]) -> list[str]:
    return [t["content"] for t in document["added_tokens"] if t["special"]]


def _hf_to_model_matches(folder: Path, texts: list[str], tmp_path: Path) -> list[str]:
    out = tmp_path / "out.model"
    written = write_model_from_hf(str(folder), str(out))
    hf = _hf(folder)
    document = json.loads((folder / "tokenizer.json").read_text(encoding="utf-8"))
    specials = _specials(document)
    sp = spm.SentencePieceProcessor(model_file=str(out))
    bad = []
    for text in texts:
        if any(s in text for s in specials):
            continue  # marker-parsed-one-side, noted
        if _ids(sp, text) != hf.encode(text, add_special_tokens=False).ids:
            bad.append(text)
    assert not bad, f"{folder}: sentencepiece gives other ids on {len(bad)} texts, first {bad[:3]!r}"
    return written.notes


def test_llama2_tokenizer_json_to_model(tmp_path):
    notes = _hf_to_model_matches(_shared_json("llama2"), edge_texts(), tmp_path)
    assert any(note.startswith("marker-parsed-one-side") for note in notes)


@pytest.mark.slow
def test_llama2_tokenizer_json_to_model_on_bench_text(tmp_path):
    texts = [bench_slice(corpus, 20000) for corpus in ("en", "code", "multi")]
    _hf_to_model_matches(_shared_json("llama2"), texts + [line for t in texts for line in t.splitlines()], tmp_path)


@pytest.mark.parametrize(("name", "reasons"), [
    ("mistral-v3-hf-converted", ["metaspace-leading-space", "user-defined symbols"]),
    ("albert-base-v2-tf5", ["unicode-normalization", "metaspace-leading-space"]),
    pytest.param("phi-3-mini", ["user-defined symbols"], marks=pytest.mark.slow),
    pytest.param("chatglm3", ["the pre-tokenizer Split"], marks=pytest.mark.slow),
])
def test_hf_to_model_refusals(name, reasons, tmp_path):
    with pytest.raises(ConversionRefused) as caught:
        write_model_from_hf(str(_shared_json(name)), str(tmp_path / "out.model"))
    for reason in reasons:
        assert any(r.startswith(reason) for r in caught.value.reasons), (reason, caught.value.reasons)
    assert not (tmp_path / "out.model").exists()


@pytest.mark.slow
def test_gemma3_to_model_is_refused(tmp_path):
    with pytest.raises(ConversionRefused) as caught:
        write_model_from_hf(str(_shared_json("gemma3")), str(tmp_path / "out.model"))
    assert any(r.startswith("user-defined symbols") for r in caught.value.reasons)


def _bpe_json(merges: list[list[str]], vocab: list[str], **model: Any) -> dict[str, Any]:
    return {"version": "1.0", "added_tokens": [{"id": 0, "content": "<unk>", "special": True, "single_word": False,
                                                "lstrip": False, "rstrip": False, "normalized": False}],
            "normalizer": {"type": "Sequence", "normalizers": [
                {"type": "Prepend", "prepend": "\u2581"},
                {"type": "Replace", "pattern": {"String": " "}, "content": "\u2581"}]},
            "pre_tokenizer": None, "post_processor": None, "decoder": None,
            "model": {"type": "BPE", "unk_token": "<unk>", "fuse_unk": True, "byte_fallback": False,
                      "vocab": {p: i for i, p in enumerate(vocab)}, "merges": merges, **model}}


#: "ca" is made by no merge: HF never gives it, and sentencepiece must not merge c+a into it (CONTROL)
VOCAB = ["<unk>", "\u2581", "a", "b", "c", "\u2581a", "ab", "bc", "\u2581ab", "abc", "ca"]


@pytest.mark.parametrize(("merges", "refusal"), [
    ([["\u2581", "a"], ["a", "b"], ["b", "c"], ["\u2581a", "b"], ["\u2581", "ab"], ["ab", "c"], ["a", "bc"]], None),
    ([["\u2581", "a"], ["a", "b"], ["b", "c"], ["\u2581a", "b"], ["\u2581", "ab"], ["ab", "c"]], "no merge"),
    ([["\u2581", "a"], ["a", "b"], ["ab", "c"], ["b", "c"], ["\u2581a", "b"], ["\u2581", "ab"], ["a", "bc"]],
     "not consecutive"),
])
def test_hf_bpe_merges_to_scores(merges, refusal, tmp_path):
    source = tmp_path / "tokenizer.json"
    source.write_text(json.dumps(_bpe_json(merges, VOCAB)), encoding="utf-8")
    out = tmp_path / "out.model"
    if refusal:
        with pytest.raises(ConversionRefused, match=refusal):
            write_model_from_hf(str(source), str(out))
        return
    write_model_from_hf(str(source), str(out))
    sp, hf = spm.SentencePieceProcessor(model_file=str(out)), tokenizers.Tokenizer.from_file(str(source))
    for text in ("abc", "a bc", "bcab", "abcabc", "cabc", "xx abc", "ca"):
        assert sp.encode(text) == hf.encode(text, add_special_tokens=False).ids, text


def test_hf_unigram_to_model(tmp_path):
    added = [{"id": i, "content": c, "special": True, "single_word": False, "lstrip": False, "rstrip": False,
              "normalized": False} for i, c in ((0, "<unk>"), (1, "<s>"))]
    document = {**_bpe_json([], ["<unk>"]), "added_tokens": added,
                "model": {"type": "Unigram", "unk_id": 0, "byte_fallback": False, "vocab": [
                    ["<unk>", 0.0], ["<s>", 0.0], ["\u2581", -2.0], ["a", -3.0], ["b", -3.0], ["\u2581ab", -1.0],
                    ["ab", -2.5], ["ba", -4.0], ["\u2581a", -3.5]]}}
    source = tmp_path / "tokenizer.json"
    source.write_text(json.dumps(document), encoding="utf-8")
    out = tmp_path / "out.model"
    notes = write_model_from_hf(str(source), str(out)).notes
    assert any(note.startswith("marker-parsed-one-side") for note in notes)
    sp, hf = spm.SentencePieceProcessor(model_file=str(out)), tokenizers.Tokenizer.from_file(str(source))
    assert sp.is_control(1) and sp.is_unknown(0)
    for text in ("ab", "ab ab", "ba  b", "abab", "a b a", "xyz ab", "cc", " ab"):
        assert sp.encode(text) == hf.encode(text, add_special_tokens=False).ids, text


def test_a_character_that_is_no_piece_is_refused(tmp_path):
    """Sentencepiece starts from "a" as a symbol and merges it into "ab"; HF would make "a" unknown."""
    path = tmp_path / "lone.model"
    pieces = [("<unk>", 0.0, 2), ("b", -5.0, 1), ("c", -5.0, 1), ("ab", -1.0, 1)]
    path.write_bytes(model_bytes(pieces, **{**NORMALIZED, "trainer_spec": {**NORMALIZED["trainer_spec"],
                                                                           "vocab_size": 4}}))
    assert spm.SentencePieceProcessor(model_file=str(path)).encode_as_pieces("abc") == ["ab", "c"]
    with pytest.raises(ConversionRefused, match="unknown-token: the characters \\['a'\\]"):
        write_hf_from_model(str(path), str(tmp_path / "hf"))


def test_a_text_held_by_two_ids_is_refused(tmp_path):
    document = _bpe_json([["\u2581", "a"]], ["<unk>", "\u2581", "a", "\u2581a"])
    document["added_tokens"].append({**document["added_tokens"][0], "id": 4, "content": "a"})
    source = tmp_path / "tokenizer.json"
    source.write_text(json.dumps(document), encoding="utf-8")
    with pytest.raises(ConversionRefused, match="held by two ids"):
        write_model_from_hf(str(source), str(tmp_path / "out.model"))
