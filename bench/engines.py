"""The benchmark's rows and, for each, how polytok and the reference engine load and encode.

Each row names one tokenizer file and the reference engine that owns its format;
each engine is called the way its users call it:

- tokenizer.json: ``tokenizers`` — ``encode(t, add_special_tokens=False)``,
  ``encode_batch(lines, add_special_tokens=False)`` (Rust threads, every core);
- GGUF: llama.cpp (llama-cpp-python, vocab only) — ``tokenize(b, add_bos=False,
  special=False)``, one call per line (it has no batch call);
- SentencePiece ``.model``: ``sentencepiece`` — ``encode(t)``, ``encode(lines)``
  (C++ threads, every core);
- tiktoken: ``tiktoken`` — ``encode_ordinary(t)``, ``encode_ordinary_batch(lines)``
  (a thread pool; the Rust core releases the GIL);
- tekken: mistral-common's ``Tekkenizer`` — ``encode(t, bos=False, eos=False)``,
  one call per line.

polytok encodes with ``add_special=False`` and special markers as text (the
bench texts hold none), and ``encode_batch`` for lines (forked processes, every
core).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "src"))


@dataclass(frozen=True)
class Row:
    """One benchmark row: a fixture file, its format and its model type."""

    name: str
    kind: str  # hf | gguf | spm | tiktoken | tekken
    model_type: str
    file: str = ""

    def path(self) -> Path:
        from fixtures import HF_JSON_FIXTURES, fixture_path, gguf_vocab_path

        if self.kind == "gguf":
            return gguf_vocab_path(self.name)
        return fixture_path(self.name, self.file or HF_JSON_FIXTURES[self.name])

    @property
    def label(self) -> str:
        suffix = {"hf": "", "gguf": ".gguf", "spm": " (.model)", "tiktoken": " (.tiktoken)", "tekken": " (tekken)"}
        return self.name + suffix[self.kind]


ROWS = [
    Row("gpt2", "hf", "byte-level BPE"), Row("llama3", "hf", "byte-level BPE"), Row("qwen3", "hf", "byte-level BPE"),
    Row("roberta-base", "hf", "byte-level BPE"),
    Row("llama2", "hf", "SentencePiece BPE"), Row("gemma3", "hf", "SentencePiece BPE"),
    Row("mistral-v3-hf-converted", "hf", "SentencePiece BPE"),
    Row("albert-base-v2-tf5", "hf", "Unigram"), Row("bert-base-uncased", "hf", "WordPiece"),
    Row("llama-bpe", "gguf", "byte-level BPE"), Row("llama-spm", "gguf", "SentencePiece BPE"),
    Row("qwen2", "gguf", "byte-level BPE"), Row("gemma-4", "gguf", "SentencePiece BPE"),
    Row("bert-bge", "gguf", "WordPiece"),
    Row("spm-mistral-v1", "spm", "SentencePiece BPE", "tokenizer.model"),
    Row("spm-bpemb-en-100k", "spm", "SentencePiece BPE", "spm.model"),
    Row("spm-botchan-unigram-1000", "spm", "Unigram", "spm.model"),
    Row("spm-kyoto-ja-unigram-8000", "spm", "Unigram", "spm.model"),
    Row("cl100k_base-tiktoken", "tiktoken", "byte-level BPE", "cl100k_base.tiktoken"),
    Row("llama3-tiktoken", "tiktoken", "byte-level BPE", "tokenizer.model"),
    Row("tekken-240718", "tekken", "byte-level BPE", "tekken.json"),
]
QUICK = ["gpt2", "llama2", "bert-base-uncased", "llama-spm", "spm-botchan-unigram-1000", "cl100k_base-tiktoken",
         "tekken-240718"]
ENGINE_MODULE = {"hf": "tokenizers", "gguf": "llama_cpp", "spm": "sentencepiece", "tiktoken": "tiktoken",
                 "tekken": "mistral_common"}


def engine_version(kind: str) -> str:
    import importlib

    module = importlib.import_module(ENGINE_MODULE[kind])
    name = {"llama_cpp": "llama-cpp-python", "mistral_common": "mistral-common"}.get(module.__name__, module.__name__)
    return f"{name} {getattr(module, '__version__', '?')}"


def polytok_side(row: Row) -> tuple[Callable[[], Any], Callable[[Any, str], list[int]],
                                     Callable[[Any, list[str]], list[list[int]]]]:
    import polytok

    path = row.path()

    def load() -> Any:
        tok = polytok.load(path)
        tok.truncation = tok.padding = None  # whole texts (gpt2's and albert's files truncate)
        return tok

    return (load,
            lambda tok, text: tok.encode(text, add_special=False, special="text"),
            lambda tok, lines: tok.encode_batch(lines, add_special=False, special="text"))


def reference_side(row: Row) -> tuple[Callable[[], Any], Callable[[Any, str], Any], Callable[[Any, list[str]], Any]]:
    path = row.path()
    if row.kind == "hf":
        import tokenizers

        def load_hf() -> Any:
            ref = tokenizers.Tokenizer.from_file(str(path))
            ref.no_truncation()
            ref.no_padding()
            return ref

        return (load_hf,
                lambda ref, t: ref.encode(t, add_special_tokens=False).ids,
                lambda ref, lines: [e.ids for e in ref.encode_batch(lines, add_special_tokens=False)])
    if row.kind == "gguf":
        import llama_cpp

        def tokenize(ref: Any, t: str) -> list[int]:
            return list(ref.tokenize(t.encode("utf-8"), add_bos=False, special=False))

        return (lambda: llama_cpp.Llama(model_path=str(path), vocab_only=True, verbose=False), tokenize,
                lambda ref, lines: [tokenize(ref, t) for t in lines])
    if row.kind == "spm":
        import sentencepiece

        return (lambda: sentencepiece.SentencePieceProcessor(model_file=str(path)),
                lambda ref, t: ref.encode(t), lambda ref, lines: ref.encode(lines))
    if row.kind == "tiktoken":
        import hashlib

        import tiktoken
        from tiktoken.load import load_tiktoken_bpe

        from polytok.formats.tiktoken_known import KNOWN_RANKS

        # the split pattern tiktoken_ext gives this file (polytok's table of known files, by sha256)
        pattern = KNOWN_RANKS[hashlib.sha256(path.read_bytes()).hexdigest()].pattern

        def load() -> Any:
            return tiktoken.Encoding(row.name, pat_str=pattern, mergeable_ranks=load_tiktoken_bpe(str(path)),
                                     special_tokens={})

        return load, lambda ref, t: ref.encode_ordinary(t), lambda ref, lines: ref.encode_ordinary_batch(lines)
    from mistral_common.tokens.tokenizers.tekken import Tekkenizer

    return (lambda: Tekkenizer.from_file(str(path)), lambda ref, t: ref.encode(t, bos=False, eos=False),
            lambda ref, lines: [ref.encode(t, bos=False, eos=False) for t in lines])
