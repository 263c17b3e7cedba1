"""The read-back check of ``polytok convert`` (polytok.convert.check), held to the reference engines.

For every folder of the convert goldens, the texts on which the check found the
GGUF's ids to differ from the folder's tokenizer must be exactly those on which
the engines differ: the folder's own engine run live (HF tokenizers 0.23.3 on its
tokenizer.json, untruncated; sentencepiece 0.2.3 on its tokenizer.model)
against llama.cpp's ids on its own converter's GGUF (tests/golden/convert, made by
tools/gen_convert_goldens.py with llama-cpp-python 0.3.36; polytok writing with
``like_converter``), and on polytok's default GGUF where that differs
(tests/golden/convert/default). So every difference the
check excuses by name is one llama.cpp really has, and none is missed. A GGUF
broken on purpose on each converter path must make the check fail, naming a text.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from polytok.convert.texts import CHECK_TEXTS
from polytok.errors import PolytokError

from .test_convert import NAMES, build_folder, converted_once, golden
from .test_convert_default import NAMES as DEFAULT_NAMES

pytest.importorskip("gguf")
from polytok.convert.check import DIFFERENCES, ConversionCheckError
from polytok.convert.converter import to_gguf

TEXTS = dict(CHECK_TEXTS)
MOVED = set("弘给你") | {"[UNUSED_TOKEN_14"}  # the pieces the synthetic folders redefine


@pytest.fixture(scope="module")
def checked(tmp_path_factory):
    once = converted_once(tmp_path_factory, like_converter=True)
    return lambda name: (*once(name)[:3], once(name)[4])


@pytest.fixture(scope="module")
def checked_default(tmp_path_factory):
    """polytok's default GGUF of a folder of tests/golden/convert/default, with llama.cpp's rows on it."""
    from .test_convert_default import default_golden

    once = converted_once(tmp_path_factory, default_golden)
    return lambda name: (*once(name)[:3], once(name)[4])


def _llama_cpp(header: dict, rows: list[dict], name: str, add_special: bool, special: str) -> list[int]:
    """llama.cpp's ids on its converter's GGUF; (False, text), not a golden mode, is the (True, text)
    row without the BOS/EOS llama.cpp added."""
    found = {(r["name"], r["add_special"], r["parse_special"]): r["ids"] for r in rows}
    key = (name, add_special, special == "parse")
    if key in found:
        return found[key]
    assert (add_special, special) == (False, "text")
    ids, facts = list(found[(name, True, False)]), header["facts"]
    if facts["add_bos"]:
        assert ids[0] == facts["special_ids"]["bos"]
        ids = ids[1:]
    if facts["add_eos"]:
        assert ids[-1] == facts["special_ids"]["eos"]
        ids = ids[:-1]
    return ids


def _engine(folder: Path):
    """The folder's own engine, live: encode(text, add_special, special) -> ids."""
    if (folder / "tokenizer.model").is_file():
        sp = pytest.importorskip("sentencepiece").SentencePieceProcessor(model_file=str(folder / "tokenizer.model"))
        return lambda text, add, special: list(sp.encode(text))
    hf = pytest.importorskip("tokenizers").Tokenizer.from_file(str(folder / "tokenizer.json"))
    hf.no_truncation()  # llama.cpp has none; the check compares untruncated ids too

    def encode(text: str, add: bool, special: str) -> list[int]:
        hf.encode_special_tokens = special == "text"
        return list(hf.encode(text, add_special_tokens=add).ids)
    return encode


@pytest.mark.parametrize("name", NAMES)
def test_check_differs_exactly_where_llama_cpp_differs_from_the_folders_engine(name, checked):
    assert_check_is_llama_cpp(*checked(name))


@pytest.mark.parametrize("name", DEFAULT_NAMES)
def test_check_of_default_gguf_differs_exactly_where_llama_cpp_does(name, checked_default):
    assert_check_is_llama_cpp(*checked_default(name))


def assert_check_is_llama_cpp(header, rows, folder, report) -> None:
    check = report.check
    engine = _engine(folder)
    modes = [(False, "text")] if (folder / "tokenizer.model").is_file() else [(True, "text"), (True, "parse")]
    assert check.compared >= len(CHECK_TEXTS) * len(modes)
    expected = set()
    for text_name, text in CHECK_TEXTS:
        if any(m in text for m in MOVED):
            continue
        for add_special, special in modes:
            if engine(text, add_special, special) != _llama_cpp(header, rows, text_name, add_special, special):
                expected.add((text_name, add_special, special))
    found = {(t, a, s) for t, a, s, _ in check.differing if t in TEXTS}
    assert found == expected, f"check only: {sorted(found - expected)}; engines only: {sorted(expected - found)}"
    assert {k for _, _, _, k in check.differing} <= set(DIFFERENCES)


def test_goldens_exercise_the_named_differences(checked):
    seen = set()
    for name in NAMES:
        seen |= set(checked(name)[3].check.known)
    # every named difference is met on the goldens' folders, but a redefinition in a tokenizer.json
    # (test_convert_redefinitions: test_tokenizer_json_added_token_on_a_base_id_replaces_its_text) and a
    # typed '▁' of an added token (test_convert_post_processor: ..._holding_the_space_mark_stays_normal) and a
    # no-break space before an lstrip token (there: test_lstrip_mask_is_written_under_the_twin_pre_name);
    # a byte no symbol spells (below: test_byte_level_vocabulary_missing_a_byte_symbol_is_named)
    assert seen == set(DIFFERENCES) - {"redefinition", "added-space-mark", "lstrip-space", "missing-byte-symbol"}, \
        sorted(set(DIFFERENCES) - seen)


