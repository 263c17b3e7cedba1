"""The ``polytok`` command line: encode, decode, count, inspect, chat.

Errors print one line (``polytok: error: …``) and exit with status 1 (2 for bad usage).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import re
import sys
import textwrap
from typing import Any

from .. import __version__, kernels, load
from ..errors import PolytokError
from ..tokenizer import Tokenizer
from ..tokenizer.special_controls import AllowedSpecial, restricted
from .progress import Progress

DEFAULT_MODEL = "gpt2"
RAW = argparse.RawDescriptionHelpFormatter
MODEL_RULE = ("MODEL: a tokenizer file or folder, a Hugging Face model name, or gpt2 (built in). It may be left "
              "out, for the built-in gpt2, where the other arguments are a text or ids (encode, decode, explain, "
              "inspect); commands that also read files (count, chat, compare, tokenize-corpus, export-vocab, "
              "convert) require it; serve always offers gpt2 beside the MODELs it is given.")


def about(*paragraphs: str) -> str:
    """A help description: `paragraphs` wrapped to the terminal's usual width."""
    return "\n\n".join(textwrap.fill(text, 79) for text in paragraphs)


def examples(*lines: str) -> str:
    """A help epilog listing example command lines."""
    return "examples:\n" + "\n".join("  " + line for line in lines)


