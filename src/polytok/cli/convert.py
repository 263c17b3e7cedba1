"""The ``convert`` subcommand: its parser and handler (`polytok.convert.converter.to_gguf`)."""

from __future__ import annotations

import argparse
from typing import Any

from .main import RAW, about, examples

__all__ = ["add_parser"]


def add_parser(sub: Any) -> dict[str, Any]:
    """Add ``convert`` to `sub`; returns its handler by name."""
    p = sub.add_parser("convert", help="write a model folder's tokenizer as a GGUF (as llama.cpp's converter)",
                       formatter_class=RAW,
                       description=about(
                           "Write the tokenizer of MODEL_DIR (a Hugging Face model folder) to OUT.gguf as "
                           "llama.cpp's convert_hf_to_gguf.py would, and print the report: the redefinitions, "
                           "the pre-tokenizer name (and the hash it came from), the counts. Needs the extra "
                           "polytok[convert] (gguf). MODEL_DIR is required."),
                       epilog=examples("polytok convert model_dir/ tokenizer.gguf",
                                       "polytok convert model_dir/ out.gguf --pre llama-bpe",
                                       "polytok convert model_dir/ out.gguf --base model.gguf"))
    p.add_argument("model_dir", metavar="MODEL_DIR")
    p.add_argument("out", metavar="OUT.gguf")
    p.add_argument("--pre", default=None, metavar="NAME",
                   help="tokenizer.ggml.pre to write (for a pre-tokenizer hash llama.cpp's table does not know)")
    p.add_argument("--base", default=None, metavar="FILE.gguf",
                   help="copy this GGUF (tensors and other keys) with its tokenizer keys replaced")
    return {"convert": _convert}


def _convert(args: argparse.Namespace) -> int:
    from ..convert.converter import to_gguf

    report = to_gguf(args.model_dir, args.out, pre=args.pre, base_gguf=args.base)
    print("\n".join(report.lines()))
    return 0
