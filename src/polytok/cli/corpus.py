"""The ``tokenize-corpus`` and ``verify-corpus`` subcommands: their parsers and handlers.

The shard format, the manifest, ``--resume`` and the engines are `polytok.corpus`'s.
"""

from __future__ import annotations

import argparse
import os
import socket
import threading
from collections.abc import Callable
from typing import Any, TextIO

from ..errors import PolytokError
from .main import MODEL_RULE, RAW, about, examples, progress_flag
from .progress import Progress

__all__ = ["add_parsers"]


def add_parsers(sub: Any, loading: Callable[[Any], None], modes: Callable[[Any], None]) -> dict[str, Any]:
    """Add ``tokenize-corpus`` and ``verify-corpus`` to `sub`; returns their handlers by name."""
    p = sub.add_parser(
        "tokenize-corpus", help="tokenize text/JSONL/Parquet files into token shards", formatter_class=RAW,
        description=about("Tokenize INPUT files (text: one document per line; .jsonl: --field; .parquet: "
                          "--column) into shards and a manifest.json in --out.", MODEL_RULE),
        epilog=examples("polytok tokenize-corpus gpt2 books.txt --out tokens/",
                        "polytok tokenize-corpus tokenizer.json data/*.jsonl --out tokens/ --field text --progress",
                        "polytok tokenize-corpus MODEL data/*.jsonl --out tokens/ --engine ray "
                        "--ray-address ray://HEAD:10001"))
    p.add_argument("model", metavar="MODEL")
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
    p.add_argument("--workers", type=int, default=None, metavar="N",
                   help="processes or Ray actors (default: every core, or every CPU of the Ray cluster)")
    p.add_argument("--ray-address", default=None, metavar="HOST:PORT",
                   help="the Ray cluster to join: HOST:PORT of its head, or ray://HOST:PORT for Ray Client "
                        "(default: $RAY_ADDRESS, else a local instance); one that cannot be reached is an error")
    progress_flag(p)
    modes(p)
    loading(p)
    v = sub.add_parser(
        "verify-corpus", help="re-check a tokenized corpus's counts and hashes", formatter_class=RAW,
        description=about("Re-check the shards in DIR against its manifest.json, and that the tokenizer and "
                          "the inputs are the ones it was made from."),
        epilog=examples("polytok verify-corpus tokens/", "polytok verify-corpus tokens/ --shards-only"))
    v.add_argument("dir", metavar="DIR")
    v.add_argument("--shards-only", action="store_true",
                   help="check the shards and manifest alone, not the tokenizer and inputs (e.g. moved away)")
    return {"tokenize-corpus": _tokenize_corpus, "verify-corpus": _verify_corpus}


def _tokenize_corpus(args: argparse.Namespace) -> int:
    from .. import corpus
    from .main import load_model, whole_documents

    if args.workers is not None and args.workers < 1:
        raise PolytokError(f"--workers must be at least 1, not {args.workers}")
    if args.shard_mb <= 0:
        raise PolytokError(f"--shard-mb must be positive, not {args.shard_mb}")
    if args.engine == "ray":
        reachable(args.ray_address or os.environ.get("RAY_ADDRESS"))
    tok = load_model(args.model, args.option)
    whole_documents(tok, args.truncation, "tokenizing")  # the note on stderr; corpus.tokenize leaves them out
    if args.engine == "ray":  # Ray Data logs each dataset's plan and end at INFO: keep stderr for errors
        import logging

        for name in ("ray", "ray.data"):
            logging.getLogger(name).setLevel(logging.WARNING)
    progress = _Progress(total=_input_bytes(args.inputs), enabled=args.progress)
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
    """tokenize-corpus's meter: documents and tokens, then the input bytes' percentage, rate and time left."""

    def __init__(self, out: TextIO | None = None, total: int | None = None, enabled: bool | None = None) -> None:
        self.meter = Progress(total, enabled, out)
        self.enabled = self.meter.enabled

    def update(self, documents: int, tokens: int, done: int) -> None:
        self.meter.set(done, f"{documents:,} documents  {tokens:,} tokens")

    def close(self) -> None:
        self.meter.close()


