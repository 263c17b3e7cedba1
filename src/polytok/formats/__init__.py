"""Format readers, and `load`, which sniffs the format of a path.

Each reader turns a file into the shared components; see the reader modules:

- `hf_json`: ``tokenizer.json`` (and a model folder's config files);
- `gguf`: a GGUF file's ``tokenizer.ggml.*`` vocabulary;
- `sentencepiece`: a SentencePiece ``.model`` (ModelProto);
- `tiktoken`: base64 rank files (``.tiktoken``, llama3/llama4 ``tokenizer.model``);
- `tekken`: Mistral's ``tekken.json``;
- `wordpiece_vocab`, `gpt2_vocab`, `rwkv_vocab`: the classic vocabulary files
  (BERT ``vocab.txt``; GPT-2 ``vocab.json`` + ``merges.txt``; RWKV "world").
"""

from __future__ import annotations


import inspect
import re
from pathlib import Path
from typing import Any

from .._gc import paused
from ..errors import FormatError
from ..tokenizer import Tokenizer
from . import folder as folder_files
from .compressed import read_head

__all__ = ["load", "BUILTIN", "sniff"]

_DATA = Path(__file__).resolve().parent.parent / "data"

BUILTIN = {"gpt2": _DATA / "gpt2.json.gz"}

# a tiktoken rank line: base64 of the token bytes, one space, the rank
_TIKTOKEN_LINE = re.compile(rb"\A[A-Za-z0-9+/]*={0,2} \d+\r?\n")
# an RWKV world vocabulary line: id, a Python str or bytes literal, its byte length
_RWKV_LINE = re.compile(rb"\A\d+ b?['\"]")
# the folder files polytok reads, in the order a folder is tried (each also as NAME.gz: `folder_files.find`)
_FOLDER_FILES = ("tokenizer.json", "tekken.json", "tokenizer.model", "vocab.json", "vocab.txt")


def sniff(path: str | Path) -> str:
    """The format `load` would read `path` as.

    One of ``"hf_json"``, ``"gguf"``, ``"sentencepiece"``, ``"tiktoken"``, ``"tekken"``,
    ``"wordpiece_vocab"``, ``"gpt2_vocab"``, ``"rwkv_vocab"``.

    Raises:
        FormatError: the path does not exist or its format is not recognised.
    """
    p = Path(path)
    if p.is_dir():
        for name in _FOLDER_FILES:
            found = folder_files.find(p, name)
            if found is not None:
                return sniff(found)
        rwkv = sorted(p.glob("rwkv_vocab*.txt"))
        if rwkv:
            return sniff(rwkv[0])
        raise FormatError("no tokenizer file found in this folder (looked for "
                          + ", ".join(_FOLDER_FILES) + " (each also .gz), rwkv_vocab*.txt)", file=str(p))
    if not p.exists():
        raise FormatError("no such file or folder", file=str(p))
    name = p.name.lower()
    head = read_head(p)
    if head[:4] == b"GGUF" or name.endswith(".gguf"):
        return "gguf"
    if name.startswith("tekken") and name.endswith((".json", ".json.gz")):
        return "tekken"
    if name.endswith((".json", ".json.gz")):
        if name in ("vocab.json", "vocab.json.gz") and folder_files.find(p.parent, "merges.txt") is not None:
            return "gpt2_vocab"
        return "hf_json"
    if name.endswith(".tiktoken") or _TIKTOKEN_LINE.match(head):
        return "tiktoken"
    if name.endswith((".txt", ".txt.gz")):
        return "rwkv_vocab" if _RWKV_LINE.match(head) else "wordpiece_vocab"
    if name.endswith((".model", ".spm", ".model.gz")) or head[:1] == b"\x0a":
        return "sentencepiece"
    raise FormatError("unrecognised tokenizer format (expected tokenizer.json, a .gguf, a SentencePiece "
                      ".model, a tiktoken rank file, tekken.json, vocab.txt, vocab.json + merges.txt, "
                      "or a model folder holding one)", file=str(p))


