"""The ``export-vocab`` subcommand: its parser and handler (`polytok.vocab_export`)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import Any

from .main import MODEL_RULE, RAW, about, examples

__all__ = ["add_parser"]

_DESCRIPTION = about(
    "Write MODEL's vocabulary as a constrained-decoding engine loads it: the exact bytes of every token, the "
    "control ids and the end-of-generation ids, as one JSON object, to standard output or FILE. "
    "docs/constrained-decoding.md shows how each engine reads it.", MODEL_RULE)


def add_parser(sub: Any, loading: Callable[[argparse.ArgumentParser], None]) -> dict[str, Any]:
    """Add ``export-vocab`` to `sub` (`loading` adds the model-loading options); returns its handler by name."""
    from ..vocab_export import FORMATS

    p = sub.add_parser("export-vocab", help="write the vocabulary for a constrained-decoding engine",
                       description=_DESCRIPTION, formatter_class=RAW,
                       epilog=examples("polytok export-vocab gpt2 --format xgrammar --eos 50256 --out vocab.json",
                                       "polytok export-vocab tokenizer.json --format outlines --eos 2"))
    p.add_argument("model", metavar="MODEL")
    p.add_argument("--format", dest="export_format", required=True, choices=FORMATS,
                   help="the engine whose shape to write")
    p.add_argument("--out", default=None, metavar="FILE", help="write to FILE (default: standard output)")
    p.add_argument("--eos", action="append", type=int, default=None, metavar="ID",
                   help="an end-of-generation id, instead of the ones the tokenizer declares (repeat for more)")
    p.add_argument("--vocab-size", type=int, default=None, metavar="N",
                   help="the model's vocabulary size, when its output layer has more rows than the tokenizer has ids")
    loading(p)
    return {"export-vocab": _export}


def _export(args: argparse.Namespace) -> int:
    from ..vocab_export import export_vocab, write_export
    from .main import load_model

    tok = load_model(args.model, args.option)
    export = export_vocab(tok, args.export_format, stop_ids=args.eos, vocab_size=args.vocab_size)
    if args.out is None:
        write_export(export, sys.stdout)
        return 0
    with open(args.out, "w", encoding="utf-8") as out:
        write_export(export, out)
    return 0
