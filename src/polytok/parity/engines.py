"""Adapters to the reference engines, each imported only when asked for.

Every side of a comparison (`Side`) encodes a text in a polytok mode
``(add_special, special)`` and decodes ids back, so `polytok.parity.compare`
treats polytok and the engines alike. The mode maps onto each engine's call as
DESIGN.md's table says:

- hf (tokenizers 0.23.3, ``Tokenizer.from_file``): ``encode(t, add_special_tokens=a)``;
  ``AS_TEXT`` sets ``encode_special_tokens = True``. A folder goes through
  transformers' ``AutoTokenizer`` (``encode(t, add_special_tokens=a,
  split_special_tokens=not parse)``).
- llama.cpp (llama-cpp-python, low-level API): a ``vocab_only`` model;
  ``llama_tokenize(..., add_special=a, parse_special=p)``; decode is
  ``llama_detokenize(..., remove_special=False, unparse_special=True)``.
- sentencepiece: ``encode(t)``, which is ``add_special`` ignored (polytok's reader
  adds nothing either) and ``AS_TEXT``; it has no parse mode.
- tiktoken: ``encode_ordinary(t)`` is ``AS_TEXT``, ``encode(t, allowed_special="all")``
  is ``PARSE``. A rank file holds no pattern nor special tokens: both come from
  polytok's reading of the file (its table of known files, or ``-o pattern=``).
- mistral (mistral-common ``Tekkenizer``): ``encode(t, bos=a, eos=False)``; no parse mode.

Each engine opens the input polytok read, in a form it can open (a folder's file,
gzip data decompressed): `polytok.parity.ref_input`; an engine that loads another
vocabulary is refused there, never compared.
"""

from __future__ import annotations

import os
from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any

from ..errors import PolytokError
from ..special import SpecialTokens
from ..tokenizer import Tokenizer
from .ref_input import EngineInput, check_same_input, engine_input

_UNKNOWN, _CONTROL, _USER_DEFINED = 1 << 0, 1 << 3, 1 << 4  # llama.h llama_token_attr
ENGINES = ("hf", "llama.cpp", "sentencepiece", "tiktoken", "mistral")
_PACKAGES = {"hf": "tokenizers", "transformers": "transformers", "llama.cpp": "llama_cpp (llama-cpp-python)",
             "sentencepiece": "sentencepiece", "tiktoken": "tiktoken", "mistral": "mistral_common (mistral-common)"}


class Side(ABC):
    """One side of a comparison: a polytok pipeline or a reference engine on a file."""

    engine = "polytok"

    def __init__(self, path: str, label: str) -> None:
        self.path = path
        self.label = label
        #: the format of the file ("tokenizer.json", "gguf", "sentencepiece", "tiktoken", "tekken", …)
        self.format = "?"
        #: rows of the base model (without added tokens), when known
        self.base_size: int | None = None
        #: special ids (control tokens)
        self.special: set[int] = set()
        #: ids of every added token or special marker (the tokens a marker in the text can name)
        self.added: set[int] = set()
        self.unk_id: int | None = None
        #: polytok's pipeline for this file (for --explain); None when polytok cannot read it
        self.tokenizer: Tokenizer | None = None
        #: what a reference engine opened for `path` (`parity.ref_input`: maybe a decompressed copy)
        self.input: EngineInput | None = None

    @abstractmethod
    def encode(self, text: str, add_special: bool, special: str | None) -> list[int]:
        """The ids of `text` in the given mode (`special` None: the side's own default)."""

    @abstractmethod
    def decode(self, ids: list[int]) -> str:
        """The text of `ids`, special tokens kept."""

    @abstractmethod
    def piece(self, id_: int) -> str:
        """How the side spells one id (``<id N>`` for one it does not have)."""