def load(path: str | Path, **options: Any) -> Tokenizer:
    """Load a tokenizer from a file or a model folder, sniffing its format.

    Args:
        path: a file of any format polytok reads (see `sniff`), a model folder
            holding one, or the name of a built-in tokenizer (``"gpt2"``).
        **options: format options, e.g. ``pattern=`` and ``special_tokens=`` for a
            tiktoken rank file polytok does not recognise, ``lowercase=`` for a
            ``vocab.txt``. An option the format does not take is an error.

    Returns:
        The `Tokenizer`.

    Raises:
        FormatError: the path does not exist, its format is not recognised, or
            the file is invalid (the error names the file and the key or offset).
    """
    with paused():  # a file's parsed tables are millions of new objects and no cycles (see `_load`)
        try:
            return _load(path, **options)
        except FormatError as exc:  # every error of a load names the file (a reader may not know it)
            raise exc.with_file(str(path)) from None


def _load(path: str | Path, **options: Any) -> Tokenizer:
    """`load` with the cyclic collector off: its passes over a freshly parsed tokenizer.json
    (every merge a small list, every token a string) were a fifth of Qwen3's load."""
    from . import hf_json

    if isinstance(path, str) and path in BUILTIN and not Path(path).exists():
        _no_options("builtin", options)
        tok = hf_json.read_tokenizer_json(BUILTIN[path])
        tok.metadata.update(source=f"builtin:{path}")
        return tok
    p = Path(path)
    kind = sniff(p)
    if kind == "hf_json":
        _no_options(kind, options)
        if p.is_dir():
            return hf_json.read_model_folder(p)
        return hf_json.read_tokenizer_json(p)
    if kind == "gguf":
        _no_options(kind, options)
        from .gguf import build_tokenizer, read_gguf_vocab

        return build_tokenizer(read_gguf_vocab(_file_in(p, ("*.gguf",))))
    if kind == "sentencepiece":
        from .sentencepiece import read_sentencepiece

        model = folder_files.find(p, "tokenizer.model") if p.is_dir() else None
        if model is not None:
            from .redefinitions import read_sentencepiece_folder

            return read_sentencepiece_folder(model, **options)
        return read_sentencepiece(_file_in(p, ("tokenizer.model",)), **options)
    if kind == "tiktoken":
        from .tiktoken import read_tiktoken

        return read_tiktoken(_file_in(p, ("tokenizer.model", "*.tiktoken")), **_declared(read_tiktoken, kind, options))
    if kind == "tekken":
        from .tekken import read_tekken

        return read_tekken(_file_in(p, ("tekken.json",)), **options)
    if kind == "gpt2_vocab":
        from .gpt2_vocab import read_gpt2_vocab

        return read_gpt2_vocab(_file_in(p, ("vocab.json",)), **options)
    if kind == "wordpiece_vocab":
        from .wordpiece_vocab import read_wordpiece_vocab

        return read_wordpiece_vocab(_file_in(p, ("vocab.txt",)), **options)
    from .rwkv_vocab import read_rwkv_vocab

    return read_rwkv_vocab(_file_in(p, ("rwkv_vocab*.txt",)), **options)


def _file_in(p: Path, patterns: tuple[str, ...]) -> Path:
    """`p` itself, or for a folder the first file matching one of `patterns` (a name: `folder_files.find`)."""
    if not p.is_dir():
        return p
    for pattern in patterns:
        found = sorted(p.glob(pattern)) if "*" in pattern else [f for f in [folder_files.find(p, pattern)] if f]
        if found:
            return found[0]
    raise FormatError("no tokenizer file found in this folder", file=str(p))


def _declared(reader: Any, kind: str, options: dict[str, Any]) -> dict[str, Any]:
    """`options`, when `reader` declares each as a keyword (a reader taking ``**options`` checks its own)."""
    params = inspect.signature(reader).parameters.values()
    if any(p.kind is p.VAR_KEYWORD for p in params):
        return options
    known = sorted(p.name for p in params if p.kind is p.KEYWORD_ONLY)
    unknown = sorted(set(options) - set(known))
    if unknown:
        raise FormatError(f"the {kind} reader takes no option {', '.join(unknown)} (it takes {', '.join(known)})")
    return options


def _no_options(kind: str, options: dict[str, Any]) -> None:
    if options:
        raise FormatError(f"the {kind} reader takes no options (got {', '.join(sorted(options))})")
