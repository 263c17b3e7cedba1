"""A ``tokenizer.json`` folder's vocabulary as llama.cpp's converter writes it to a GGUF.

Reproduces, from llama-cpp-python 0.3.36's sdist (vendor/llama.cpp):

- ``conversion/base.py`` ``TextModel.get_vocab_base`` (line 1581; GPT-2 BPE and
  WordPiece): ids missing from the vocabulary become ``[PAD<i>]`` (UNUSED); an
  added token is CONTROL when special or special-looking, else USER_DEFINED with
  U+2581 written as a space; a non-normalized added token is first re-encoded and
  decoded (polytok's own reader stands in for transformers' AutoTokenizer);
- ``get_vocab_base_pre`` (line 1629): the ids of a fixed text, with the
  post-processor's special tokens and without the file's truncation, hashed with
  sha256 of their Python list repr, looked up in llama.cpp's table (the last
  matching row wins, as in its chain of ``if``); see `pre_name`;
- ``gguf-py/gguf/vocab.py`` ``LlamaHfVocab`` (line 555; a Llama BPE with byte
  fallback and no tokenizer.model): ``<0xXX>`` BYTE, the
  tokenizer's special ids CONTROL (its named tokens plus
  ``additional_special_tokens``/``extra_special_tokens``, as transformers 5.24's
  ``all_special_ids``), added tokens past the base vocabulary appended.
  Its scores are all -1000 (a placeholder in gguf-py); polytok writes them from
  the merge ranks instead (`rank_scores`), with which llama.cpp splits words as
  HF does, and -1000 only when asked (``like_converter``);
- ``conversion/bert.py`` ``BertModel.set_vocab`` (line 40): WordPiece pieces in
  "phantom space" form (``##x`` → ``x``, else ``▁x``; CONTROL kept).

A config entry giving an existing id a new text replaces that id's text (never a
new id; see `polytok.formats.redefinitions`).
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from ..errors import FormatError
from ..formats import folder as folder_files
from ..formats.redefinitions import BYTE, CONTROL, NORMAL, TYPE_NAMES, UNUSED, USER_DEFINED, Redefinition, looks_special

__all__ = ["HfVocab", "tokenizer_json_path", "read_tokenizer_json_data", "bpe_vocab", "llama_hf_vocab", "rank_scores",
           "bert_vocab", "pre_name", "pre_hash", "is_llama_hf", "check_text", "known_pre_names"]

_DATA = Path(__file__).resolve().parent.parent / "data" / "gguf_pre_hashes.json"
_BYTE = re.compile(r"<0x[0-9A-Fa-f]{2}>")


@dataclass
class HfVocab:
    """Tokens, types (and scores for the ``llama`` model) of a converted tokenizer.json."""

    tokens: list[str]
    types: list[int]
    scores: list[float] | None = None
    pre: str | None = None
    chkhsh: str | None = None
    redefinitions: list[Redefinition] = field(default_factory=list)


def tokenizer_json_path(folder: Path) -> Path | None:
    return folder_files.find(folder, "tokenizer.json")


def read_tokenizer_json_data(folder: Path) -> dict[str, Any]:
    path = tokenizer_json_path(folder)
    if path is None:
        raise FormatError("no tokenizer.json in this folder", file=str(folder))
    data = folder_files.parse_json(path)
    if not isinstance(data, dict) or not isinstance(data.get("model"), dict):
        raise FormatError("expected a tokenizer.json object with a 'model'", file=str(path), key="model")
    return data


def _added(folder: Path, data: dict[str, Any]) -> dict[int, dict[str, Any]]:
    """Added tokens by id: tokenizer.json's, then tokenizer_config.json's entries for other ids."""
    out: dict[int, dict[str, Any]] = {}
    for n, entry in enumerate(data.get("added_tokens") or []):
        if not isinstance(entry, dict) or not isinstance(entry.get("id"), int) \
                or not isinstance(entry.get("content"), str):
            raise FormatError("expected an object with an integer 'id' and a string 'content'",
                              file=str(folder_files.where(folder, "tokenizer.json")), key=f"added_tokens[{n}]")
        out[entry["id"]] = entry
    path = folder_files.where(folder, "tokenizer_config.json")
    config = folder_files.read_json(folder, "tokenizer_config.json") or {}
    decoder = config.get("added_tokens_decoder") if isinstance(config, dict) else None
    for key, entry in (decoder or {}).items():
        if not str(key).isdigit() or not isinstance(entry, dict) or not isinstance(entry.get("content"), str):
            raise FormatError("expected an id and an object with a string 'content'", file=str(path),
                              key=f"added_tokens_decoder.{key}")
        out.setdefault(int(key), {**entry, "id": int(key)})
    return out


def _base_vocab(folder: Path, data: dict[str, Any]) -> dict[int, str]:
    vocab = data["model"].get("vocab")
    if isinstance(vocab, list):  # Unigram: [[piece, score], ...]
        return {i: p[0] for i, p in enumerate(vocab)}
    if not isinstance(vocab, dict):
        raise FormatError("expected a vocabulary object", file=str(folder_files.where(folder, "tokenizer.json")),
                          key="model.vocab")
    return {id_: text for text, id_ in vocab.items()}


def _merged(folder: Path, data: dict[str, Any], added: dict[int, dict[str, Any]],
            size: int | None, like_converter: bool = False) -> tuple[dict[int, str], list[Redefinition], int]:
    """Base and added tokens by id, the redefinitions, and the vocabulary size: config.json's
    ``vocab_size``; without it, the count of distinct texts (the converter's
    ``len(tokenizer.vocab)``) with `like_converter`, else one past the highest id (ids missing
    below it are written ``[PAD<i>]`` either way)."""
    reverse = _base_vocab(folder, data)
    redefs = []
    for id_, entry in sorted(added.items()):
        old = reverse.get(id_)
        if old is not None and old != entry["content"]:
            redefs.append(Redefinition(id_, old, entry["content"], "", "added_tokens"))
        reverse[id_] = entry["content"]
    count = len(set(reverse.values()))
    top = max(reverse) + 1 if reverse else 0
    n = size if size is not None else count if like_converter else max(count, top)
    if top > n:
        if size is not None:
            raise FormatError(f"token id {top - 1} is outside the vocabulary size {n} (config.json vocab_size)",
                              file=str(folder_files.where(folder, "config.json")), key="vocab_size")
        raise FormatError(f"token id {top - 1} is past the {count} distinct tokens, which llama.cpp's converter "
                          "takes for the vocabulary size without a config.json vocab_size (--like-converter)",
                          file=str(folder_files.where(folder, "tokenizer.json")), key="model.vocab")
    return reverse, redefs, n


def bpe_vocab(folder: Path, tok: Any, vocab_size: int | None, *, like_converter: bool = False) -> HfVocab:
    """``get_vocab_base`` (module notes); `tok` is polytok's Tokenizer of the folder."""
    data = read_tokenizer_json_data(folder)
    added = _added(folder, data)
    reverse, redefs, n = _merged(folder, data, added, vocab_size, like_converter)
    by_text = {e["content"]: e for e in added.values()}
    tokens, types = [], []
    for i in range(n):
        text = reverse.get(i)
        if text is None:
            tokens.append(f"[PAD{i}]")
            types.append(UNUSED)
            continue
        entry = by_text.get(text)
        if entry is not None:
            if not entry.get("normalized", not entry.get("special", False)):
                text = tok.decode(tok.encode(text, add_special=False, special="parse"))
            if entry.get("special") or looks_special(text):
                types.append(CONTROL)
            else:
                text = text.replace("\u2581", " ")
                types.append(USER_DEFINED)
        else:
            types.append(NORMAL)
        tokens.append(text)
    redefs = [Redefinition(r.id, r.old, tokens[r.id], TYPE_NAMES[types[r.id]], r.source) for r in redefs]
    return HfVocab(tokens, types, redefinitions=redefs)