def _require(engine: str) -> Any:
    """Import an engine's package, or raise a PolytokError that names it."""
    import importlib

    module = {"hf": "tokenizers", "transformers": "transformers", "llama.cpp": "llama_cpp",
              "sentencepiece": "sentencepiece", "tiktoken": "tiktoken",
              "mistral": "mistral_common.tokens.tokenizers.tekken"}[engine]
    try:
        return importlib.import_module(module)
    except ImportError:
        raise PolytokError(f"--ref {engine} needs the package {_PACKAGES[engine]}, which is not installed") from None


class PolytokSide(Side):
    """polytok's own pipeline for a file."""

    def __init__(self, tok: Tokenizer, label: str) -> None:
        super().__init__(tok.facts.source, label)
        self.tokenizer = tok
        self.format = tok.facts.format
        self.base_size = tok.model.vocab_size()
        self.special = set(tok.special_ids.values()) | {i for s, i in tok.added.content_to_id.items()
                                                         if tok.added.is_special_string(s)}
        self.added = set(tok.added.content_to_id.values()) | self.special
        unk = tok.special_ids.get("unk", getattr(tok.model, "unk_id", None))
        self.unk_id = unk if isinstance(unk, int) else None

    def encode(self, text: str, add_special: bool, special: str | None) -> list[int]:
        assert self.tokenizer is not None
        return self.tokenizer.encode(text, add_special=add_special, special=special)

    def decode(self, ids: list[int]) -> str:
        assert self.tokenizer is not None
        return self.tokenizer.decode(ids)

    def piece(self, id_: int) -> str:
        assert self.tokenizer is not None
        found = self.tokenizer.id_to_token(id_)
        return found if found is not None else f"<id {id_}>"


def _parse(special: str | None, default: SpecialTokens) -> bool:
    return SpecialTokens(default if special is None else special) is SpecialTokens.PARSE


def _no_parse(engine: str, special: str | None) -> None:
    if special is not None and SpecialTokens(special) is SpecialTokens.PARSE:
        raise PolytokError(f"{engine} has no call that parses special-token markers; use --special text")


class HfSide(Side):
    """HF tokenizers on a tokenizer.json (transformers' AutoTokenizer on a folder)."""

    engine = "hf"

    def __init__(self, path: str, label: str) -> None:
        super().__init__(path, label)
        self.folder = os.path.isdir(path)
        plain = not self.folder or os.path.isfile(os.path.join(path, "tokenizer.json"))
        self.format = "tokenizer.json" if plain else "transformers"
        if self.folder:
            self.engine = "transformers"
            # trust_remote_code=False: a folder with custom code is refused at once, never a prompt on stdin
            self.ref: Any = _require("transformers").AutoTokenizer.from_pretrained(path, trust_remote_code=False)
            self.special = set(self.ref.all_special_ids)
            self.added = set(self.ref.added_tokens_decoder) | self.special
            self.base_size = _base_size_of_folder(self.ref)
            self.unk_id = self.ref.unk_token_id
        else:
            self.ref = _require("hf").Tokenizer.from_file(path)
            self.base_size = self.ref.get_vocab_size(with_added_tokens=False)
            decoder = self.ref.get_added_tokens_decoder()
            self.special = {i for i, t in decoder.items() if t.special}
            self.added = set(decoder)
            unk = getattr(self.ref.model, "unk_token", None)
            self.unk_id = self.ref.token_to_id(unk) if isinstance(unk, str) else None

    def encode(self, text: str, add_special: bool, special: str | None) -> list[int]:
        parse = _parse(special, SpecialTokens.PARSE)
        if self.folder:
            return list(self.ref.encode(text, add_special_tokens=add_special, split_special_tokens=not parse))
        self.ref.encode_special_tokens = not parse
        try:
            return list(self.ref.encode(text, add_special_tokens=add_special).ids)
        finally:
            self.ref.encode_special_tokens = False

    def decode(self, ids: list[int]) -> str:
        return str(self.ref.decode(ids, skip_special_tokens=False))

    def piece(self, id_: int) -> str:
        found = (self.ref.convert_ids_to_tokens(id_) if self.folder else self.ref.id_to_token(id_))
        return str(found) if found is not None else f"<id {id_}>"


