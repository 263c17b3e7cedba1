"""Write the pieces llama.cpp's pre-tokenizer regexes cut texts into, as llama.cpp itself reports them.

llama.cpp has no call that returns the pieces of ``unicode_regex_split``; only ids
come out. So, for each ``tokenizer.ggml.pre`` name, this script writes a BPE
vocabulary in which llama.cpp's BPE turns every piece into exactly one token:

- the tokens are every substring (two characters or more) of the test texts, plus
  the single characters: the 256 byte characters for a byte-level pre type, else
  each character of the texts and the 256 ``<0xHH>`` byte tokens;
- the merges join every two-way cut of every such substring.

Inside a piece, any two neighbouring symbols spell a substring, which is a token
with a merge, so merging goes on until the piece is one token; no merge runs
across pieces (``llm_tokenizer_bpe_session::tokenize``, src/llama-vocab.cpp,
merges each word of the split alone). llama.cpp's ids therefore name the pieces,
one id each: the token's text, byte-decoded for a byte-level pre type.

Whether a pre type is byte-level (``byte_encode``) and whether it writes spaces
as U+2581 first (``escape_whitespaces``) is read from llama.cpp's own source in
the llama-cpp-python sdist (src/llama-vocab.cpp, fetched by tests/fixtures.py).
Texts of a U+2581 pre type must hold no space (the pieces would show U+2581).

Run (needs ``pip install llama-cpp-python==0.3.36``, which compiles llama.cpp,
and ``gguf``, the format's official writer):

    python tools/gen_llama_split_goldens.py

Cases: ``CASES`` of tests/pre_tokenizers/test_llama_regex_split.py, as
``(pre, text)``. Writes ``tests/golden/gguf/llama_splits.json``: the engine and
its version, the call, and per case ``[pre, text, ids, pieces]``, one a line.
The tests read this frozen file; they never need llama.cpp.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "tests" / "golden" / "gguf" / "llama_splits.json"
CALL = "llama_cpp.Llama(model_path, vocab_only=True).tokenize(text.encode(), add_bos=False, special=False)"
NORMAL = 1


def gpt2_byte_chars() -> list[str]:
    """GPT-2's byte -> character table (``bytes_to_unicode``), written out from its definition."""
    printable = [*range(0x21, 0x7F), *range(0xA1, 0xAD), *range(0xAE, 0x100)]
    chars, extra = {}, 0
    for b in range(256):
        if b in printable:
            chars[b] = chr(b)
        else:
            chars[b] = chr(256 + extra)
            extra += 1
    return [chars[b] for b in range(256)]


def vocabulary(texts: list[str], byte_level: bool) -> tuple[list[str], list[str]]:
    """Tokens and merges that make every piece of `texts` one token (see the module docstring)."""
    table = gpt2_byte_chars()
    spelled = ["".join(table[b] for b in t.encode("utf-8")) for t in texts] if byte_level else texts
    singles = table if byte_level else [f"<0x{b:02X}>" for b in range(256)] + sorted({c for t in texts for c in t})
    longer = sorted({s[i:j] for s in spelled for i in range(len(s)) for j in range(i + 2, len(s) + 1)},
                    key=lambda s: (len(s), s))
    tokens = list(dict.fromkeys(singles + longer))
    merges = [f"{s[:k]} {s[k:]}" for s in longer for k in range(1, len(s))]
    return tokens, merges


def write_gguf(path: Path, pre: str, tokens: list[str], merges: list[str]) -> Path:
    import gguf

    writer = gguf.GGUFWriter(str(path), "llama")
    writer.add_tokenizer_model("gpt2")
    writer.add_tokenizer_pre(pre)
    writer.add_token_list(tokens)
    writer.add_token_types([NORMAL] * len(tokens))
    writer.add_token_merges(merges)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.close()
    return path


def pre_type_facts() -> dict[str, tuple[bool, bool]]:
    """pre name -> (byte_encode, escape_whitespaces), read from llama.cpp's src/llama-vocab.cpp."""
    from fixtures import llama_cpp_source_path
    from pre_tokenizers.test_llama_pre_types import load_names, regex_lists

    src = llama_cpp_source_path("llama-vocab.cpp").read_text(encoding="utf-8")
    lists = regex_lists(src)
    return {name: (lists[enum][1], bool(flags.get("escape_whitespaces"))) for name, (enum, flags) in
            load_names(src).items()}


def record(folder: Path, cases: list[tuple[str, str]]) -> list[list]:
    import llama_cpp

    facts = pre_type_facts()
    table = {c: b for b, c in enumerate(gpt2_byte_chars())}
    rows = []
    for pre in dict.fromkeys(pre for pre, _ in cases):
        byte_level, escaped = facts[pre]
        texts = [text for p, text in cases if p == pre]
        if escaped and any(" " in t for t in texts):
            raise SystemExit(f"{pre} writes spaces as U+2581 first: its texts must hold no space")
        tokens, merges = vocabulary(texts, byte_level)
        path = write_gguf(folder / f"split-{len(rows)}.gguf", pre, tokens, merges)
        model = llama_cpp.Llama(model_path=str(path), vocab_only=True, verbose=False)
        for text in texts:
            ids = model.tokenize(text.encode("utf-8"), add_bos=False, special=False)
            spelled = [tokens[i] for i in ids]
            pieces = [bytes(table[c] for c in s).decode("utf-8") for s in spelled] if byte_level else spelled
            if "".join(pieces) != text:
                raise SystemExit(f"{pre} {text!r}: the tokens {spelled} do not spell the text")
            rows.append([pre, text, ids, pieces])
        model.close()
        print(f"{pre}: {len(texts)} texts, {len(tokens)} tokens, {len(merges)} merges, "
              f"sha256 {hashlib.sha256(path.read_bytes()).hexdigest()[:12]}", file=sys.stderr)
    return rows


def main() -> int:
    sys.path[:0] = [str(ROOT / "src"), str(ROOT / "tests")]
    import llama_cpp
    from pre_tokenizers.test_llama_regex_split import CASES

    with tempfile.TemporaryDirectory() as tmp:
        rows = record(Path(tmp), CASES)
    head = {"engine": "llama-cpp-python", "version": llama_cpp.__version__,
            "gguf_writer": f"gguf {importlib.metadata.version('gguf')}", "call": CALL,
            "written_by": "tools/gen_llama_split_goldens.py from tests/pre_tokenizers/test_llama_regex_split.py",
            "row": ["pre", "text", "ids", "pieces"]}
    lines = [json.dumps(head, ensure_ascii=False)[:-1] + ', "rows": [']
    lines += [f" {json.dumps(row, ensure_ascii=False)}" + ("," if i < len(rows) - 1 else "") for i, row in
              enumerate(rows)]
    OUT.write_text("\n".join(lines) + "\n]}\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