def bert_vocab(vocab: HfVocab) -> HfVocab:
    """The phantom-space form of a WordPiece vocabulary (``BertModel.set_vocab``)."""
    vocab.tokens = [t if ty == CONTROL else t[2:] if t.startswith("##") else "\u2581" + t
                    for t, ty in zip(vocab.tokens, vocab.types)]
    return vocab


def is_llama_hf(data: dict[str, Any]) -> bool:
    """Whether ``LlamaHfVocab`` takes this tokenizer.json (else the converter falls back to GPT-2 BPE)."""
    model = data["model"]
    if model.get("type") == "BPE" and model.get("ignore_merges", False) and not model.get("byte_fallback", True):
        return False  # "Llama 3 must be converted with BpeVocab"
    decoder = data.get("decoder")
    return model.get("type") == "BPE" and bool(model.get("byte_fallback", False)) \
        and isinstance(decoder, dict) and decoder.get("type") == "Sequence"


def _special_texts(folder: Path) -> list[str]:
    config = folder_files.read_json(folder, "tokenizer_config.json") or {}
    if not isinstance(config, dict):
        return []
    smap = folder_files.read_json(folder, "special_tokens_map.json") or {}
    out = []
    for name in ("bos", "eos", "unk", "sep", "pad", "cls", "mask"):
        value = config.get(f"{name}_token", smap.get(f"{name}_token") if isinstance(smap, dict) else None)
        value = value.get("content") if isinstance(value, dict) else value
        if isinstance(value, str):
            out.append(value)
    for key in ("additional_special_tokens", "extra_special_tokens"):
        extra = config.get(key)
        for value in extra if isinstance(extra, list) else []:
            value = value.get("content") if isinstance(value, dict) else value
            if isinstance(value, str):
                out.append(value)
    return out


