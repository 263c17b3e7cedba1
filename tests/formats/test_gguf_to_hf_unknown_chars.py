"""A byte-level GGUF missing the symbol of a byte UTF-8 text can hold, written to a folder.

llama.cpp drops such a byte and joins nothing across it; HF's BPE would join across the
gap, so the written tokenizer.json cuts the piece at the byte's symbol and removes it
(a ``Split`` after ``ByteLevel``). HF tokenizers on the written folder must give
llama.cpp's ids on the rows of tools/gen_llama_unknown_chars.py
(tests/golden/gguf/unknown_chars, llama-cpp-python 0.3.36): the synthetic byte-level
vocabulary and falcon, refact and starcoder (falcon forced: its overlapping special
texts are refused on their own, and no row holds them).
"""

from __future__ import annotations

import pytest

tokenizers = pytest.importorskip("tokenizers")

from formats.test_gguf_unknown_chars import _golden, _path  # noqa: E402
from polytok.convert.gguf_to_hf import write_hf_folder  # noqa: E402

NAMES = ["synthetic-bytelevel", pytest.param("refact", marks=pytest.mark.slow),
         pytest.param("starcoder", marks=pytest.mark.slow), pytest.param("falcon", marks=pytest.mark.slow)]


@pytest.mark.parametrize("name", NAMES)
def test_written_folder_gives_llama_cpps_ids_around_a_missing_byte(name, tmp_path):
    _, rows = _golden(name)
    written = write_hf_folder(str(_path(name)), str(tmp_path / "hf"), force=name == "falcon")
    assert not [n for n in written.notes if "byte symbols" in n]
    hf = tokenizers.Tokenizer.from_file(str(tmp_path / "hf" / "tokenizer.json"))
    bad = []
    for row in rows:
        hf.encode_special_tokens = not row["parse_special"]
        got = hf.encode(row["text"], add_special_tokens=row["add_special"]).ids
        if got != row["ids"]:
            bad.append((row["text"][:30], row["add_special"], row["parse_special"], got[:10], row["ids"][:10]))
    assert not bad, f"{len(bad)} of {len(rows)} rows differ: {bad[:4]}"