# --- a broken GGUF fails the check, on every converter path --------------------------------------


def _broken(monkeypatch, module: str, attr: str, replace):
    import importlib

    mod = importlib.import_module(module)
    monkeypatch.setattr(mod, attr, replace(getattr(mod, attr)))


def _no_merges(read_special_vocab):
    def read(folder, **kw):
        sv = read_special_vocab(folder, **kw)
        sv.merges = []
        return sv
    return read


def _swap_two_tokens(vocab_fn):
    def build(*args, **kw):
        vocab = vocab_fn(*args, **kw)
        i = next(k for k, t in enumerate(vocab.tokens) if t.replace("\u2581", "") == "the")
        j = next(k for k, t in enumerate(vocab.tokens) if t.replace("\u2581", "") == "of")
        vocab.tokens[i], vocab.tokens[j] = vocab.tokens[j], vocab.tokens[i]
        return vocab
    return build


def _flat_scores(apply):
    def redefine(vocab, folder):
        vocab = apply(vocab, folder)
        vocab.scores = [0.0] * len(vocab.scores)
        return vocab
    return redefine


BROKEN = {  # folder -> (module, function, the break), one per converter path
    "qwen3": ("polytok.convert.families", "read_special_vocab", _no_merges),  # gpt2 path
    "bert-base-uncased": ("polytok.convert.families", "bert_vocab", _swap_two_tokens),
    "llama2": ("polytok.convert.families", "llama_hf_vocab", _swap_two_tokens),
    "arctic": ("polytok.convert.families", "apply", _flat_scores),  # sentencepiece path
}


@pytest.mark.parametrize("name", sorted(BROKEN))
def test_a_broken_gguf_fails_the_check_and_leaves_no_file(name, tmp_path, monkeypatch):
    header, _ = golden(name)
    folder = build_folder(name, header, tmp_path)
    _broken(monkeypatch, *BROKEN[name])
    out = tmp_path / "out.gguf"
    with pytest.raises(ConversionCheckError) as err:
        to_gguf(folder, out)
    message = str(err.value)
    assert "\n" not in message and "does not read back" in message
    assert any(f"text {n} " in message for n in TEXTS), message
    assert not out.exists() and not list(tmp_path.glob("*.partial"))


def test_a_gguf_polytok_cannot_read_back_is_refused(tmp_path):
    header, _ = golden("gpt2")
    folder = build_folder("gpt2", header, tmp_path)
    # a BPE GGUF naming BERT's pre-tokenizer: llama.cpp refuses it, and so does polytok's reader
    with pytest.raises(ConversionCheckError, match="cannot be read back"):
        to_gguf(folder, tmp_path / "out.gguf", pre="jina-v2-en")
    assert not (tmp_path / "out.gguf").exists()


def test_cli_check_failure_is_one_line_and_status_1(tmp_path, monkeypatch, capsys):
    from polytok.cli.main import main

    header, _ = golden("qwen3")
    folder = build_folder("qwen3", header, tmp_path)
    _broken(monkeypatch, *BROKEN["qwen3"])
    assert main(["convert", str(folder), str(tmp_path / "out.gguf")]) == 1
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "does not read back" in err
    assert not (tmp_path / "out.gguf").exists()


def test_cli_reports_the_check(checked, capsys, tmp_path):
    from polytok.cli.main import main

    _, _, folder, _ = checked("qwen3")
    assert main(["convert", str(folder), str(tmp_path / "q.gguf")]) == 0
    out = capsys.readouterr().out
    assert "check: " in out and "normalizer (1)" in out and (tmp_path / "q.gguf").is_file()


def test_difference_names_are_documented():
    import polytok.convert.check as module

    for name in DIFFERENCES:
        assert f"``{name}``" in (module.__doc__ or ""), name
    assert issubclass(ConversionCheckError, PolytokError)
    json.dumps(DIFFERENCES)


def test_byte_level_vocabulary_missing_a_byte_symbol_is_named(tmp_path):
    """Falcon's vocabulary has no symbol for some control bytes: the check tries each such byte, and
    where llama.cpp (polytok's GGUF reader) differs from HF, live, it names the difference."""
    from fixtures import fixture_path

    tokenizers = pytest.importorskip("tokenizers")
    folder = tmp_path / "falcon"
    folder.mkdir()
    (folder / "tokenizer.json").write_bytes(fixture_path("falcon", "tokenizer.json").read_bytes())
    report = to_gguf(folder, tmp_path / "out.gguf")
    named = {t for t, _, _, d in report.check.differing if d == "missing-byte-symbol"}
    assert named and all(t.startswith("byte ") for t in named)
    import polytok

    hf = tokenizers.Tokenizer.from_file(str(folder / "tokenizer.json"))
    written = polytok.load(tmp_path / "out.gguf")
    text = "a\x0bb !\x0b! 1\x0b1 (\x0b) \t\x0b\t"
    assert hf.encode(text, add_special_tokens=False).ids != written.encode(text, add_special=False)
