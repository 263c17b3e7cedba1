"""A GGUF file's vocabulary as llama.cpp loads it: type, flags, special ids, attributes, EOG set.

Reader for the GGUF format (the bytes are parsed by `gguf_reader`; keys are
named in `gguf_keys`). Reproduces the load-time decisions of llama.cpp as
vendored by llama-cpp-python 0.3.36, ``src/llama-vocab.cpp``
``llama_vocab::impl::load``: the vocabulary type and its default special ids
from ``tokenizer.ggml.model``; the flag defaults per type, changed by the BPE
pre type (`polytok.pre_tokenizers.llama_pre_types`) and by the GGUF keys; the
special ids (a key naming an id outside the vocabulary is ignored); and the
attribute and EOG rules of `polytok.special.llama_specials`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from ..decoders.llama_detokenizer import LlamaDetokenizer
from ..errors import FormatError
from ..pre_tokenizers.llama_pre_types import PreType, pre_type
from ..special import LlamaSpecials, llama_specials
from .gguf_keys import General, Tokenizer
from .gguf_reader import read_gguf_metadata

# tokenizer.ggml.model → (vocabulary type, default special ids)
VOCAB_TYPES: dict[str, tuple[str, dict[str, int]]] = {
    "llama": ("spm", {"bos": 1, "eos": 2, "unk": 0}),
    "bert": ("wpm", {"bos": 101, "unk": 100, "sep": 102, "pad": 0, "mask": 103}),
    "gpt2": ("bpe", {"bos": 11, "eos": 11}),
    "hybriddna": ("bpe", {"bos": 11, "eos": 11}),
    "whitespace": ("bpe", {"bos": 11, "eos": 11}),
    "gemma4": ("bpe", {}),
    "t5": ("ugm", {"eos": 1, "unk": 2, "pad": 0}),
    "rwkv": ("rwkv", {}),
    "plamo2": ("plamo2", {"bos": 1, "eos": 2, "unk": 0, "pad": 3}),
}

# flag defaults per vocabulary type (llama-vocab.cpp load; reference/llama_vocab.md §4)
_TYPE_FLAGS: dict[str, dict[str, bool]] = {
    "spm": {"add_space_prefix": True, "add_bos": True},
    "bpe": {"clean_spaces": True},
    "wpm": {"add_bos": True, "add_sep": True, "clean_spaces": True},
    "ugm": {"add_eos": True},
    "rwkv": {},
    "plamo2": {},
}

_ID_KEYS = {"bos": Tokenizer.BOS_ID, "eos": Tokenizer.EOS_ID, "eot": Tokenizer.EOT_ID, "eom": Tokenizer.EOM_ID,
            "unk": Tokenizer.UNK_ID, "sep": Tokenizer.SEP_ID, "pad": Tokenizer.PAD_ID, "mask": Tokenizer.MASK_ID,
            "fim_pre": Tokenizer.FIM_PRE_ID, "fim_suf": Tokenizer.FIM_SUF_ID, "fim_mid": Tokenizer.FIM_MID_ID,
            "fim_pad": Tokenizer.FIM_PAD_ID, "fim_rep": Tokenizer.FIM_REP_ID, "fim_sep": Tokenizer.FIM_SEP_ID}
# deprecated spellings, read after the others
_OLD_FIM_KEYS = {"fim_pre": Tokenizer.PREFIX_ID, "fim_suf": Tokenizer.SUFFIX_ID, "fim_mid": Tokenizer.MIDDLE_ID}


@dataclass
class GGUFVocab:
    """What llama.cpp knows about a GGUF vocabulary once it is loaded."""

    file: str
    model: str
    vocab_type: str
    texts: list[str]
    token_types: list[int] | None
    scores: list[float] | None
    merges: list[str] | None
    pre: PreType | None
    flags: dict[str, bool]
    specials: LlamaSpecials
    metadata: dict[str, Any] = field(repr=False, default_factory=dict)

    def detokenizer(self) -> LlamaDetokenizer:
        f, ids = self.flags, self.specials.ids
        return LlamaDetokenizer(self.texts, self.specials.attrs, self.vocab_type,
                                escape_whitespaces=f["escape_whitespaces"], clean_spaces=f["clean_spaces"],
                                add_space_prefix=f["add_space_prefix"], add_bos=f["add_bos"], add_eos=f["add_eos"],
                                bos_id=ids.get("bos"), eos_id=ids.get("eos"))


def read_gguf_vocab(path: str | os.PathLike[str]) -> GGUFVocab:
    """The vocabulary of a GGUF file (vocab-only or a whole model), as llama.cpp loads it."""
    meta = read_gguf_metadata(path)
    kv, name = meta.kv, str(path)
    model = kv.get(Tokenizer.MODEL)
    if not isinstance(model, str):
        raise FormatError("no tokenizer.ggml.model: this GGUF file holds no vocabulary", file=name,
                          key=Tokenizer.MODEL)
    if model not in VOCAB_TYPES:
        raise FormatError(f"unknown tokenizer model {model!r} (llama.cpp knows {sorted(VOCAB_TYPES)})",
                          file=name, key=Tokenizer.MODEL)
    vocab_type, default_ids = VOCAB_TYPES[model]
    texts = _string_list(kv, Tokenizer.LIST, name)
    texts = [t if t else f"[EMPTY_{i}]" for i, t in enumerate(texts)]
    pre = None
    if vocab_type == "bpe":
        pre = pre_type("gemma4" if model == "gemma4" else kv.get(Tokenizer.PRE), Tokenizer.PRE)
    flags = _flags(vocab_type, pre, kv)
    if pre is not None and pre.bos_none:
        default_ids = {k: v for k, v in default_ids.items() if k != "bos"}
    ids = _special_ids(default_ids, kv, len(texts))
    specials = llama_specials(texts, kv.get(Tokenizer.TOKEN_TYPE), ids, pre=str(kv.get(Tokenizer.PRE) or ""),
                              architecture=str(kv.get(General.ARCHITECTURE) or ""),
                              name=str(kv.get(General.NAME) or ""))
    return GGUFVocab(name, model, vocab_type, texts, kv.get(Tokenizer.TOKEN_TYPE), kv.get(Tokenizer.SCORES),
                     kv.get(Tokenizer.MERGES), pre, flags, specials, kv)


def _string_list(kv: dict[str, Any], key: str, file: str) -> list[str]:
    value = kv.get(key)
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise FormatError("expected an array of strings", file=file, key=key)
    return value


def _flags(vocab_type: str, pre: PreType | None, kv: dict[str, Any]) -> dict[str, bool]:
    flags = {"add_space_prefix": False, "add_bos": False, "add_eos": False, "add_sep": False,
             "ignore_merges": False, "clean_spaces": False, "remove_extra_whitespaces": False,
             "escape_whitespaces": True}
    flags.update(_TYPE_FLAGS[vocab_type])
    if pre is not None:
        flags.update(add_space_prefix=pre.add_space_prefix, escape_whitespaces=pre.escape_whitespaces,
                     clean_spaces=pre.clean_spaces, ignore_merges=pre.ignore_merges)
        for flag in ("add_bos", "add_sep"):
            if getattr(pre, flag) is not None:
                flags[flag] = getattr(pre, flag)
    for flag, key in (("add_space_prefix", Tokenizer.ADD_PREFIX), ("remove_extra_whitespaces", Tokenizer.REMOVE_EXTRA_WS),
                      ("add_bos", Tokenizer.ADD_BOS), ("add_eos", Tokenizer.ADD_EOS), ("add_sep", Tokenizer.ADD_SEP)):
        if isinstance(kv.get(key), bool):
            flags[flag] = kv[key]
    if pre is not None and pre.force_add_bos:
        flags["add_bos"] = True
    return flags


def _special_ids(defaults: dict[str, int], kv: dict[str, Any], n: int) -> dict[str, int | None]:
    ids: dict[str, int | None] = {}
    for category, key in _ID_KEYS.items():
        default = defaults.get(category)
        ids[category] = default if default is not None and default < n else None
        value = kv.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < n:
            ids[category] = value
    for category, key in _OLD_FIM_KEYS.items():
        value = kv.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < n:
            ids[category] = value
    return ids
