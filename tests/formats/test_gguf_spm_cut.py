"""The word cut of GGUF SPM vocabularies (formats.gguf ``_spm_word_cut``) against llama.cpp.

polytok cuts SPM text before every run of ``"▁"`` (so each word is merged and cached
alone) only when no vocabulary entry holds ``"▁"`` right after another character.
Two tiny SPM vocabularies pin both sides of that test: ``plain`` has no such entry
(the cut is taken), ``crossing`` holds ``"b▁"`` and ``"b▁▁c"`` whose merges cross
the cut (the cut must be refused, or the ids change).

llama.cpp's ids are frozen in tests/golden/gguf/spm_cut.json, recorded by running
this file as a script (``python tests/formats/test_gguf_spm_cut.py``, which needs
llama-cpp-python 0.3.36 and writes its version into the file).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from gguf_pack import ARRAY, FLOAT32, INT32, STRING, pack_gguf  # noqa: E402

GOLDEN = HERE.parent / "golden" / "gguf" / "spm_cut.json"
BASE = [("▁", -1.0), ("a", -2.0), ("b", -2.0), ("c", -2.0), ("ab", -3.0), ("▁a", -1.5), ("▁b", -1.6),
        ("▁▁", -0.5), ("bc", -2.5), ("▁ab", -2.0)]
VOCABS = {"plain": BASE, "crossing": BASE + [("b▁", -0.1), ("b▁▁c", -0.2), ("b▁▁", -0.3)]}
TEXTS = ["ab ab", "ab  c", "b b", "a b  c ab", " ab", "ab   ", "b  c b c", "abc  abc  ab   c",
         "a\u2581b", "b\u2581\u2581c"]


def write_vocab(path: Path, name: str) -> Path:
    entries = VOCABS[name]
    tokens = ["<unk>", "<s>", "</s>"] + [f"<0x{b:02X}>" for b in range(256)] + [t for t, _ in entries]
    scores = [0.0] * 259 + [s for _, s in entries]
    types = [2, 3, 3] + [6] * 256 + [1] * len(entries)
    kvs = [("general.architecture", STRING, "llama"), ("tokenizer.ggml.model", STRING, "llama"),
           ("tokenizer.ggml.tokens", (ARRAY, STRING), tokens), ("tokenizer.ggml.scores", (ARRAY, FLOAT32), scores),
           ("tokenizer.ggml.token_type", (ARRAY, INT32), types)]
    out = path / f"spm-cut-{name}.gguf"
    out.write_bytes(pack_gguf(kvs))
    return out


@pytest.mark.parametrize("name", sorted(VOCABS))
def test_ids_equal_llama_cpp(tmp_path, name):
    import polytok

    golden = json.loads(GOLDEN.read_text(encoding="utf-8"))
    tok = polytok.load(write_vocab(tmp_path, name))
    for text, expected in zip(TEXTS, golden["ids"][name]):
        assert tok.encode(text, add_special=False, special="text") == expected, text


def test_the_cut_is_taken_only_without_crossing_entries(tmp_path):
    import polytok

    assert polytok.load(write_vocab(tmp_path, "plain")).pre_tokenizer is not None
    assert polytok.load(write_vocab(tmp_path, "crossing")).pre_tokenizer is None


def record() -> None:
    import tempfile

    import llama_cpp

    ids: dict[str, list[list[int]]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name in sorted(VOCABS):
            model = llama_cpp.Llama(model_path=str(write_vocab(Path(tmp), name)), vocab_only=True, verbose=False)
            ids[name] = [model.tokenize(t.encode("utf-8"), add_bos=False, special=False) for t in TEXTS]
    head = {"engine": f"llama-cpp-python {llama_cpp.__version__}",
            "call": "tokenize(text, add_bos=False, special=False)", "texts": TEXTS}
    lines = [json.dumps(head, ensure_ascii=False)[:-1] + ', "ids": {']
    lines += [f' "{name}": {json.dumps(rows)}' + ("," if n < len(ids) - 1 else "") for n, (name, rows) in
              enumerate(ids.items())]
    GOLDEN.write_text("\n".join(lines) + "\n}}\n", encoding="utf-8")


if __name__ == "__main__":
    record()
