"""The ``convert`` subcommand: its parser and handler (`polytok.convert.proof.convert`)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING, Any

from .main import RAW, about, examples

if TYPE_CHECKING:
    from ..convert.proof import ConvertResult

__all__ = ["add_parser"]


def add_parser(sub: Any) -> dict[str, Any]:
    """Add ``convert`` to `sub`; returns its handler by name."""
    p = sub.add_parser("convert", help="write a tokenizer in another format, proven to tokenize the same",
                       formatter_class=RAW,
                       description=about(
                           "Write the tokenizer SRC (a model folder, tokenizer.json, GGUF, SentencePiece .model, "
                           "tiktoken file or tekken.json) as another format at DEST: hf (a folder with "
                           "tokenizer.json), gguf, sentencepiece (.model), tiktoken or tekken. The format is "
                           "--to, else what DEST's name says (*.gguf, *.model, *.tiktoken, *tekken*.json; a "
                           "folder or tokenizer.json is hf).",
                           "Every conversion is written beside DEST first and proven: the target format's "
                           "reference engine on the written file (polytok's reader when that engine is not "
                           "installed) must give the source engine's ids on the built-in texts and every line of "
                           "--check-corpus, in each mode both engines have. A difference leaves nothing at DEST "
                           "and exits with status 1 (--force writes it anyway). A target format that cannot "
                           "express the source exactly is refused, with each reason (--force writes the nearest "
                           "form where the writer has one: GGUF to a folder).",
                           "A model folder to a GGUF is written as llama.cpp's convert_hf_to_gguf.py would "
                           "(needs the extra polytok[convert]), but for a Llama tokenizer.json without "
                           "tokenizer.model the scores come from the merge ranks, so llama.cpp splits words as HF "
                           "does (--like-converter writes the converter's -1000); --pre, --base and "
                           "--like-converter apply to it only."),
                       epilog=examples("polytok convert model_dir/ tokenizer.gguf",
                                       "polytok convert model_dir/ out.gguf --pre llama-bpe",
                                       "polytok convert model_dir/ out.gguf --base model.gguf",
                                       "polytok convert model.gguf hf_dir/",
                                       "polytok convert tokenizer.model hf_dir/ --to hf",
                                       "polytok convert tokenizer.json tokenizer.model",
                                       "polytok convert tokenizer.json o200k.tiktoken --check-corpus texts.jsonl",
                                       "polytok convert model_dir/ tekken.json --json"))
    p.add_argument("src", metavar="SRC", help="the tokenizer to convert (a file or a model folder)")
    p.add_argument("dest", metavar="DEST", help="the file to write (a folder for --to hf)")
    p.add_argument("--to", default=None, choices=("hf", "gguf", "sentencepiece", "tiktoken", "tekken"),
                   help="the format to write (default: what DEST's name says)")
    p.add_argument("--check-corpus", default=None, metavar="FILE",
                   help="more texts for the proof: one a line, or JSONL objects with \"text\"")
    p.add_argument("--force", action="store_true",
                   help="write DEST even when the proof finds a difference (and print it); a writer that can "
                        "write its nearest form instead of refusing does so, listing the reasons")
    p.add_argument("--json", action="store_true", help="print the result as one JSON object")
    p.add_argument("--pre", default=None, metavar="NAME",
                   help="GGUF only: tokenizer.ggml.pre to write, instead of the name recognised from the "
                        "pre-tokenizer's structure")
    p.add_argument("--base", default=None, metavar="FILE.gguf",
                   help="GGUF only: copy this GGUF (tensors and other keys) with its tokenizer keys replaced")
    p.add_argument("--like-converter", action="store_true",
                   help="GGUF only: score every entry of a Llama tokenizer.json -1000, as llama.cpp's converter "
                        "does, instead of from the merge ranks (llama.cpp then splits words otherwise than HF)")
    return {"convert": _convert}


def _convert(args: argparse.Namespace) -> int:
    from ..convert.proof import ConversionProofError, convert

    try:
        result = convert(args.src, args.dest, to=args.to, check_corpus=args.check_corpus, force=args.force,
                         pre=args.pre, base=args.base, like_converter=args.like_converter)
    except ConversionProofError as exc:
        _show(exc.result, args.json)
        print(f"polytok: error: {exc}", file=sys.stderr)
        return 1
    _show(result, args.json)
    return 0


def _show(result: ConvertResult, as_json: bool) -> None:
    if as_json:
        print(json.dumps(result.to_json(), ensure_ascii=False))
        return
    print("\n".join(result.lines()))
    if not result.proof.identical:
        print()
        print(result.proof.details())
