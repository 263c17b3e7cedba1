"""Format readers, and `load`, which sniffs the format of a path (or finds a model name's folder).

Each reader turns a file into the shared components; see the reader modules:

- `hf_json`: ``tokenizer.json`` (and a model folder's config files);
- `gguf`: a GGUF file's ``tokenizer.ggml.*`` vocabulary;
- `sentencepiece`: a SentencePiece ``.model`` (ModelProto);
- `tiktoken`: base64 rank files (``.tiktoken``, llama3/llama4 ``tokenizer.model``);
- `tekken`: Mistral's ``tekken.json``;
- `wordpiece_vocab`, `gpt2_vocab`, `rwkv_vocab`: the classic vocabulary files
  (BERT ``vocab.txt``; GPT-2 ``vocab.json`` + ``merges.txt``; RWKV "world").

`hub_cache` resolves a Hugging Face model name to its folder in the Hugging Face cache.

`sniff` and `load` know them only through `polytok.formats.registry.FORMATS`: one
declaration a format of how a file is recognised, which files a model folder is
searched for, and how the file is read with which options.
"""

from __future__ import annotations

import inspect
from dataclasses import replace
from pathlib import Path
from typing import Any

from ..errors import FormatError
from ..gc_pause import gc_paused
from ..tokenizer import Tokenizer
from . import hub_cache
from .compressed import read_head
from .registry import BY_NAME, FOLDER_SEARCH, FORMATS, FileHead, Reader, file_in, find_in, is_glob

__all__ = ["load", "BUILTIN", "sniff"]

_DATA = Path(__file__).resolve().parent.parent / "data"

BUILTIN = {"gpt2": _DATA / "gpt2.json.gz"}


def sniff(path: str | Path) -> str:
    """The format `load` would read `path` as.

    The ``name`` of the first format of `polytok.formats.registry.FORMATS` that claims
    the file (``"hf_json"``, ``"gguf"``, ``"sentencepiece"``, ``"tiktoken"``, …); for a
    model folder, of the first file found of `polytok.formats.registry.FOLDER_SEARCH`.

    Raises:
        FormatError: the path does not exist or its format is not recognised.
    """
    p = Path(path)
    return _sniff(p, p.is_dir())


def _sniff(p: Path, is_dir: bool) -> str:
    """`sniff` of `p`, told whether it is a folder."""
    if is_dir:
        return sniff(_folder_file(p))
    if not p.exists():
        raise FormatError("no such file or folder", file=str(p))
    file = FileHead(p, p.name.lower(), read_head(p))
    for spec in FORMATS:
        if spec.claims(file):
            return spec.name
    raise FormatError("unrecognised tokenizer format (expected " + ", ".join(spec.expected for spec in FORMATS)
                      + ", or a model folder holding one)", file=str(p))


def _folder_file(folder: Path) -> Path:
    """The first file of `FOLDER_SEARCH` in `folder`."""
    found = find_in(folder, FOLDER_SEARCH)
    if found is not None:
        return found
    names = [pattern for pattern in FOLDER_SEARCH if not is_glob(pattern)]
    globs = [pattern for pattern in FOLDER_SEARCH if is_glob(pattern)]
    raise FormatError("no tokenizer file found in this folder (looked for " + ", ".join(names) + " (each also .gz)"
                      + "".join(", " + glob for glob in globs) + ")", file=str(folder))