def progress_flag(q: argparse.ArgumentParser) -> None:
    """``--progress`` / ``--no-progress`` (default: shown when stderr is a terminal)."""
    q.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                   help="show a progress line with a percentage and time left on stderr "
                        "(default: only when stderr is a terminal)")


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="polytok", formatter_class=RAW,
        description=about("Tokenize exactly as the reference engines do.", MODEL_RULE),
        epilog=examples("polytok encode \"Hello world\"", "polytok COMMAND --help"))
    p.add_argument("--version", action="version", version=f"polytok {__version__}")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def loading(q: argparse.ArgumentParser) -> None:
        q.add_argument("-o", "--option", action="append", default=[], metavar="KEY=VALUE",
                       help="a format option for loading MODEL, e.g. pattern=... for a tiktoken file "
                            "polytok does not recognise (VALUE is read as JSON when it parses, else as text)")
        q.add_argument("--revision", dest="option", action="append", type=lambda rev: f"revision={rev}",
                       metavar="REV", help="for a Hugging Face model name: the branch, tag or commit hash "
                                           "(default: main)")

    def modes(q: argparse.ArgumentParser, *, refuse: bool = False, allow: bool = False) -> None:
        q.add_argument("--special", choices=["parse", "text", "raise"] if refuse else ["parse", "text"], default=None,
                       help="parse special-token markers in the text, or read them as text"
                            + (", or refuse any (an error naming it)" if refuse else "")
                            + " (default: what the format's reference engine does)")
        if allow:
            q.add_argument("--allow-special", action="append", metavar="MARKER", default=None,
                           help="parse only this special-token marker (repeatable); the others are read as text"
                                + (", or refused with --special raise" if refuse else ""))
        q.add_argument("--no-add-special", action="store_true",
                       help="do not add the post-processor's special tokens (BOS/EOS, [CLS]…)")

    enc = sub.add_parser(
        "encode", help="print the ids of a text", formatter_class=RAW,
        description=about("Encode TEXT (- reads standard input) with MODEL and print the ids on one line.", MODEL_RULE),
        epilog=examples("polytok encode \"Hello world\"                  # the built-in gpt2",
                        "polytok encode tokenizer.json \"Hello\" --tokens  # id, piece, the text it stands for",
                        "echo \"Hello\" | polytok encode gpt2 - --json     # ids, tokens and offsets as JSON"))
    enc.usage = "%(prog)s [options] [MODEL] TEXT"
    enc.add_argument("args", nargs="+", metavar="[MODEL] TEXT", help="MODEL (default: gpt2) and the text")
    enc.add_argument("--tokens", action="store_true",
                     help="one token a line: id, the piece as the vocabulary spells it, and the text it stands "
                          "for (control characters escaped, bytes of a partial character as \\xHH)")
    enc.add_argument("--json", action="store_true", help="print JSON (ids, tokens, offsets)")
    modes(enc, refuse=True, allow=True)
    loading(enc)

    dec = sub.add_parser(
        "decode", help="print the text of ids", formatter_class=RAW,
        description=about("Decode IDS with MODEL and print the text. IDS are integers separated by spaces or "
                          "commas, a JSON list, or encode --json's object; - reads them from standard input.",
                          "The first argument is ids when it begins with a digit, [ or { and is neither an "
                          "existing path nor a name with a /; else it is MODEL. " + MODEL_RULE),
        epilog=examples("polytok decode 15496 995                        # the built-in gpt2",
                        "polytok decode tokenizer.json 1,2,3 --skip-special",
                        "polytok encode gpt2 \"Hi\" --json | polytok decode gpt2 -"))
    dec.usage = "%(prog)s [options] [MODEL] IDS..."
    dec.add_argument("args", nargs="+", metavar="[MODEL] IDS", help="MODEL (default: gpt2) and the ids, or -")
    dec.add_argument("--skip-special", action="store_true", help="leave special tokens out")
    loading(dec)

    cnt = sub.add_parser(
        "count", help="count the tokens of files", formatter_class=RAW,
        description=about("Count the tokens of each FILE, read whole (- reads standard input), and their total.",
                          MODEL_RULE),
        epilog=examples("polytok count gpt2 notes.txt book.txt",
                        "polytok count tokenizer.json data/*.txt --workers 4 --progress"))
    cnt.add_argument("model", metavar="MODEL")
    cnt.add_argument("files", nargs="+", metavar="FILE", help="files (- for stdin)")
    cnt.add_argument("--workers", type=int, default=None, metavar="N",
                     help="processes to share the work (default: every core); the counts are the same")
    cnt.add_argument("--truncation", action="store_true",
                     help="apply the tokenizer file's truncation and padding, as encode does "
                          "(default: count whole documents)")
    progress_flag(cnt)
    modes(cnt, allow=True)
    loading(cnt)

    ins = sub.add_parser(
        "inspect", help="describe a tokenizer", formatter_class=RAW,
        description=about("Describe MODEL: format, pipeline, special tokens, how each mode treats them, and "
                          "which engine (compiled or pure) runs.", MODEL_RULE),
        epilog=examples("polytok inspect                                 # the built-in gpt2",
                        "polytok inspect model.gguf --json"))
    ins.add_argument("model", nargs="?", default=DEFAULT_MODEL, metavar="MODEL")
    ins.add_argument("--json", action="store_true", help="print the description as JSON")
    loading(ins)

    chat = sub.add_parser(
        "chat", help="render a conversation with the model's chat template", formatter_class=RAW,
        description=about("Render CONVERSATION, a JSON file (- for stdin): a list of messages, or an object "
                          "with messages and optional tools, documents.", MODEL_RULE),
        epilog=examples("polytok chat Qwen/Qwen3-0.6B conversation.json --generation-prompt",
                        "polytok chat model_dir/ conversation.json --tokenize"))
    chat.add_argument("model", metavar="MODEL")
    chat.add_argument("conversation", metavar="CONVERSATION")
    chat.add_argument("--tokenize", action="store_true", help="print the ids instead of the text")
    chat.add_argument("--generation-prompt", action="store_true", help="end with an assistant turn's header")
    chat.add_argument("--template", default=None, help="the name of one of the file's named templates")
    loading(chat)
    from .compare import add_parsers
    _COMMANDS.update(add_parsers(sub, loading, modes))
    from .convert import add_parser
    _COMMANDS.update(add_parser(sub))
    from .serve import add_parser as add_serve
    _COMMANDS.update(add_serve(sub, loading))
    from .corpus import add_parsers as add_corpus_parsers
    _COMMANDS.update(add_corpus_parsers(sub, loading, modes))
    from .export_vocab import add_parser as add_export_vocab
    _COMMANDS.update(add_export_vocab(sub, loading))
    from .doctor import add_parser as add_doctor
    _COMMANDS.update(add_doctor(sub))
    from .train import add_parser as add_train
    _COMMANDS.update(add_train(sub))
    return p


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        return int(_COMMANDS[args.command](args) or 0)
    except PolytokError as exc:
        print(f"polytok: error: {exc}", file=sys.stderr)
        return 1
    except BrokenPipeError:
        return 0
    except OSError as exc:  # a file the command reads or writes (the readers name theirs as FormatError)
        where = f"{exc.filename}: " if exc.filename is not None else ""
        print(f"polytok: error: {where}{exc.strerror or exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130


def load_model(model: str, options: list[str]) -> Tokenizer:
    """`load` with the ``--option KEY=VALUE`` pairs as keyword options."""
    kwargs: dict[str, Any] = {}
    for item in options:
        key, sep, value = item.partition("=")
        if not sep or not key.isidentifier():
            raise PolytokError(f"--option takes KEY=VALUE, got {item!r}")
        try:
            kwargs[key] = value if key in _TEXT_OPTIONS else json.loads(value)
        except ValueError:
            kwargs[key] = value
    return load(model, **kwargs)


_TEXT_OPTIONS = {"revision", "filename"}  # names, even when they read as JSON numbers


def read_text_arg(arg: str) -> str:
    """A text argument: the argument itself, or standard input for ``-``."""
    return sys.stdin.read() if arg == "-" else arg


def special_arg(args: argparse.Namespace) -> Any:
    """``special=`` from ``--special`` and ``--allow-special``."""
    allowed = getattr(args, "allow_special", None)
    if not allowed:
        return args.special
    if args.special == "parse":
        raise PolytokError("--allow-special names the markers to parse: with it, --special is 'text' (the others "
                           "read as text) or 'raise' (the others refused)")
    return AllowedSpecial(allowed, others="raise" if args.special == "raise" else "text")


def model_and_text(command: str, args: list[str]) -> tuple[str, str]:
    """MODEL (default: the built-in gpt2) and TEXT from ``[MODEL] TEXT``."""
    if len(args) > 2:
        raise PolytokError(f"{command} takes [MODEL] TEXT (quote the text: {len(args)} arguments given)")
    return (args[0], args[1]) if len(args) == 2 else (DEFAULT_MODEL, args[0])


def _encode(args: argparse.Namespace) -> int:
    model, text = model_and_text("encode", args.args)
    tok = load_model(model, args.option)
    add_special, special = not args.no_add_special, special_arg(args)
    if args.json or args.tokens:
        enc = tok.encode_full(read_text_arg(text), add_special=add_special, special=special)
        if args.json:
            print(json.dumps({"ids": enc.ids, "tokens": enc.tokens, "offsets": enc.offsets}, ensure_ascii=False))
        else:
            for id_, piece in zip(enc.ids, enc.tokens):
                print(f"{id_}\t{piece!r}\t{readable(tok.token_bytes(id_))}")
        return 0
    print(" ".join(map(str, tok.encode(read_text_arg(text), add_special=add_special, special=special))))
    return 0


def readable(data: bytes) -> str:
    """`data` as text: valid UTF-8 as itself with control characters, backslashes and non-characters
    escaped (``\\n``, ``\\x1b``), bytes that are not valid UTF-8 as ``\\xHH``."""
    out = []
    text = data.decode("utf-8", "surrogateescape")
    for ch in text:
        code = ord(ch)
        if 0xDC80 <= code <= 0xDCFF:  # a byte that is not part of a valid character
            out.append(f"\\x{code - 0xDC00:02x}")
        elif ch == "\\":
            out.append("\\\\")
        elif ch.isprintable() or ch == " ":
            out.append(ch)
        else:
            out.append(ch.encode("unicode_escape").decode("ascii"))
    return "".join(out)


_ID_SEPARATORS = re.compile(r"[\s,]+")
def looks_like_ids(arg: str) -> bool:
    """Whether a first argument to ``decode`` is ids (or ``-``) rather than MODEL: it begins with a
    digit, ``[`` or ``{``, and is neither an existing path nor a name with a ``/``."""
    head = arg.lstrip()[:1]
    if arg == "-" or head in ("[", "{"):
        return True
    return head.isdigit() and "/" not in arg and not os.path.exists(arg)


def parse_ids(source: str, where: str = "") -> list[int]:
    """Ids from text: ``1 2``, ``1,2``, a JSON list ``[1, 2]`` or ``encode --json``'s object
    (its ``"ids"``). Errors name the item (``position N``) and `where` it came from."""
    prefix = f"{where}: " if where else ""
    body = source.strip()
    if body[:1] in ("[", "{"):
        try:
            data = json.loads(body)
        except json.JSONDecodeError as exc:
            raise PolytokError(f"{prefix}not JSON at line {exc.lineno} column {exc.colno} ({exc.msg})") from None
        if isinstance(data, dict):
            if "ids" not in data:
                raise PolytokError(f"{prefix}a JSON object of ids needs an \"ids\" list (as encode --json prints), "
                                   f"got keys {', '.join(map(repr, data)) or 'none'}")
            data = data["ids"]
        if not isinstance(data, list):
            raise PolytokError(f"{prefix}\"ids\" must be a list of integers, not {type(data).__name__}")
        items: list[Any] = data
    else:
        items = [item for item in _ID_SEPARATORS.split(body) if item]
    from_json = body[:1] in ("[", "{")
    ids = []
    for position, item in enumerate(items):
        if isinstance(item, str) and not from_json and item.isascii() and item.isdigit():
            ids.append(int(item))
        elif isinstance(item, int) and not isinstance(item, bool) and item >= 0:
            ids.append(item)
        else:
            shown = item if isinstance(item, str) else json.dumps(item)
            raise PolytokError(f"{prefix}position {position}: ids are integers from 0, not {shown!r}")
    return ids


def _decode(args: argparse.Namespace) -> int:
    model, rest = DEFAULT_MODEL, list(args.args)
    if not looks_like_ids(rest[0]):
        model = rest.pop(0)
        if not rest:
            raise PolytokError(f"decode: no ids after MODEL {model!r} (give ids, or - to read them from stdin)")
    if "-" in rest and rest != ["-"]:
        raise PolytokError("decode: - (read the ids from stdin) takes the place of all the ids")
    ids = parse_ids(sys.stdin.read(), "stdin") if rest == ["-"] else parse_ids(" ".join(rest))
    tok = load_model(model, args.option)
    sys.stdout.write(tok.decode(ids, skip_special=args.skip_special) + "\n")
    return 0


def _count(args: argparse.Namespace) -> int:
    from .. import parallel

    tok = whole_documents(load_model(args.model, args.option), args.truncation, "counting")
    sizes = [os.path.getsize(f) if f != "-" and os.path.exists(f) else 0 for f in args.files]
    add_special, special = not args.no_add_special, special_arg(args)
    if isinstance(special, AllowedSpecial):  # a copy whose split parses those markers (as text: the others)
        tok, special = restricted(tok, special.markers), "text"
    workers = args.workers if args.workers is not None else parallel.available_workers()
    if workers < 1:
        raise PolytokError(f"--workers must be at least 1, not {workers}")
    totals: dict[int, int] = {}
    progress = Progress(None if "-" in args.files else sum(sizes), args.progress)
    try:
        if (workers > 1 or progress.enabled) and "-" not in args.files and parallel.can_fork():
            totals = _count_shared(tok, args.files, sizes, add_special, special, workers, progress)
        else:
            for index, name in enumerate(args.files):
                text = _read_text_file(name)
                totals[index] = len(tok.encode(text, add_special=add_special, special=special))
                progress.update(len(text.encode("utf-8", "surrogatepass")), f"{sum(totals.values()):,} tokens")
    finally:
        progress.close()
    for index, name in enumerate(args.files):
        print(f"{totals[index]}\t{name}")
    if len(args.files) > 1:
        print(f"{sum(totals.values())}\ttotal")
    return 0


def whole_documents(tok: Tokenizer, apply: bool, doing: str) -> Tokenizer:
    """`tok` without its truncation and padding unless `apply` (``--truncation``), saying so on stderr."""
    from ..truncation import left_out
    from ..truncation import whole_documents as without

    ignored = left_out(tok)
    if apply or ignored is None:
        return tok
    print(f"polytok: note: {doing} whole documents, leaving out the tokenizer's {ignored} (apply with --truncation)",
          file=sys.stderr)
    return without(tok)


def _count_shared(tok: Tokenizer, files: list[str], sizes: list[int], add_special: bool, special: Any,
                  workers: int, progress: Progress) -> dict[int, int]:
    """The files' counts from `workers` processes: the texts cut into shares where the pipeline
    allows it (`polytok.parallel.long_text`), else each file whole in one worker."""
    from .. import parallel

    if parallel.scanner_for(tok) is None and len(files) > 1:  # read by the workers, not here
        return _count_files_in_pool(tok, files, sizes, add_special, special, min(workers, len(files)), progress)
    texts = [_read_text_file(name) for name in files]
    chars, total = sum(map(len, texts)) or 1, sum(sizes)
    done_chars = 0

    def on_done(n: int) -> None:  # n characters more, shown as their share of the bytes
        nonlocal done_chars
        done_chars += n
        progress.set(done_chars * total // chars)

    counts = parallel.count_long(tok, texts, add_special=add_special, special=special, workers=workers,
                                 on_done=on_done if progress.enabled else None)
    if counts is not None:
        progress.set(total, f"{sum(counts):,} tokens")  # the number is known only once the parts are joined
    else:  # one file, or too little text for a pool
        counts = []
        for text, size in zip(texts, sizes):
            counts.append(len(tok.encode(text, add_special=add_special, special=special)))
            progress.update(size, f"{sum(counts):,} tokens")
    return dict(enumerate(counts))


def _count_files_in_pool(tok: Tokenizer, files: list[str], sizes: list[int], add_special: bool, special: Any,
                         workers: int, progress: Progress) -> dict[int, int]:
    """Each file counted whole by one of `workers` processes (this one and forked children),
    the largest first."""
    from .. import parallel

    def count(name: str) -> tuple[int, int]:
        text = _read_text_file(name)
        ids = tok.encode(text, add_special=add_special, special=special)
        return len(ids), len(text.encode("utf-8", "surrogatepass"))

    totals: dict[int, int] = {}
    order = sorted(range(len(files)), key=lambda i: -sizes[i])
    for position, ok, result in parallel.map_in_runs(count, [files[i] for i in order], workers, run_max=1):
        if not ok:
            count(files[order[position]])  # raises the error here, with its message
            raise PolytokError(f"{files[order[position]]}: {result}")
        totals[order[position]] = result[0]
        progress.update(result[1], f"{sum(totals.values()):,} tokens")
    return totals


def _read_text_file(name: str) -> str:
    """A whole file (or stdin) as one text: cutting it into lines or chunks would change
    the count for tokenizers whose pieces or normalizers span line ends."""
    try:
        if name == "-":
            return sys.stdin.read()
        with open(name, encoding="utf-8", newline="") as f:
            return f.read()
    except OSError as exc:
        raise PolytokError(f"{name}: {exc.strerror}") from None
    except UnicodeDecodeError as exc:
        raise PolytokError(f"{name}: not UTF-8 text at byte offset {exc.start} ({exc.reason})") from None


def describe(tok: Tokenizer) -> dict[str, Any]:
    """What `inspect` shows: format, pipeline, special tokens and how each mode treats them."""

    def shape(component: Any) -> Any:
        if component is None:
            return None
        name = type(component).__name__
        children = [getattr(component, a, None) for a in ("normalizers", "pretokenizers", "processors", "decoders")]
        for group in children:
            if isinstance(group, list):
                return {name: [shape(c) for c in group]}
        return name

    added = []
    for id_, entry in sorted(tok.added.id_to_entry.items()):
        added.append({"id": id_, "content": entry.content, "special": entry.special,
                      "parsed_in_parse_mode": True, "parsed_in_text_mode": not entry.special,
                      "flags": [f for f in ("lstrip", "rstrip", "single_word", "normalized") if getattr(entry, f)]})
    return {
        "source": tok.facts.source, "format": tok.facts.format, "files": list(tok.facts.files),
        "model": type(tok.model).__name__, "vocab_size": len(tok), "n_vocab": tok.n_vocab,
        "pipeline": {"normalizer": shape(tok.normalizer), "pre_tokenizer": shape(tok.pre_tokenizer),
                     "post_processor": shape(tok.post_processor), "decoder": shape(tok.decoder)},
        "truncation": None if tok.truncation is None else dataclasses.asdict(tok.truncation),
        "padding": None if tok.padding is None else dataclasses.asdict(tok.padding),
        "defaults": {"add_special": True, "special": str(tok.default_special), "skip_special": False,
                     "with_special_tokens_added": tok.encode("", add_special=True)},
        "added_tokens": added,
        "named_special_tokens": {name: {"text": t.text, "id": t.id} for name, t in tok.facts.named_tokens.items()},
        "end_of_generation": sorted(tok.eog_ids),
        "chat_templates": sorted(tok.facts.chat.templates),
        "engine": kernels.status(),
    }


_ATTR_NAMES = ((1, "unknown"), (2, "unused"), (4, "normal"), (8, "control"), (16, "user_defined"),
               (32, "byte"), (128, "lstrip"), (256, "rstrip"))


def describe_gguf(path: str) -> dict[str, Any]:
    """What `inspect` shows for a GGUF file: llama.cpp's view of its vocabulary."""
    from ..formats.gguf import read_gguf_vocab

    vocab = read_gguf_vocab(path)
    specials = []
    for id_, attr in enumerate(vocab.specials.attrs):
        if attr & (1 | 8 | 16):
            kinds = [name for bit, name in _ATTR_NAMES if attr & bit]
            specials.append({"id": id_, "text": vocab.texts[id_], "kind": kinds,
                             "parsed_in_text_mode": not attr & (1 | 8), "eog": id_ in vocab.specials.eog})
    return {
        "source": path, "format": "gguf", "tokenizer_model": vocab.model, "vocab_type": vocab.vocab_type,
        "pre_type": vocab.pre.name if vocab.pre else None, "vocab_size": len(vocab.texts), "flags": vocab.flags,
        "special_ids": {k: v for k, v in vocab.specials.ids.items() if v is not None},
        "eog": sorted(vocab.specials.eog), "special_tokens": specials,
    }


def _inspect_gguf(args: argparse.Namespace) -> int:
    info = describe_gguf(args.model)
    if args.json:
        print(json.dumps(info, ensure_ascii=False, indent=2))
        return 0
    print(f"source:         {info['source']}")
    print(f"format:         gguf ({info['tokenizer_model']} → {info['vocab_type']}"
          f"{', pre ' + info['pre_type'] if info['pre_type'] else ''}), {info['vocab_size']} tokens")
    print("flags:          " + " ".join(f"{k}={v}" for k, v in info["flags"].items()))
    print("special ids:    " + " ".join(f"{k}={v}" for k, v in info["special_ids"].items()))
    print(f"end of generation: {info['eog']}")
    print(f"special tokens: {len(info['special_tokens'])} (control/unknown are parsed only in parse mode; "
          "user_defined in both)")
    for t in info["special_tokens"][:200]:
        print(f"  {t['id']:>8}  {'|'.join(t['kind']):<24} {t['text']!r}{'  EOG' if t['eog'] else ''}")
    if len(info["special_tokens"]) > 200:
        print(f"  … {len(info['special_tokens']) - 200} more (use --json)")
    return 0


def _engine_line(engine: dict[str, Any]) -> str:
    built = ", ".join(engine["kernels"]) or "none"
    return f"{engine['path']} ({engine['reason']}; compiled kernels built: {built})"


def _inspect(args: argparse.Namespace) -> int:
    if str(args.model).lower().endswith(".gguf"):
        if args.option:  # as load refuses them for a GGUF
            raise PolytokError(f"{args.model}: the gguf reader takes no options (got {', '.join(args.option)})")
        return _inspect_gguf(args)
    info = describe(load_model(args.model, args.option))
    if args.json:
        print(json.dumps(info, ensure_ascii=False, indent=2))
        return 0
    print(f"source:         {info['source']}")
    print(f"format:         {info['format']}")
    print(f"model:          {info['model']} ({info['vocab_size']} tokens with added tokens, "
          f"ids below {info['n_vocab']})")
    for stage, value in info["pipeline"].items():
        print(f"{stage + ':':<16}{json.dumps(value) if value else '-'}")
    for name in ("truncation", "padding"):
        value = info[name]
        settings = " ".join(f"{k}={v}" for k, v in value.items()) if value else "-"
        note = " (encode applies it; count and tokenize-corpus only with --truncation)" if value else ""
        print(f"{name + ':':<16}{settings}{note}")
    defaults = info["defaults"]
    print(f"defaults:       add_special={defaults['add_special']} special={defaults['special']} "
          f"skip_special={defaults['skip_special']}; empty text encodes to {defaults['with_special_tokens_added']}")
    named = " ".join(f"{k}={v['text']!r}({v['id']})" for k, v in info["named_special_tokens"].items())
    print(f"named tokens:   {named or '-'}; end of generation: {info['end_of_generation']}")
    print(f"chat templates: {', '.join(info['chat_templates']) or '-'}")
    print(f"engine:         {_engine_line(info['engine'])}")
    print(f"added tokens:   {len(info['added_tokens'])} (parse mode parses all; text mode only non-special)")
    for t in info["added_tokens"][:200]:
        mode = "special" if t["special"] else "added  "
        print(f"  {t['id']:>8}  {mode}  {t['content']!r}  {' '.join(t['flags'])}")
    if len(info["added_tokens"]) > 200:
        print(f"  … {len(info['added_tokens']) - 200} more (use --json)")
    return 0


def _chat(args: argparse.Namespace) -> int:
    tok = load_model(args.model, args.option)
    source = _read_text_file(args.conversation)
    try:
        data = json.loads(source)
    except json.JSONDecodeError as exc:
        raise PolytokError(f"{args.conversation}: line {exc.lineno}: not JSON ({exc.msg})") from None
    options = {}
    if isinstance(data, dict):
        options = {k: data[k] for k in ("tools", "documents") if data.get(k) is not None}
        data = data.get("messages")
    if not isinstance(data, list):
        raise PolytokError(f"{args.conversation}: expected a list of messages or an object with 'messages'")
    out = tok.apply_chat_template(data, add_generation_prompt=args.generation_prompt, tokenize=args.tokenize,
                                  template=args.template, **options)
    sys.stdout.write(" ".join(map(str, out)) + "\n" if isinstance(out, list) else out)
    return 0


_COMMANDS = {"encode": _encode, "decode": _decode, "count": _count, "inspect": _inspect, "chat": _chat}
