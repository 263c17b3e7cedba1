"""Make the two small synthetic model folders of tests/data/convert/ (token redefinitions).

- ``arctic``: a SentencePiece BPE model (byte fallback, like Llama's) whose
  pieces include 弘 and 给, with a ``tokenizer_config.json`` that gives those two
  ids the texts ``<|im_start|>`` / ``<|im_end|>`` (what Snowflake Arctic Instruct
  does to ids 31998/31999), and a ``config.json`` naming ``ArcticForCausalLM``.
- ``internlm2``: a model with six user-defined pieces ``[UNUSED_TOKEN_141]`` …
  ``[UNUSED_TOKEN_146]`` that ``tokenizer_config.json`` renames ``<|plugin|>`` …
  ``<|im_end|>``, ``<|im_start|>`` (InternLM2 chat; ``[UNUSED_TOKEN_147]`` is left as it is), ``config.json`` naming
  ``InternLM2ForCausalLM``.
- ``llama-redefined``: the arctic model under ``LlamaForCausalLM`` (llama.cpp's
  generic SentencePiece rule, which differs from Arctic's on types and scores),
  with one non-special redefinition too.

Models are trained by sentencepiece 0.2.3's own trainer on a text written here;
expected ids never come from this script. Run:
``python tools/make_redefinition_folders.py [OUT_DIR]`` (default tests/data/convert).
"""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import sentencepiece as spm

LINES = [
    "The quick brown fox jumps over the lazy dog.",
    "Hello world, hello there, hello again!",
    "Numbers: 12345 and 67890, also 3.14159.",
    "弘扬 给你 弘 给 我们 你好 世界 中文 文字",
    "A foo bar baz sentence with foo and bar and baz.",
    "Repeat repeat repeat the words the words.",
]
BASE = {"vocab_size": 420, "model_type": "bpe", "byte_fallback": True, "character_coverage": 1.0,
        "split_digits": True, "allow_whitespace_only_pieces": True, "remove_extra_whitespaces": False,
        "normalization_rule_name": "identity", "bos_id": 1, "eos_id": 2, "unk_id": 0, "pad_id": -1}
UNUSED = [f"[UNUSED_TOKEN_{n}]" for n in range(141, 148)]  # 147 stays: UNUSED in the GGUF
INTERN_NEW = ["<|plugin|>", "<|interpreter|>", "<|action_end|>", "<|action_start|>", "<|im_end|>", "<|im_start|>"]
CONFIG = {"num_hidden_layers": 1, "hidden_size": 64, "num_attention_heads": 1, "num_key_value_heads": 1,
          "intermediate_size": 128, "max_position_embeddings": 512, "rms_norm_eps": 1e-5,
          "bos_token_id": 1, "eos_token_id": 2}


def train(**options: object) -> bytes:
    model = io.BytesIO()
    spm.SentencePieceTrainer.train(sentence_iterator=iter(LINES * 3), model_writer=model, **{**BASE, **options})
    return model.getvalue()


def entry(content: str, special: bool) -> dict[str, object]:
    return {"content": content, "lstrip": False, "normalized": False, "rstrip": False, "single_word": False,
            "special": special}


def base_decoder() -> dict[str, object]:
    return {"0": entry("<unk>", True), "1": entry("<s>", True), "2": entry("</s>", True)}


def write(folder: Path, model: bytes, decoder: dict[str, object], arch: str, vocab_size: int,
          extra: dict[str, object] | None = None) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "tokenizer.model").write_bytes(model)
    config = {"add_bos_token": True, "add_eos_token": False, "added_tokens_decoder": decoder,
              "bos_token": "<s>", "eos_token": "</s>", "unk_token": "<unk>", "pad_token": None,
              "tokenizer_class": "LlamaTokenizer", "legacy": True, **(extra or {})}
    (folder / "tokenizer_config.json").write_text(json.dumps(config, indent=2, ensure_ascii=False) + "\n",
                                                  encoding="utf-8")
    (folder / "config.json").write_text(json.dumps({"architectures": [arch], "vocab_size": vocab_size, **CONFIG},
                                                   indent=2) + "\n", encoding="utf-8")


def main(out: Path) -> None:
    plain = train()
    sp = spm.SentencePieceProcessor(model_proto=plain)
    a, b = sp.piece_to_id("弘"), sp.piece_to_id("给")
    assert sp.id_to_piece(a) == "弘" and sp.id_to_piece(b) == "给", "retrain: 弘/给 must be pieces"
    arctic = {**base_decoder(), str(a): entry("<|im_start|>", True), str(b): entry("<|im_end|>", True)}
    template = "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}"
    write(out / "arctic", plain, arctic, "ArcticForCausalLM", sp.get_piece_size(),
          {"eos_token": "<|im_end|>", "chat_template": template})
    c = sp.piece_to_id("你")
    llama = {**arctic, str(c): entry("<tool▁call>", False)}
    write(out / "llama-redefined", plain, llama, "LlamaForCausalLM", sp.get_piece_size())
    intern = train(user_defined_symbols=",".join(UNUSED))
    sp = spm.SentencePieceProcessor(model_proto=intern)
    ids = [sp.piece_to_id(u) for u in UNUSED]
    decoder = {**base_decoder(), **{str(i): entry(t, True) for i, t in zip(ids, INTERN_NEW)}}
    write(out / "internlm2", intern, decoder, "InternLM2ForCausalLM", sp.get_piece_size(),
          {"chat_template": template})
    for name in ("arctic", "llama-redefined", "internlm2"):
        print(name, sum(f.stat().st_size for f in (out / name).iterdir()), "bytes")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parent.parent / "tests/data/convert")