def llama_hf_vocab(folder: Path, *, like_converter: bool = False) -> HfVocab:
    """``LlamaHfVocab.all_tokens`` (module notes), scored by `rank_scores`, a special added token that
    is no named one CONTROL (matched only with markers parsed, as HF matches it). With
    `like_converter`, gguf-py's: -1000 for every entry (llama.cpp then joins the leftmost pair of
    every word first and splits words otherwise than the tokenizer.json: ``1ehe`` as ``1 eh e``,
    HF ``1 e he``) and USER_DEFINED for such a token."""
    data = read_tokenizer_json_data(folder)
    base = _base_vocab(folder, data)
    added = _added(folder, data)
    vocab_of = {**{t: i for i, t in base.items()}, **{e["content"]: i for i, e in added.items()}}
    special_ids = {vocab_of[t] for t in _special_texts(folder) if t in vocab_of}
    reverse = {**base, **{i: e["content"] for i, e in added.items()}}
    n_base = len(base)
    tokens, types = [], []
    for i in range(n_base):
        text = reverse[i]
        tokens.append(text)
        types.append(BYTE if _BYTE.fullmatch(text) else CONTROL if i in special_ids else NORMAL)
    specials = {t for t in _special_texts(folder) if t in vocab_of}
    for i in sorted(k for k in added if k >= n_base):
        text = added[i]["content"]
        tokens.append(text)
        # gguf-py types an added token CONTROL only when it is a named special token; HF matches any
        # special one only while markers are parsed, as llama.cpp a CONTROL token
        special = text in specials or (not like_converter and added[i].get("special") is True)
        types.append(CONTROL if special else USER_DEFINED)
    scores = [-1000.0] * len(tokens) if like_converter else rank_scores(folder, data, tokens)
    return HfVocab(tokens, types, scores=scores)


def rank_scores(folder: Path, data: dict[str, Any], tokens: list[str]) -> list[float]:
    """A score for each entry from the tokenizer.json's merge ranks, for llama.cpp's SPM session.

    llama.cpp joins the adjacent pair whose joined text is the best-scored entry, the leftmost
    among equals (llama-vocab.cpp ``llm_tokenizer_spm_session``); HF's BPE the pair of lowest
    rank. An entry made by merges scores minus the first rank that makes it, so the order of
    joins is the order of the ranks; every other entry (a character, a byte, a special token)
    scores below all of them, minus the merge count and its id, in case llama.cpp can join it
    from two pieces where the merges cannot (its joins then come last)."""
    merges = data["model"].get("merges") or []
    where = str(folder_files.where(folder, "tokenizer.json"))
    if not isinstance(merges, list):
        raise FormatError("expected a list of merges", file=where, key="model.merges")
    first: dict[str, int] = {}
    for rank, merge in enumerate(merges):
        pair = merge.split(" ") if isinstance(merge, str) else merge
        if not isinstance(pair, list) or len(pair) != 2 or not all(isinstance(p, str) for p in pair):
            raise FormatError(f"merge {rank} is not a pair of tokens: {merge!r}", file=where, key="model.merges")
        first.setdefault(pair[0] + pair[1], rank)
    n = len(merges)
    return [-float(first[t]) if t in first else -float(n + i) for i, t in enumerate(tokens)]


@lru_cache(maxsize=1)
def _table() -> tuple[str, dict[str, str]]:
    data = json.loads(_DATA.read_text(encoding="utf-8"))
    return data["chktxt"], {row[0]: row[1] for row in data["hashes"]}


def pre_hash(tok: Any) -> str:
    """``chkhsh``: sha256 of the repr of the ids of llama.cpp's check text."""
    chktxt, _ = _table()
    ids = tok.encode_full(chktxt, add_special=True, special="parse", truncation=False).ids
    return hashlib.sha256(str(list(ids)).encode()).hexdigest()


def check_text() -> str:
    """The text whose ids llama.cpp's converter hashes (``chktxt``)."""
    return _table()[0]


def known_pre_names() -> set[str]:
    """Every ``tokenizer.ggml.pre`` name llama.cpp's converter table writes."""
    return set(_table()[1].values())


def pre_name(chkhsh: str) -> str | None:
    """The ``tokenizer.ggml.pre`` name llama.cpp's table gives the hash (None when unknown)."""
    return _table()[1].get(chkhsh)
