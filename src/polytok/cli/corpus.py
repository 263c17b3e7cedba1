"""``polytok tokenize-corpus MODEL INPUT... --out DIR`` and ``polytok verify-corpus DIR``.

Both are hooked into `polytok.cli.main`.

See `polytok.corpus` for the shard format, the manifest, ``--resume`` and the engines.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from typing import Any, TextIO

__all__ = ["add_parsers"]


def add_parsers(sub: Any, loading: Callable[[Any], None], modes: Callable[[Any], None]) -> dict[str, Any]:
    """Add ``tokenize-corpus`` and ``verify-corpus`` to `sub`; returns their handlers by name."""
    p = sub.add_parser("tokenize-corpus", help="tokenize text/JSONL/Parquet files into token shards",
                       description="Tokenize INPUT files (text: one document per line; .jsonl: --field; "
                                   ".parquet: --column) into shards and a manifest.json in --out.")
    p.add_argument("model")
    p.add_argument("inputs", nargs="+", metavar="INPUT")
    p.add_argument("--out", required=True, metavar="DIR")
    p.add_argument("--field", default="text", help="the JSONL field holding the document (default: text)")
    p.add_argument("--column", default="text", help="the Parquet column holding the document (default: text)")
    p.add_argument("--input-format", choices=["auto", "text", "jsonl", "parquet"], default="auto",
                   help="how to read the inputs (default: from the suffix; anything else is text)")
    p.add_argument("--format", dest="out_format", choices=["bin", "parquet"], default="bin",
                   help="bin: .bin ids + .idx offsets per shard; parquet: a list-of-ids column (default: bin)")
    p.add_argument("--shard-mb", type=float, default=16.0,
                   help="input MB per shard (default: 16); the shards do not depend on the engine or workers")
    p.add_argument("--append-eos", nargs="?", const="eos", default=None, metavar="ID|TOKEN",
                   help="append a separator after each document (default: the tokenizer's eos token)")
    p.add_argument("--on-error", choices=["skip", "fail"], default="skip",
                   help="bad records: skip them, listed in the manifest (default), or stop at the first")
    p.add_argument("--resume", action="store_true", help="continue an interrupted run in --out")
    p.add_argument("--truncation", action="store_true",
                   help="apply the tokenizer file's truncation and padding, as encode does "
                        "(default: tokenize whole documents)")
    p.add_argument("--engine", choices=["local", "ray"], default="local")
    p.add_argument("--workers", type=int, default=None,
                   help="processes or Ray actors (default: every core, or every CPU of the Ray cluster)")
    p.add_argument("--ray-address", default=None,
                   help="the Ray cluster to join (default: $RAY_ADDRESS, else a local instance)")
    modes(p)
    loading(p)
    v = sub.add_parser("verify-corpus", help="re-check a tokenized corpus's counts and hashes")
    v.add_argument("dir")
    v.add_argument("--shards-only", action="store_true",
                   help="check the shards and manifest alone, not the tokenizer and inputs (e.g. moved away)")
    return {"tokenize-corpus": _tokenize_corpus, "verify-corpus": _verify_corpus}


def _tokenize_corpus(args: argparse.Namespace) -> int:
    from .. import corpus
    from ..errors import PolytokError
    from .main import load_model, whole_documents

    if args.workers is not None and args.workers < 1:
        raise PolytokError(f"--workers must be at least 1, not {args.workers}")
    if args.shard_mb <= 0:
        raise PolytokError(f"--shard-mb must be positive, not {args.shard_mb}")
    tok = load_model(args.model, args.option)
    whole_documents(tok, args.truncation, "tokenizing")  # the note on stderr; corpus.tokenize leaves them out
    if args.engine == "ray":  # Ray Data logs each dataset's plan and end at INFO: keep stderr for errors
        import logging

        for name in ("ray", "ray.data"):
            logging.getLogger(name).setLevel(logging.WARNING)
    progress = _Progress()
    try:
        manifest = corpus.tokenize(
            tok, args.inputs, args.out, field=args.field, column=args.column, input_format=args.input_format,
            out_format=args.out_format, shard_bytes=max(1, int(args.shard_mb * 1_000_000)),
            add_special=not args.no_add_special, special=args.special, append_eos=args.append_eos,
            on_error=args.on_error, resume=args.resume, engine=args.engine, workers=args.workers,
            ray_address=args.ray_address, progress=progress.update if progress.enabled else None,
            model_name=args.model, truncation=args.truncation)
    finally:
        progress.close()
    print(f"{manifest['documents']} documents, {manifest['tokens']} tokens, {len(manifest['shards'])} shards, "
          f"{manifest['bad_records']} bad records skipped -> {args.out}")
    return 0


def _verify_corpus(args: argparse.Namespace) -> int:
    from ..corpus import verify

    manifest = verify(args.dir, shards_only=args.shards_only)
    applied = manifest["settings"].get("truncation", "none")
    note = "" if applied == "none" else f"; the tokenizer's truncation and padding {applied}"
    checked = ("shards only: the tokenizer and inputs were NOT checked" if args.shards_only
               else "the tokenizer and inputs unchanged")
    print(f"ok: {len(manifest['shards'])} shards, {manifest['documents']} documents, {manifest['tokens']} tokens, "
          f"{manifest['bad_records']} bad records listed; {checked}{note}")
    return 0


class _Progress:
    """documents, tokens and MB/s on one stderr line, when stderr is a terminal."""

    def __init__(self, out: TextIO = sys.stderr) -> None:
        self.out, self.start, self.enabled = out, time.monotonic(), out.isatty()

    def update(self, documents: int, tokens: int, done: int) -> None:
        rate = done / max(time.monotonic() - self.start, 1e-9) / 1e6
        self.out.write(f"\r{documents:,} documents  {tokens:,} tokens  {rate:.2f} MB/s ")
        self.out.flush()

    def close(self) -> None:
        if self.enabled:
            self.out.write("\n")
