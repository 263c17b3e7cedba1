"""SPM entries tied at the best score, written to a folder with a ranking proved to join as llama.cpp.

llama.cpp's SPM session joins the best-scored pair, the leftmost among equals
(llama-vocab.cpp ``llm_tokenizer_spm_session``); HF's BPE the lowest rank. Baichuan's
``-->``, ``---`` and ``▁t`` share the best score 0 (its llama.cpp goldens, under
``-m slow`` in test_gguf_to_hf.py, are exact). Here a vocabulary of that shape is
written and HF tokenizers on the folder is held to llama.cpp 0.3.36 on every text of its
alphabet up to `LONGEST` characters (tools/gen_gguf_to_hf_synthetic.py); a tie with no
ranking (``ab`` and ``ba`` at the best score) is refused.
"""

from __future__ import annotations

import itertools

import pytest

gguf = pytest.importorskip("gguf")
tokenizers = pytest.importorskip("tokenizers")

from polytok.convert.gguf_to_hf import write_hf_folder  # noqa: E402
from polytok.convert.outcome import ConversionRefused  # noqa: E402

from .synthetic_goldens import llama_cpp_outputs  # noqa: E402

LONGEST = 7


def spm_gguf(path, pieces: dict[str, float]) -> None:
    tokens = ["<unk>", "<s>", "</s>", *(f"<0x{b:02X}>" for b in range(256)), *pieces]
    types = [2, 3, 3, *[6] * 256, *[1] * len(pieces)]  # UNKNOWN, CONTROL, BYTE, NORMAL
    w = gguf.GGUFWriter(str(path), "llama")
    w.add_tokenizer_model("llama")
    w.add_tokenizer_pre("default")
    w.add_token_list(tokens)
    w.add_token_scores([0.0, 0.0, 0.0, *[0.0] * 256, *pieces.values()])
    w.add_token_types(types)
    w.add_bos_token_id(1)
    w.add_eos_token_id(2)
    w.add_unk_token_id(0)
    w.add_add_bos_token(False)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.close()


# baichuan's shape; and a made piece with a tied pair on each side ("a|cd|b": llama.cpp joins "acd")
SHAPES = {
    "baichuan": ({"-": -20.0, ">": -21.0, "\u2581": -22.0, "t": -23.0, "--": -5.0, "->": -6.0, "-->": 0.0,
                  "---": 0.0, "\u2581t": 0.0, "--->": -1.0, "\u2581t-": -2.0}, "->t "),
    "both-sides": ({"a": -20.0, "b": -21.0, "c": -22.0, "d": -23.0, "cd": -5.0, "cdb": 0.0, "acd": 0.0}, "abcd"),
}


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_tie_at_the_best_score_joins_as_llama_cpp(tmp_path, shape):
    pieces, alphabet = SHAPES[shape]
    spm_gguf(tmp_path / "v.gguf", pieces)
    write_hf_folder(str(tmp_path / "v.gguf"), str(tmp_path / "hf"))
    hf = tokenizers.Tokenizer.from_file(str(tmp_path / "hf" / "tokenizer.json"))
    llama, _ = llama_cpp_outputs(f"top-ties-{shape}", tmp_path / "v.gguf")
    bad = []
    for n in range(1, LONGEST + 1):
        for chars in itertools.product(alphabet, repeat=n):
            text = "".join(chars)
            if hf.encode(text, add_special_tokens=False).ids != llama[text]:
                bad.append(text)
    assert not bad, (len(bad), bad[:5])


def test_reversed_tie_at_the_best_score_is_refused(tmp_path):
    """``ab`` and ``ba`` at the best score: llama.cpp joins ``a|b|a`` as ``ab a`` and ``b|a|b`` as ``ba b``."""
    spm_gguf(tmp_path / "v.gguf", {"a": -10.0, "b": -11.0, "ab": 0.0, "ba": 0.0})
    with pytest.raises(ConversionRefused) as refused:
        write_hf_folder(str(tmp_path / "v.gguf"), str(tmp_path / "hf"))
    assert any("share the score" in r for r in refused.value.reasons)
