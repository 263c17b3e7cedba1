"""The ``compare`` and ``explain`` subcommands: their parsers and handlers."""

from __future__ import annotations

import argparse
import json
from typing import Any

from ..errors import PolytokError

DIVERGED = 3

COMPARE_HELP = """\
compare A B CORPUS...                 two tokenizers, both read by polytok
compare A CORPUS... --ref ENGINE      polytok against ENGINE on the same file
                                      (--ref-file PATH: ENGINE reads PATH instead)

CORPUS: a text file is one text per line (the newline is not part of the text;
empty lines are skipped), --whole takes each file as one text; a .jsonl file is
one JSON object per line, the text in --field (default: text).
Exit status: 0 when every text gives the same ids, 3 when some diverge, 1 on an
error (a missing file, an engine that is not installed), 2 on bad usage.

A and B: tokenizer files or folders, Hugging Face model names, or gpt2 (built
in); both are required."""


def add_parsers(sub: Any, loading: Any, modes: Any) -> dict[str, Any]:
    """Add the two subcommands to `sub`; returns their handlers by name."""
    from ..parity.engines import ENGINES
    from .main import MODEL_RULE, RAW, about, examples

    cmp = sub.add_parser(
        "compare", help="compare two tokenizers (or one and a reference engine) over texts",
        description=COMPARE_HELP, formatter_class=RAW,
        epilog=examples("polytok compare a/tokenizer.json b/tokenizer.json corpus.txt --explain",
                        "polytok compare tokenizer.model corpus.jsonl --ref sentencepiece --field text"))
    cmp.add_argument("paths", nargs="+", metavar="PATH", help="A B CORPUS..., or A CORPUS... with --ref")
    cmp.add_argument("--ref", choices=ENGINES, default=None,
                     help="B is this reference engine reading A's file (or --ref-file)")
    cmp.add_argument("--ref-file", default=None, help="the file the engine reads (default: A)")
    cmp.add_argument("--explain", action="store_true", help="name the first pipeline stage that differs")
    cmp.add_argument("--whole", action="store_true", help="each corpus file is one text")
    cmp.add_argument("--field", default="text", help="the text field of .jsonl corpora (default: text)")
    cmp.add_argument("--limit", type=int, default=20, help="divergences shown in full (default 20)")
    cmp.add_argument("--json", action="store_true", help="print the report as JSON")
    modes(cmp)
    loading(cmp)
    exp = sub.add_parser(
        "explain", help="show what each stage makes of a text", formatter_class=RAW,
        usage="%(prog)s [options] [MODEL] TEXT",
        description=about("Show what each stage of MODEL's pipeline (normalizer, pre-tokenizer, model, "
                          "post-processor) makes of TEXT (- reads standard input).", MODEL_RULE),
        epilog=examples("polytok explain \"Hello world\"                 # the built-in gpt2",
                        "polytok explain tokenizer.json \"Hi <s>\" --special text --json"))
    exp.add_argument("args", nargs="+", metavar="[MODEL] TEXT", help="MODEL (default: gpt2) and the text")
    exp.add_argument("--json", action="store_true", help="print the stages as JSON")
    modes(exp)
    loading(exp)
    return {"compare": _compare, "explain": _explain}


def _explain(args: argparse.Namespace) -> int:
    from ..parity.explain import explain
    from .main import load_model, model_and_text, read_text_arg

    model, text = model_and_text("explain", args.args)
    tok = load_model(model, args.option)
    ex = explain(tok, read_text_arg(text), special=args.special, add_special=not args.no_add_special)
    print(ex.to_json() if args.json else ex.render())
    return 0


def _compare(args: argparse.Namespace) -> int:
    from ..parity import compare
    from ..parity.engines import PolytokSide, Side, reference_side
    from .main import load_model

    need = 2 if args.ref else 3
    if len(args.paths) < need:
        raise PolytokError("compare takes A B CORPUS... (or A CORPUS... --ref ENGINE)")
    if args.ref_file and not args.ref:
        raise PolytokError("--ref-file needs --ref")
    side_a = PolytokSide(load_model(args.paths[0], args.option), "A")
    if args.ref:
        path = args.ref_file or args.paths[0]
        side_b: Side = reference_side(args.ref, path, "B", _proxy(path, args.option, side_a))
        corpus = args.paths[1:]
    else:
        side_b = PolytokSide(load_model(args.paths[1], args.option), "B")
        corpus = args.paths[2:]
    texts = read_corpus(corpus, args.whole, args.field)
    report = compare(side_a, side_b, texts, explain=args.explain, add_special=not args.no_add_special,
                     special=args.special)
    print(report.to_json() if args.json else report.render(args.limit))
    return DIVERGED if report.diverging else 0


def _proxy(path: str, options: list[str], side_a: Any) -> Any:
    """polytok's reading of the engine's file (None when it cannot read it)."""
    from .main import load_model

    if path == side_a.path:
        return side_a.tokenizer
    try:
        return load_model(path, options)
    except PolytokError:
        return None


def read_corpus(files: list[str], whole: bool = False, field: str = "text") -> list[tuple[str, str]]:
    """(name, text) pairs: ``file:line`` for each line (or each JSONL record), ``file`` with `whole`."""
    out: list[tuple[str, str]] = []
    for path in files:
        try:
            with open(path, encoding="utf-8", newline="") as f:
                body = f.read()
        except OSError as exc:
            raise PolytokError(f"{path}: {exc.strerror}") from None
        except UnicodeDecodeError as exc:
            raise PolytokError(f"{path}: not UTF-8 (byte offset {exc.start})") from None
        if whole:
            out.append((path, body))
        elif path.endswith(".jsonl"):
            out.extend(_jsonl(path, body, field))
        else:
            lines = body.split("\n")
            out.extend((f"{path}:{n}", line.removesuffix("\r")) for n, line in enumerate(lines, 1) if line)
    return out


def _jsonl(path: str, body: str, field: str) -> list[tuple[str, str]]:
    out = []
    for n, line in enumerate(body.split("\n"), 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except ValueError as exc:
            raise PolytokError(f"{path}:{n}: not JSON ({exc})") from None
        text = record.get(field) if isinstance(record, dict) else None
        if not isinstance(text, str):
            raise PolytokError(f"{path}:{n}: no string field {field!r}")
        out.append((f"{path}:{n}", text))
    return out
