"""Format readers, and `load`, which sniffs the format of a path.

Each reader turns a file into the shared components; see the reader modules.
"""

from __future__ import annotations

from pathlib import Path

from ..errors import FormatError
from ..tokenizer import Tokenizer

__all__ = ["load", "BUILTIN"]

_DATA = Path(__file__).resolve().parent.parent / "data"

BUILTIN = {"gpt2": _DATA / "gpt2.json.gz"}


def load(path: str | Path) -> Tokenizer:
    """Load a tokenizer from a file or a model folder, sniffing its format.

    Args:
        path: a ``tokenizer.json`` (or ``.json.gz``) file, a model folder holding
            one, or the name of a built-in tokenizer (``"gpt2"``).

    Returns:
        The `Tokenizer`.

    Raises:
        FormatError: the path does not exist, its format is not recognised, or
            the file is invalid (the error names the file and the key or offset).
    """
    from . import hf_json

    if isinstance(path, str) and path in BUILTIN and not Path(path).exists():
        tok = hf_json.read_tokenizer_json(BUILTIN[path])
        tok.metadata.update(source=f"builtin:{path}")
        return tok
    p = Path(path)
    if p.is_dir():
        if (p / "tokenizer.json").exists() or (p / "tokenizer.json.gz").exists():
            return hf_json.read_model_folder(p)
        raise FormatError("no tokenizer file found in this folder (looked for tokenizer.json)", file=str(p))
    if not p.exists():
        raise FormatError("no such file or folder", file=str(p))
    name = p.name.lower()
    if name.endswith(".gguf"):
        from .gguf import build_tokenizer, read_gguf_vocab

        return build_tokenizer(read_gguf_vocab(p))
    if name.endswith((".json", ".json.gz")):
        return hf_json.read_tokenizer_json(p)
    raise FormatError("unrecognised tokenizer format (expected tokenizer.json or a model folder)", file=str(p))
