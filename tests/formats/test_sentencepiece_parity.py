"""polytok.load(FILE.model) against sentencepiece 0.2.3, run live, on every real .model fixture.

Files: botchan BPE and unigram, kyoto-ja unigram (sentencepiece's sdist), bpemb-en 100k
(GitHub origin, ../shared only), Mistral v1, v2, v3 and v7 (mistral_common's wheel) and
Marian's vocab.joint.spm (GitHub origin, ../shared only).

For each file: every edge text and 4000-character slices of the three bench texts
give the ids of ``SentencePieceProcessor.encode(text)``; ``decode`` of those ids and
of the whole vocabulary (in chunks) equals ``.decode(ids)``; ``special="parse"``
equals ``sp.encode`` of the text between the CONTROL pieces written in it, with the
pieces' ids in between (leftmost-longest, computed here from sentencepiece's own
piece table); the special ids are sentencepiece's ``unk_id()``, ``bos_id()``, ...
"""

from __future__ import annotations

import pytest
from fixtures import bench_slice, edge_texts, fixture_path
from parity.diff_report import ids_mismatch

import polytok

spm = pytest.importorskip("sentencepiece")

FILES = [("spm-botchan-bpe-1000", "spm.model"), ("spm-botchan-unigram-1000", "spm.model"),
         ("spm-kyoto-ja-unigram-8000", "spm.model"), ("spm-bpemb-en-100k", "spm.model"),
         ("spm-mistral-v1", "tokenizer.model"), ("spm-mistral-v2", "tokenizer.model"),
         ("spm-mistral-v3", "tokenizer.model"), ("spm-mistral-v7", "tokenizer.model"),
         ("marian-nmt", "vocab.joint.spm")]
IDS = [name for name, _ in FILES]


def _pair(name: str, filename: str) -> tuple[polytok.Tokenizer, object, str]:
    path = fixture_path(name, filename)
    return polytok.load(path), spm.SentencePieceProcessor(model_file=str(path)), str(path)


def _texts() -> list[str]:
    return edge_texts() + [bench_slice(name, 4000) for name in ("en", "code", "multi")]


def _reference_ids(sp, text: str) -> list[int] | None:
    """sentencepiece's ids, or None where it refuses the text (a lone surrogate)."""
    try:
        return sp.encode(text)
    except RuntimeError:
        return None


@pytest.mark.parametrize(("name", "filename"), FILES, ids=IDS)
def test_ids_and_decode_equal_sentencepiece(name, filename):
    tok, sp, path = _pair(name, filename)
    reports = []
    for text in _texts():
        expected = _reference_ids(sp, text)
        if expected is None:
            with pytest.raises(polytok.PolytokError):
                tok.encode(text)
            continue
        report = ids_mismatch(path, text, "encode", expected, tok.encode(text), tok.id_to_token)
        if report:
            reports.append(report)
        if tok.decode(expected) != sp.decode(expected):
            reports.append(f"{path}: decode differs for the ids of {text[:80]!r}")
    assert not reports, f"{len(reports)} mismatches; first ones:\n" + "\n\n".join(reports[:5])


@pytest.mark.parametrize(("name", "filename"), FILES, ids=IDS)
def test_decode_of_the_whole_vocabulary(name, filename):
    tok, sp, path = _pair(name, filename)
    size = sp.get_piece_size()
    assert len(tok) == size
    bad = []
    for chunk_size in (1, 37):
        for start in range(0, size, chunk_size if size < 20000 or chunk_size > 1 else 97):
            ids = list(range(start, min(start + chunk_size, size)))
            if tok.decode(ids) != sp.decode(ids):
                bad.append(ids)
    assert not bad, f"{path}: {len(bad)} chunks decode differently, first {bad[:3]}"