def load(path: str | Path, *, revision: str | None = None, filename: str | None = None, download: bool = True,
         **options: Any) -> Tokenizer:
    """Load a tokenizer from a file, a model folder or a Hugging Face model name, sniffing its format.

    Args:
        path: a file of any format polytok reads (see `sniff`), a model folder
            holding one, the name of a built-in tokenizer (``"gpt2"``), or a
            Hugging Face model name (``"Qwen/Qwen3-0.6B"``): its folder in the
            Hugging Face cache (`polytok.formats.hub_cache`), else its tokenizer
            files downloaded into that cache (with ``polytok[hub]`` installed).
            A path that exists comes first, then a built-in name, then the cache.
        revision: for a model name, a branch or tag (looked up in the cache's
            ``refs/``) or a full 40-digit commit hash; ``"main"`` by default.
        filename: for a model name, the one file of the model to load (a GGUF
            file, ``original/tokenizer.model`` …) instead of its folder.
        download: for a model name missing from the cache, download it
            (``transformers``' ``from_pretrained`` does by default);
            ``HF_HUB_OFFLINE=1`` in the environment forbids it as well.
        **options: format options, e.g. ``pattern=`` and ``special_tokens=`` for a
            tiktoken rank file polytok does not recognise, ``lowercase=`` for a
            ``vocab.txt``. An option the format does not take is an error.

    Returns:
        The `Tokenizer`.

    Raises:
        FormatError: the path does not exist (for a model name: nor is it cached
            or downloaded, all three said in one line), its format is not
            recognised, or the file is invalid (the error names the file and the
            key or offset).
    """
    with gc_paused():  # a file's parsed tables are millions of new objects and no cycles (see `_load`)
        try:
            return _load(_located(path, revision, filename, download), **options)
        except FormatError as exc:  # every error of a load names the file (a reader may not know it)
            raise exc.with_file(str(path)) from None


def _located(path: str | Path, revision: str | None, filename: str | None, download: bool) -> str | Path:
    """`path`, or the cached folder (or file) of the model it names."""
    if not isinstance(path, str) or Path(path).exists():
        given = [f"{key}=" for key, value in (("revision", revision), ("filename", filename)) if value is not None]
        if given:
            raise FormatError(f"{' and '.join(given)} apply to a Hugging Face model name, not to an existing "
                              "file or folder", file=str(path))
        return path
    if path in BUILTIN:
        if revision is not None or filename is not None:
            raise FormatError("the built-in gpt2 has no revisions or files (the Hub's is "
                              "'openai-community/gpt2')", file=path)
        return path
    if not hub_cache.is_model_name(path):
        return path
    return hub_cache.resolve(path, revision=revision, filename=filename, download=download)


def _load(path: str | Path, **options: Any) -> Tokenizer:
    """`load` with the cyclic collector off: its passes over a freshly parsed tokenizer.json
    (every merge a small list, every token a string) were a fifth of Qwen3's load."""
    if isinstance(path, str) and path in BUILTIN and not Path(path).exists():
        read = BY_NAME["hf_json"].reader()
        tok = read(BUILTIN[path], **_options(read, "builtin", options))
        tok.facts = replace(tok.facts, source=f"builtin:{path}")
        return tok
    p = Path(path)
    is_dir = p.is_dir()
    spec = BY_NAME[_sniff(p, is_dir)]
    if is_dir and spec.folder_reader is not None:
        read = spec.folder_reader()
        return read(p, **_options(read, spec.name, options))
    read = spec.reader()
    options = _options(read, spec.name, options)
    return read(file_in(p, spec.folder_files) if is_dir else p, **options)


def _options(read: Reader, kind: str, options: dict[str, Any]) -> dict[str, Any]:
    """`options`, when `read` declares each as a keyword-only parameter (a reader taking ``**options``
    checks its own)."""
    if not options:  # every reader takes none (its signature is looked at only for options given)
        return options
    params = inspect.signature(read).parameters.values()
    if any(p.kind is p.VAR_KEYWORD for p in params):
        return options
    known = sorted(p.name for p in params if p.kind is p.KEYWORD_ONLY)
    if options and not known:
        raise FormatError(f"the {kind} reader takes no options (got {', '.join(sorted(options))})")
    unknown = sorted(set(options) - set(known))
    if unknown:
        raise FormatError(f"the {kind} reader takes no option {', '.join(unknown)} (it takes {', '.join(known)})")
    return options
