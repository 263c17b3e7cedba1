"""Write the small synthetic GGUF vocabularies that pin llama.cpp's special-token rules.

Run: ``python tools/make_synthetic_gguf.py`` (needs ``gguf``, the format's official
writer). Writes ``tests/golden/gguf/synthetic/<name>.gguf``; then
``python tools/gen_llama_goldens.py --synthetic`` records what llama.cpp does with
them. Each file is a byte-level BPE (``gpt2``) vocabulary: the 256 byte
characters as NORMAL tokens, the entries of one rule, and one merge no test
text can use (bytes 0x00 0x01; llama.cpp refuses a BPE file without merges):

- ``rules``: a NORMAL ``<|im_end|>`` (found as EOT by its text, so CONTROL) and a
  NORMAL ``<turn|>`` (an end-of-generation text: CONTROL too), a NORMAL ``<s>`` (not
  special by its shape), USER_DEFINED ``<u>``,
  ``XY`` and ``YZW`` (carved even when markers are read as text; longest first),
  a CONTROL ``<c>``;
- ``harmony``: ``<|return|>``, ``<|call|>``, ``<|end|>`` CONTROL (gpt-oss: ``<|end|>``
  becomes USER_DEFINED and leaves the EOG set), ``<|channel|>`` CONTROL (becomes
  USER_DEFINED);
- ``gemma4-eos``: ``<|tool_response>`` and ``</s>`` CONTROL (``</s>`` becomes an
  ordinary word);
- ``phi3-names``: general.name "phi-3-synthetic" (every special token gets RSTRIP,
  ``</s>`` too, and ``<unk>``/``<s>``/``<|endoftext|>`` lose it) with ``<|user|>`` CONTROL;
- ``jina-mask``: pre ``jina-v2-code`` (``<mask>`` gets LSTRIP);
- ``unused-mask``: general.name "Modern-BERT-synthetic" (lowercased, it names
  modern-bert: ``[MASK]`` gets LSTRIP), a CONTROL ``<unused0>`` (a control text
  holding "unused" is also UNUSED) and a USER_DEFINED ``<unused1>`` (not: the rule
  reads CONTROL tokens only).
"""

from __future__ import annotations

from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "tests" / "golden" / "gguf" / "synthetic"

NORMAL, UNKNOWN, CONTROL, USER_DEFINED = 1, 2, 3, 4

RULES = {
    "rules": ("synthetic-rules", "gpt-2",
              [("<|im_end|>", NORMAL), ("<turn|>", NORMAL), ("<s>", NORMAL), ("<u>", USER_DEFINED),
               ("XY", USER_DEFINED), ("YZW", USER_DEFINED), ("<c>", CONTROL)]),
    "harmony": ("synthetic-harmony", "gpt-2",
                [("<|return|>", CONTROL), ("<|call|>", CONTROL), ("<|end|>", CONTROL), ("<|channel|>", CONTROL)]),
    "gemma4-eos": ("synthetic-gemma4", "gpt-2", [("<|tool_response>", CONTROL), ("</s>", CONTROL)]),
    "phi3-names": ("phi-3-synthetic", "gpt-2",
                   [("<unk>", UNKNOWN), ("<s>", CONTROL), ("</s>", CONTROL), ("<|endoftext|>", CONTROL),
                    ("<|user|>", CONTROL)]),
    "jina-mask": ("synthetic-jina", "jina-v2-code", [("<mask>", CONTROL), ("<pad>", CONTROL)]),
    "unused-mask": ("Modern-BERT-synthetic", "gpt-2",
                    [("<unused0>", CONTROL), ("<unused1>", USER_DEFINED), ("[MASK]", CONTROL)]),
}


def byte_chars() -> list[str]:
    printable = [*range(0x21, 0x7F), *range(0xA1, 0xAD), *range(0xAE, 0x100)]
    table = {b: chr(b) for b in printable}
    extra = 0
    for b in range(256):
        if b not in table:
            table[b] = chr(0x100 + extra)
            extra += 1
    return [table[b] for b in range(256)]


def write(name: str, general_name: str, pre: str, entries: list[tuple[str, int]]) -> Path:
    import gguf

    chars = byte_chars()
    tokens = chars + [text for text, _ in entries] + [chars[0] + chars[1]]
    types = [NORMAL] * 256 + [kind for _, kind in entries] + [NORMAL]
    OUT.mkdir(parents=True, exist_ok=True)
    path = OUT / f"{name}.gguf"
    w = gguf.GGUFWriter(str(path), "llama")
    w.add_name(general_name)
    for key, value in (("block_count", 1), ("context_length", 64), ("embedding_length", 8),
                       ("feed_forward_length", 8), ("attention.head_count", 1), ("attention.head_count_kv", 1),
                       ("vocab_size", len(tokens)), ("rope.dimension_count", 8)):
        w.add_uint32(f"llama.{key}", value)
    w.add_float32("llama.attention.layer_norm_rms_epsilon", 1e-5)
    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre(pre)
    w.add_token_list(tokens)
    w.add_token_types(types)
    w.add_token_merges([f"{chars[0]} {chars[1]}"])
    w.add_bos_token_id(tokens.index("<s>") if "<s>" in tokens else 0)
    w.add_eos_token_id(tokens.index("</s>") if "</s>" in tokens else 1)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.close()
    return path


def main() -> int:
    for name, (general_name, pre, entries) in RULES.items():
        print(write(name, general_name, pre, entries))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