def _base_size_of_folder(ref: Any) -> int | None:
    backend = getattr(ref, "backend_tokenizer", None) or getattr(ref, "_tokenizer", None)
    if backend is not None:
        return int(backend.get_vocab_size(with_added_tokens=False))
    sp = getattr(ref, "sp_model", None)
    return int(sp.get_piece_size()) if sp is not None else None


class LlamaCppSide(Side):
    """llama.cpp (through llama-cpp-python) on a GGUF: a vocab-only model."""

    engine = "llama.cpp"

    def __init__(self, path: str, label: str) -> None:
        super().__init__(path, label)
        self.format = "gguf"
        L = self.L = _require("llama.cpp")
        L.llama_backend_init()
        params = L.llama_model_default_params()
        params.vocab_only = True
        if not os.path.isfile(path):
            raise PolytokError(f"{path}: no such file")
        self.model = L.llama_model_load_from_file(path.encode(), params)
        if not self.model:
            raise PolytokError(f"{path}: llama.cpp could not load it")
        self.vocab = L.llama_model_get_vocab(self.model)
        self.base_size = int(L.llama_vocab_n_tokens(self.vocab))
        attrs = [int(L.llama_vocab_get_attr(self.vocab, i)) for i in range(self.base_size)]
        self.special = {i for i, a in enumerate(attrs) if a & _CONTROL}
        self.added = {i for i, a in enumerate(attrs) if a & (_CONTROL | _USER_DEFINED)}
        self.unk_id = next((i for i, a in enumerate(attrs) if a & _UNKNOWN), None)

    def encode(self, text: str, add_special: bool, special: str | None) -> list[int]:
        return self.tokenize(text, add_special, _parse(special, SpecialTokens.PARSE))

    def tokenize(self, text: str, add_special: bool, parse_special: bool) -> list[int]:
        """``llama_tokenize`` with its two flags."""
        data = text.encode("utf-8")
        cap = len(data) + 16
        while True:
            buf = (self.L.llama_token * cap)()
            n = self.L.llama_tokenize(self.vocab, data, len(data), buf, cap, add_special, parse_special)
            if n >= 0:
                return list(buf[:n])
            cap = -n

    def decode_bytes(self, ids: list[int], remove_special: bool = False, unparse_special: bool = True) -> bytes:
        """``llama_detokenize`` with its two flags (by default: special tokens kept, as text)."""
        arr = (self.L.llama_token * max(1, len(ids)))(*ids)
        import ctypes  # here, not at the top: it slowed every ``import polytok`` (bench/README.md)

        cap = 64 + 16 * len(ids)
        while True:
            buf = ctypes.create_string_buffer(cap)
            n = self.L.llama_detokenize(self.vocab, arr, len(ids), buf, cap, remove_special, unparse_special)
            if n >= 0:
                return buf.raw[:n]
            cap = -n

    def decode(self, ids: list[int]) -> str:
        return self.decode_bytes(ids).decode("utf-8", "replace")

    def piece(self, id_: int) -> str:
        if not 0 <= id_ < (self.base_size or 0):
            return f"<id {id_}>"
        raw = self.L.llama_vocab_get_text(self.vocab, id_)
        return raw.decode("utf-8", "replace") if isinstance(raw, bytes) else str(raw)

    def close(self) -> None:
        if self.model:
            self.L.llama_model_free(self.model)
            self.model = None


class SentencePieceSide(Side):
    engine = "sentencepiece"

    def __init__(self, path: str, label: str) -> None:
        super().__init__(path, label)
        self.format = "sentencepiece"
        spm = _require("sentencepiece")
        try:
            self.ref = spm.SentencePieceProcessor(model_file=path)
        except (OSError, RuntimeError) as exc:
            raise PolytokError(f"{path}: sentencepiece could not load it ({exc})") from None
        self.base_size = int(self.ref.get_piece_size())
        self.special = {i for i in range(self.base_size) if self.ref.is_control(i)}
        self.added = set(self.special)
        self.unk_id = int(self.ref.unk_id())

    def encode(self, text: str, add_special: bool, special: str | None) -> list[int]:
        _no_parse("sentencepiece", special)
        return list(self.ref.encode(text))

    def decode(self, ids: list[int]) -> str:
        return str(self.ref.decode(ids))

    def piece(self, id_: int) -> str:
        return str(self.ref.id_to_piece(id_)) if 0 <= id_ < (self.base_size or 0) else f"<id {id_}>"