def _input_bytes(inputs: list[str]) -> int | None:
    """The inputs' total size (None when one cannot be read: the run names it)."""
    try:
        return sum(os.path.getsize(name) for name in inputs)
    except OSError:
        return None


REACH_TIMEOUT_S = 5.0


def reachable(address: str | None, timeout: float = REACH_TIMEOUT_S) -> None:
    """Refuse, in one line, a Ray address whose head does not answer a TCP connection within
    `timeout` seconds (Ray itself retries for minutes). ``auto``, ``local`` and None are Ray's to find."""
    if not address or address in ("auto", "local"):
        return
    hostport = address.removeprefix("ray://").rstrip("/")
    host, sep, port_text = hostport.rpartition(":")
    host = host.strip("[]")
    if not sep or not host or not port_text.isdigit() or not 0 < int(port_text) < 65536:
        raise PolytokError(f"--ray-address {address!r}: expected HOST:PORT or ray://HOST:PORT")
    outcome: list[BaseException | str | None] = []

    def connect() -> None:
        try:
            with socket.create_connection((host, int(port_text)), timeout=timeout) as conn:
                outcome.append(None if os.environ.get("RAY_USE_TLS", "0") not in ("0", "") else _h2_answer(conn))
        except OSError as exc:
            outcome.append(exc)

    thread = threading.Thread(target=connect, daemon=True)  # name lookup ignores the socket's timeout
    thread.start()
    thread.join(2 * timeout + 0.5)  # the connection, then the answer to the HTTP/2 preface
    if not outcome:
        raise PolytokError(f"cannot reach the Ray cluster at {address}: no answer within {timeout:g} s")
    error = outcome[0]
    if isinstance(error, str):
        raise PolytokError(f"cannot reach the Ray cluster at {address}: {error}")
    if error is not None:
        reason = error.strerror if isinstance(error, OSError) and error.strerror else str(error) or "timed out"
        raise PolytokError(f"cannot reach the Ray cluster at {address}: {reason}")


# HTTP/2's client connection preface and an empty SETTINGS frame (RFC 9113 section 3.4)
_H2_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + bytes([0, 0, 0, 4, 0, 0, 0, 0, 0])


def _h2_answer(conn: socket.socket) -> str | None:
    """None if the server on `conn` answers as a gRPC server does, else what it did instead.

    A Ray head's addresses (the GCS for ``HOST:PORT``, the Ray client server for ``ray://``) are
    gRPC servers: plain HTTP/2, whose server preface is a SETTINGS frame (RFC 9113 section 3.4)
    sent once the client's preface arrives. Anything else at the port (an SSH or HTTP/1 server,
    or one that says nothing) is not a Ray head, which Ray would retry for a long while to find
    out. (With ``RAY_USE_TLS`` set the answer is TLS, and this check is not made.)"""
    try:
        conn.sendall(_H2_PREFACE)
        head = b""
        while len(head) < 9:
            chunk = conn.recv(9 - len(head))
            if not chunk:
                break
            head += chunk
    except TimeoutError:
        return "the port accepts connections but does not answer as a Ray head (a gRPC server) does"
    except OSError as exc:
        return exc.strerror or str(exc)
    if len(head) == 9 and head[3] == 4 and head[5:9] == bytes(4):  # a frame of type SETTINGS on stream 0
        return None
    try:  # the rest of its first line, if it sent one, to name what answered
        conn.settimeout(0.2)
        head += conn.recv(64) if head and b"\n" not in head else b""
    except OSError:
        pass
    shown = head.decode("ascii", "replace").split("\r")[0].split("\n")[0].strip()
    return ("the port answers, but not as a Ray head (a gRPC server) does"
            + (f": it sent {shown[:40]!r}" if shown.isprintable() and shown else ""))
