"""The ``doctor`` subcommand: its parser and handler (`polytok.doctor`)."""

from __future__ import annotations

import argparse
import json
from typing import Any

from .main import RAW, about, examples

__all__ = ["add_parser"]

_DESCRIPTION = about(
    "Read every tokenizer file of the model FOLDER (tokenizer.json, tokenizer.model, tekken.json, tiktoken "
    "files, vocab.json + merges.txt, vocab.txt, a GGUF inside it or named after it beside it) and report what "
    "is wrong: files that encode the edge texts differently (files-disagree), a chat template writing the BOS "
    "the tokenizer adds (double-bos), special-token markers user text can forge by default (forgeable-markers), "
    "a chat template whose renderings do not extend each other (template-not-prefix-preserving), ids the "
    "config gives a new text (redefined-tokens), added ids past config.json's vocab_size (past-embedding-size).",
    "Exit status: 0 when nothing is found, 1 when something is (or on an error). docs/doctor.md describes "
    "each finding.")


def add_parser(sub: Any) -> dict[str, Any]:
    """Add ``doctor`` to `sub`; returns its handler by name."""
    p = sub.add_parser("doctor", help="find what is wrong with a model folder's tokenizer files",
                       description=_DESCRIPTION, formatter_class=RAW,
                       epilog=examples("polytok doctor ./Qwen3-0.6B",
                                       "polytok doctor ./my-finetune --json   # the findings as a JSON document"))
    p.add_argument("folder", metavar="FOLDER", help="the model folder")
    p.add_argument("--json", action="store_true",
                   help="print the findings as JSON (each: code, severity, message, files, details)")
    return {"doctor": _doctor}


def _doctor(args: argparse.Namespace) -> int:
    from ..doctor import diagnose

    findings = diagnose(args.folder)
    if args.json:
        print(json.dumps({"folder": args.folder, "findings": [f.as_dict() for f in findings]},
                         ensure_ascii=False, indent=2))
    elif not findings:
        print(f"{args.folder}: nothing found")
    else:
        print(f"{args.folder}: {len(findings)} finding{'s' if len(findings) > 1 else ''}")
        for f in findings:
            print(f"{f.severity:<8}{f.code}: {f.message}")
            reasons = f.details.get("reasons")
            if reasons:
                print(f"        reasons: {', '.join(reasons)}")
    return 1 if findings else 0
