"""Write llama.cpp's outputs for texts where a character has no token between characters that merge.

llama.cpp's BPE (``llm_tokenizer_bpe_session::tokenize``, src/llama-vocab.cpp)
keeps such a character as a symbol while merging, so no merge crosses it, and
drops it (or writes its ``<0xHH>`` byte tokens) only when it writes the ids; HF
tokenizers drops it before merging. These rows pin polytok's
``BPE(unknown_chars="block")`` for GGUF files.

Run (needs ``pip install llama-cpp-python==0.3.36``, which compiles llama.cpp,
and ``gguf``, the format's official writer):

    python tools/gen_llama_unknown_chars.py [--vocab-dir DIR]

Writes into ``tests/golden/gguf/unknown_chars/``:

- ``synthetic-bytelevel.gguf``: a byte-level (``gpt2``, pre ``gpt-2``) vocabulary
  of the 256 byte characters but those of ``x``, ``\\x0b`` and byte 0xA9, with the
  merges ``a b``, ``ab c``, ``Ġ Ġ``, ``Ċ ĠĠ``, ``Ċ Ċ`` and ``Ã a``: ``"axbc"`` is
  ``abc`` if ``x`` is dropped before merging, ``a``, ``b``, ``c`` if it blocks;
  ``"éa"`` (bytes C3 A9 61) shows it inside a character.
- ``synthetic-gemma4.gguf``: a ``gemma4`` vocabulary (not byte-encoded: byte
  tokens ``<0xHH>``) lacking ``x`` and ``<0xA9>``, with the merges ``a b``,
  ``ab c`` and ``<0x78> b``: llama.cpp writes ``x`` as ``<0x78>`` after merging
  (so ``<0x78> b`` never applies) and ``é`` as ``<0xC3>`` alone.
- ``<name>.jsonl.gz`` for those two and for the sdist's BPE vocabularies whose
  missing characters can occur in UTF-8 text (falcon, refact, starcoder; the
  bytes gpt-neox and mpt lack, C0 C1 F5-FF, never do) and gemma-4: a header
  (engine, version, file, sha256), then tools/gen_llama_goldens.py's rows (ids
  in three modes, detokenized bytes) for each text, and for all of them joined
  by spaces (row ``"long"``: long words, word cuts, the bulk paths). A
  vocabulary's texts put each character it lacks (read from the file with
  ``gguf``) between the two characters of its first merges of two ASCII
  characters and into a few fixed contexts.

The tests (tests/formats/test_gguf_unknown_chars.py) read these frozen files.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from gen_llama_goldens import ROOT, Vocab, mode_rows  # noqa: E402
from make_synthetic_gguf import byte_chars  # noqa: E402

OUT = ROOT / "tests" / "golden" / "gguf" / "unknown_chars"
SDIST = ["falcon", "refact", "starcoder", "gemma-4"]
NORMAL, CONTROL, BYTE = 1, 3, 6
CONTEXTS = ["\n{}  ", "\n{}\n", " {} ", "\t{}\t", "{}{}", "a{}b", "1{}2", ".{}.", " {}the", "{}", "\n{}{}  ",
            "  {}  ", "ab{}c", "x{}y"]
MERGES_PER_CHAR = 6

BYTELEVEL_MISSING = [ord("x"), 0x0B, 0xA9]
BYTELEVEL_MERGES = [("a", "b"), ("ab", "c"), ("Ġ", "Ġ"), ("Ċ", "ĠĠ"), ("Ċ", "Ċ"), ("Ã", "a")]
BYTELEVEL_TEXTS = ["axbc", "axb", "abxc", "xab", "abx", "axxb", "x", "xx", "abc", "axb axbc", "\n\x0b  ", "\n\x0b\n",
                   " \x0b ", "\n  ", "\n\n", "éa", "aéa", "é", "a\u00a9b", "ab\x0bc", "\n\x0b\x0b  ", "abcxabc"]
GEMMA4_MERGES = [("a", "b"), ("ab", "c"), ("<0x78>", "b")]
GEMMA4_TEXTS = ["axb", "axbc", "abxc", "xb", "x", "aéb", "é", "abéc", "a x b", "axb\naxb", "\n\n", "abc"]


def write_gguf(path: Path, model: str, pre: str | None, tokens: list[str], types: list[int],
               merges: list[tuple[str, str]], bos: int | None) -> None:
    import gguf

    w = gguf.GGUFWriter(str(path), "llama")
    w.add_name(path.stem)
    for key, value in (("block_count", 1), ("context_length", 64), ("embedding_length", 8),
                       ("feed_forward_length", 8), ("attention.head_count", 1), ("attention.head_count_kv", 1),
                       ("vocab_size", len(tokens)), ("rope.dimension_count", 8)):
        w.add_uint32(f"llama.{key}", value)
    w.add_float32("llama.attention.layer_norm_rms_epsilon", 1e-5)
    w.add_tokenizer_model(model)
    if pre is not None:
        w.add_tokenizer_pre(pre)
    w.add_token_list(tokens)
    w.add_token_types(types)
    w.add_token_merges([f"{a} {b}" for a, b in merges])
    if bos is not None:
        w.add_bos_token_id(bos)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.close()


def bytelevel_vocab() -> tuple[list[str], list[int], list[tuple[str, str]]]:
    """Tokens (ids are positions), token types and merges of ``synthetic-bytelevel``."""
    chars = byte_chars()
    tokens = [c for b, c in enumerate(chars) if b not in BYTELEVEL_MISSING]
    tokens += [a + b for a, b in BYTELEVEL_MERGES]
    return tokens, [NORMAL] * len(tokens), BYTELEVEL_MERGES


def gemma4_vocab() -> tuple[list[str], list[int], list[tuple[str, str]]]:
    """Tokens, token types and merges of ``synthetic-gemma4`` (id 0 is its BOS)."""
    tokens = ["<bos>"] + [f"<0x{b:02X}>" for b in range(256) if b != 0xA9]
    types = [CONTROL] + [BYTE] * (len(tokens) - 1)
    plain = ["a", "b", "c", "y", "\u2581", "\n"] + [a + b for a, b in GEMMA4_MERGES]
    return tokens + plain, types + [NORMAL] * len(plain), GEMMA4_MERGES


def missing_texts(path: Path) -> list[str]:
    """Texts that put each character the vocabulary lacks between characters that merge."""
    from gguf import GGUFReader

    fields = GGUFReader(str(path)).fields
    tokens = set(fields["tokenizer.ggml.tokens"].contents())
    merges = fields["tokenizer.ggml.merges"].contents()
    chars = byte_chars()
    plain = {c: chr(b) for b, c in enumerate(chars) if b < 0x80}
    if fields["tokenizer.ggml.model"].contents() == "gemma4":  # not byte-encoded: characters it has no token for
        unknown = [ch for ch in ("\U00040000", "\U000e0100", "\U0001fae8", "\u0378", "\uffff") if ch not in tokens]
        pairs = [("t", "h"), ("a", "b"), ("\u2581", "t")]
    else:
        unknown = []
        for b, c in enumerate(chars):
            if c in tokens:
                continue
            if b < 0x80:
                unknown.append(chr(b))
            elif 0xF1 <= b <= 0xF3:  # a lead byte: the first character of its block
                unknown.append(chr((b - 0xF0) << 18))
        pairs = []
        for merge in merges:
            left, _, right = merge.partition(" ")
            if left in plain and right in plain:
                pairs.append((plain[left], plain[right]))
            if len(pairs) == MERGES_PER_CHAR:
                break
    texts = [f"{a}{ch}{b}" for ch in unknown for a, b in pairs]
    texts += [context.format(ch, ch) for ch in unknown for context in CONTEXTS]
    return list(dict.fromkeys(texts))


def generate(name: str, path: Path, texts: list[str]) -> None:
    import llama_cpp

    vocab = Vocab(path)
    header = {"engine": "llama-cpp-python", "version": llama_cpp.__version__, "file": path.name,
              "sha256": hashlib.sha256(path.read_bytes()).hexdigest()}
    cases = [(f"unknown-{i}", t) for i, t in enumerate(texts)] + [("long", " ".join(texts))]
    rows = [header, *mode_rows(vocab, cases)]
    vocab.close()
    data = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows).encode("utf-8")
    (OUT / f"{name}.jsonl.gz").write_bytes(gzip.compress(data, mtime=0))
    print(f"{name}: {len(texts)} texts", file=sys.stderr)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--vocab-dir", type=Path, help="folder holding ggml-vocab-*.gguf "
                    "(default: fetched from the llama-cpp-python sdist by tests/fixtures.py)")
    args = ap.parse_args()
    OUT.mkdir(parents=True, exist_ok=True)
    write_gguf(OUT / "synthetic-bytelevel.gguf", "gpt2", "gpt-2", *bytelevel_vocab(), bos=None)
    write_gguf(OUT / "synthetic-gemma4.gguf", "gemma4", None, *gemma4_vocab(), bos=0)
    generate("synthetic-bytelevel", OUT / "synthetic-bytelevel.gguf", BYTELEVEL_TEXTS)
    generate("synthetic-gemma4", OUT / "synthetic-gemma4.gguf", GEMMA4_TEXTS)
    vocab_dir = args.vocab_dir
    if vocab_dir is None:
        sys.path.insert(0, str(ROOT / "tests"))
        from fixtures import gguf_vocab_path

        vocab_dir = gguf_vocab_path(SDIST[0]).parent
    for name in SDIST:
        path = vocab_dir / f"ggml-vocab-{name}.gguf"
        generate(name, path, missing_texts(path))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