@pytest.mark.parametrize(("name", "filename"), FILES, ids=IDS)
def test_pieces_and_special_ids(name, filename):
    tok, sp, _ = _pair(name, filename)
    size = sp.get_piece_size()
    step = max(1, size // 3000)
    assert all(tok.id_to_token(i) == sp.id_to_piece(i) for i in range(0, size, step))
    expected = {"unk": sp.unk_id(), "bos": sp.bos_id(), "eos": sp.eos_id(), "pad": sp.pad_id()}
    assert tok.special_ids == {k: v for k, v in expected.items() if v >= 0}
    assert tok.facts.format == "sentencepiece"
    assert tok.facts.details["model_type"] in ("bpe", "unigram")


def reference_parse(sp, text: str) -> list[int]:
    """sp.encode of the text between literal CONTROL pieces (leftmost-longest), their ids in between."""
    controls = {sp.id_to_piece(i): i for i in range(sp.get_piece_size()) if sp.is_control(i)}
    longest = max(map(len, controls), default=0)
    out: list[int] = []
    pos = free = 0
    while pos < len(text):
        match = next((text[pos:pos + k] for k in range(min(longest, len(text) - pos), 0, -1)
                      if text[pos:pos + k] in controls), None)
        if match is None:
            pos += 1
            continue
        out += sp.encode(text[free:pos]) + [controls[match]]
        pos = free = pos + len(match)
    return out + sp.encode(text[free:])


@pytest.mark.parametrize(("name", "filename"), FILES, ids=IDS)
def test_parse_mode_cuts_out_control_pieces(name, filename):
    tok, sp, path = _pair(name, filename)
    controls = [sp.id_to_piece(i) for i in range(sp.get_piece_size()) if sp.is_control(i)]
    markers = [m for m in ("<s>", "</s>", "[INST]", "[/INST]", "<pad>", "[TOOL_CALLS]") if m in controls] or controls
    reports = []
    for index, text in enumerate(edge_texts()[::3]):
        if _reference_ids(sp, text) is None:
            continue
        a, b = markers[index % len(markers)], markers[(index + 1) % len(markers)]
        marked = f"{a}{text}{b} {text[:10]}{a}{a}x"
        expected = reference_parse(sp, marked)
        report = ids_mismatch(path, marked, "parse", expected, tok.encode(marked, special="parse"), tok.id_to_token)
        if report:
            reports.append(report)
        # the default (sp.encode) reads the markers as text
        assert tok.encode(marked) == sp.encode(marked) == tok.encode(marked, special="text")
    assert not reports, f"{len(reports)} mismatches; first ones:\n" + "\n\n".join(reports[:5])


def test_add_special_has_no_effect():
    tok, sp, _ = _pair("spm-mistral-v1", "tokenizer.model")
    text = "Hello world"
    assert tok.encode(text, add_special=True) == tok.encode(text, add_special=False) == sp.encode(text)


def test_folder_with_tokenizer_model(tmp_path):
    path = fixture_path("spm-mistral-v1", "tokenizer.model")
    (tmp_path / "tokenizer.model").write_bytes(path.read_bytes())
    tok = polytok.load(tmp_path)
    assert tok.encode("Hello world") == spm.SentencePieceProcessor(model_file=str(path)).encode("Hello world")


@pytest.mark.slow
@pytest.mark.parametrize(("name", "filename"), FILES, ids=IDS)
def test_long_bench_slices_and_parse_mode(name, filename):
    """100k characters of each bench text, plain and with control pieces spliced in (run with -m slow)."""
    tok, sp, path = _pair(name, filename)
    controls = [sp.id_to_piece(i) for i in range(sp.get_piece_size()) if sp.is_control(i)]
    reports = []
    for bench in ("en", "code", "multi"):
        text = bench_slice(bench, 100000)
        report = ids_mismatch(path, text, "encode", sp.encode(text), tok.encode(text), tok.id_to_token)
        if report:
            reports.append(report)
        words = text.split(" ")
        marked = " ".join(w + controls[i % len(controls)] if i % 50 == 7 else w for i, w in enumerate(words))
        report = ids_mismatch(path, marked, "parse", reference_parse(sp, marked),
                              tok.encode(marked, special="parse"), tok.id_to_token)
        if report:
            reports.append(report)
    assert not reports, f"{len(reports)} mismatches; first ones:\n" + "\n\n".join(reports[:5])
