"""HF folder -> polytok's GGUF (to_gguf) -> write_hf_folder -> HF tokenizers, against the original folder.

The fixture folders and llama.cpp's ids for the GGUF converted from each are
tests/golden/convert's (see test_convert.py; test_convert.py holds polytok's GGUF
to those ids), or tests/golden/convert/default's where polytok's default GGUF is
not the converter's (test_convert_default.py). The folder written back from the GGUF must give llama.cpp's ids on
every row, and so HF's ids on the original folder wherever llama.cpp reading the
converted GGUF agrees with HF on the original (where it does not, the GGUF
conversion itself changed the behaviour: e.g. ``</s>`` made an end-of-generation
control token, or the clean-up; those rows are counted, not asserted). Folders
whose GGUF has a behaviour with no tokenizer.json form are refused, with the reasons
asserted. The edited folders of tests/golden/convert/edited (test_convert_pre_structure.py)
go the same way; a folder with only a tokenizer.model is compared with sentencepiece.
"""

from __future__ import annotations

import pytest

pytest.importorskip("gguf")
tokenizers = pytest.importorskip("tokenizers")

from formats.test_convert import build_folder, golden  # noqa: E402
from formats.test_convert_default import NAMES as DEFAULT_NAMES  # noqa: E402
from formats.test_convert_default import default_golden  # noqa: E402
from polytok.convert.converter import to_gguf  # noqa: E402
from polytok.convert.gguf_to_hf import write_hf_folder  # noqa: E402
from polytok.convert.outcome import ConversionRefused  # noqa: E402

# folder -> the phrases of its refusal reasons (None: converted exactly)
OUTCOMES: dict[str, list[str] | None] = {
    "gpt2": None, "llama3": None, "qwen3": None,
    "llama2": None, "mistral-v3-hf-converted": None, "phi-3-mini": None,
    "bert-base-uncased": ["strip_accents", "lowercase", "no tokenizer.json puts a mark before every word"],
    "arctic": ["not an entry itself"],
    "internlm2": None,
    "llama-redefined": ["not an entry itself"],
}
QUICK = {"gpt2", "llama2", "arctic", "internlm2", "llama-redefined"}


def _param(name: str) -> object:
    return pytest.param(name, marks=() if name in QUICK else pytest.mark.slow)


def reference_of(folder):
    """row -> the original folder's ids: HF tokenizers on its tokenizer.json, or sentencepiece on a
    tokenizer.model alone (with the BOS when add_special)."""
    if (folder / "tokenizer.json").exists():
        original = tokenizers.Tokenizer.from_file(str(folder / "tokenizer.json"))

        def hf(row: dict) -> list[int]:
            original.encode_special_tokens = not row["parse_special"]
            return original.encode(row["text"], add_special_tokens=row["add_special"]).ids
        return hf
    spm = pytest.importorskip("sentencepiece").SentencePieceProcessor(model_file=str(folder / "tokenizer.model"))
    return lambda row: [spm.bos_id()] * row["add_special"] + spm.encode(row["text"])


@pytest.mark.parametrize("name", [_param(n) for n in OUTCOMES])
def test_folder_to_gguf_to_hf_folder(name, tmp_path):
    header, rows = default_golden(name) if name in DEFAULT_NAMES else golden(name)
    folder = build_folder(name, header, tmp_path)
    gguf = tmp_path / f"{name}.gguf"
    to_gguf(folder, gguf)
    expected = OUTCOMES[name]
    if expected is not None:
        with pytest.raises(ConversionRefused) as refused:
            write_hf_folder(str(gguf), str(tmp_path / "hf"))
        reasons = refused.value.reasons
        assert len(reasons) == len(expected) and all(
            any(phrase in r for r in reasons) for phrase in expected), reasons
        return
    assert_round_trip(gguf, folder, rows, tmp_path)


def assert_round_trip(gguf, folder, rows: list[dict], tmp_path) -> None:
    """The folder written from `gguf` gives llama.cpp's ids on every row, so the original folder's
    on the rows where llama.cpp agrees with it (most rows)."""
    write_hf_folder(str(gguf), str(tmp_path / "hf"))
    mine = tokenizers.Tokenizer.from_file(str(tmp_path / "hf" / "tokenizer.json"))
    original = reference_of(folder)
    bad, agreeing = [], 0
    for row in rows:
        mine.encode_special_tokens = not row["parse_special"]
        got = mine.encode(row["text"], add_special_tokens=row["add_special"]).ids
        if got != row["ids"]:
            bad.append(f"{row['name']} add_special={row['add_special']} parse_special={row['parse_special']}: "
                       f"{got[:12]} != llama.cpp {row['ids'][:12]}")
        agreeing += original(row) == row["ids"]
    assert not bad, f"{len(bad)} of {len(rows)} rows differ:\n" + "\n".join(bad[:8])
    assert agreeing >= 0.9 * len(rows)  # the original folder's ids are checked on most rows


@pytest.mark.parametrize("name", ["gpt2-added", *[pytest.param(n, marks=pytest.mark.slow) for n in (
    "gpt2-renumbered", "llama3-renamed", "qwen3-added", "olmo-added")]])
def test_edited_folder_to_gguf_to_hf_folder(name, tmp_path):
    """The edited fixture folders (a token appended, a special token renamed, two ids swapped),
    whose GGUF llama.cpp read for tests/golden/convert/edited; OLMo's special texts overlap
    (``|||PHONE_NUMBER|||``'s end is ``|||EMAIL_ADDRESS|||``'s start) and it is refused."""
    from formats.test_convert_pre_structure import build_edited, edited_golden

    header, rows = edited_golden(name)
    folder = build_edited(name, header, tmp_path)
    gguf = tmp_path / f"{name}.gguf"
    to_gguf(folder, gguf)
    if name == "olmo-added":
        with pytest.raises(ConversionRefused) as refused:
            write_hf_folder(str(gguf), str(tmp_path / "hf"))
        assert [r.split(":")[0] for r in refused.value.reasons] == [
            "special tokens '|||PHONE_NUMBER|||' and '|||EMAIL_ADDRESS|||' overlap"]
        return
    assert_round_trip(gguf, folder, rows, tmp_path)