class TiktokenSide(Side):
    engine = "tiktoken"

    def __init__(self, path: str, label: str, tok: Tokenizer) -> None:
        super().__init__(path, label)
        self.format = "tiktoken"
        tiktoken = _require("tiktoken")
        from tiktoken.load import load_tiktoken_bpe

        specials = dict(tok.added.content_to_id)
        self.ref = tiktoken.Encoding(os.path.basename(path), pat_str=tok.facts.pattern,
                                     mergeable_ranks=load_tiktoken_bpe(path), special_tokens=specials)
        self.base_size = self.ref.n_vocab - len(specials)
        self.special = set(specials.values())
        self.added = set(self.special)

    def encode(self, text: str, add_special: bool, special: str | None) -> list[int]:
        if _parse(special, SpecialTokens.AS_TEXT):
            return list(self.ref.encode(text, allowed_special="all"))
        return list(self.ref.encode_ordinary(text))

    def decode(self, ids: list[int]) -> str:
        return str(self.ref.decode(ids))

    def piece(self, id_: int) -> str:
        try:
            return str(self.ref.decode_single_token_bytes(id_).decode("utf-8", "backslashreplace"))
        except KeyError:
            return f"<id {id_}>"


class MistralSide(Side):
    engine = "mistral"

    def __init__(self, path: str, label: str) -> None:
        super().__init__(path, label)
        self.format = "tekken"
        module = _require("mistral")
        from mistral_common.tokens.tokenizers.base import SpecialTokenPolicy

        self.keep = SpecialTokenPolicy.KEEP
        self.ref = module.Tekkenizer.from_file(path)
        self.special = set(range(self.ref.num_special_tokens))
        self.added = set(self.special)

    def encode(self, text: str, add_special: bool, special: str | None) -> list[int]:
        _no_parse("mistral-common", special)
        return list(self.ref.encode(text, bos=add_special, eos=False))

    def decode(self, ids: list[int]) -> str:
        return str(self.ref.decode(ids, special_token_policy=self.keep))

    def piece(self, id_: int) -> str:
        try:
            return str(self.ref.id_to_piece(id_))
        except (IndexError, KeyError, ValueError):
            return f"<id {id_}>"


def reference_side(engine: str, path: str, label: str, proxy: Tokenizer | None) -> Side:
    """The reference `engine` loading `path`; `proxy` is polytok's reading of the same file (or None)."""
    if engine not in ENGINES:
        raise PolytokError(f"unknown --ref {engine!r} (one of: {', '.join(ENGINES)})")
    if not os.path.exists(path):
        raise PolytokError(f"{path}: no such file or folder")
    if engine == "tiktoken" and proxy is None:
        raise PolytokError(f"{path}: --ref tiktoken takes the pattern and special tokens from polytok's "
                           "reading of the file, which failed")
    given = engine_input(engine, path, proxy)  # the plain file (or folder) the engine opens

    def tiktoken_side(file: str, side_label: str) -> Side:
        assert proxy is not None  # refused above
        return TiktokenSide(file, side_label, proxy)

    makers: dict[str, Callable[[str, str], Side]] = {
        "hf": HfSide, "llama.cpp": LlamaCppSide, "sentencepiece": SentencePieceSide, "mistral": MistralSide,
        "tiktoken": tiktoken_side}
    try:
        side = makers[engine](given.path, label)
    except PolytokError:
        raise
    except Exception as exc:  # an engine's own failure to load the file, in one line
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise PolytokError(f"{path}: {engine} could not load it ({first})") from None
    side.path, side.input = path, given
    check_same_input(engine, path, side, proxy)
    side.tokenizer = proxy
    return side

