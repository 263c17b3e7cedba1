"""Reader for HF ``tokenizer.json`` files and Hugging Face model folders.

HF tokenizers 0.23.3 ``tokenizers/src/tokenizer/serialization.rs``
(``TokenizerImpl`` deserialization: ``version`` must be "1.0" when present,
only ``model`` is required, unknown keys ignored, ``added_tokens`` re-added in
one ``add_tokens`` call after the model and normalizer exist, so file ids are
not used). A model folder may also hold ``tokenizer_config.json``,
``special_tokens_map.json`` and ``added_tokens.json`` (transformers 5.x,
``tokenization_utils_base.py``); from them polytok keeps the chat template and
the named special tokens, and adds — with the same ``add_tokens`` rule — any
added token they declare that ``tokenizer.json`` does not already hold.

This module only reads: it validates the JSON and builds the shared components. A
Unigram's vocab, most of such a file, is read from the bytes in compiled code
(``wire.json_unigram_vocab``) and json.loads reads the rest; a file that pass does not
read exactly as json.loads would goes through json.loads whole.
"""

from __future__ import annotations

from dataclasses import replace
from json.decoder import scanstring  # type: ignore[attr-defined]  # typeshed leaves it out
from pathlib import Path
from typing import Any, TypedDict

from .. import decoders, models, normalizers, post_processors, pre_tokenizers
from .._config import MAX_JSON_DEPTH, as_object, check_depth, join, optional, required
from ..decoders.chain_decoder import ChainDecoder
from ..errors import FormatError
from ..facts import ChatFacts, FormatFacts, NamedToken, eos_ends
from ..kernels import kernel
from ..models.unigram import VocabColumns
from ..special import AddedToken
from ..tokenizer import Tokenizer
from ..truncation import Padding, Truncation
from . import folder as folder_files
from .chat_templates import folder_templates
from .compressed import read_bytes

__all__ = ["read_tokenizer_json", "read_model_folder", "parse_tokenizer_json", "sequence_steps"]


def sequence_steps(component: Any, key: str) -> list[Any]:
    """A tokenizer.json normalizer, pre-tokenizer or decoder as its list of steps: the steps of a
    ``Sequence`` under `key` (``normalizers``, ``pretokenizers``, ``decoders``), nested ones
    flattened in order; anything else alone (a step that is no object too); none for null."""
    if component is None:
        return []
    if not isinstance(component, dict) or component.get("type") != "Sequence":
        return [component]
    children = component.get(key)
    return [step for child in (children if isinstance(children, list) else []) for step in sequence_steps(child, key)]


class AddedTokenEntry(TypedDict):
    id: int
    content: str
    single_word: bool
    lstrip: bool
    rstrip: bool
    normalized: bool
    special: bool


_ADDED_FLAGS = ("single_word", "lstrip", "rstrip", "normalized", "special")


def read_json(path: Path) -> Any:
    """Parse a JSON (or gzip-compressed JSON) file; errors name the file and line.
    NaN and Infinity are refused, as HF's serde_json refuses them."""
    return _parse_json_bytes(read_bytes(path), str(path))


def _parse_json_bytes(raw: bytes, file: str) -> Any:
    """`read_json` of a file's bytes. A Unigram's ``model.vocab`` is read from the bytes in one
    compiled pass (``wire.json_unigram_vocab``: pieces and serde_json's scores, without a list per
    entry) and json.loads reads the rest of the text; whatever that pass leaves, and every error,
    goes through json.loads of the whole text, so an error names the same offset."""
    wire = kernel("wire")
    found = wire.json_unigram_vocab(raw, scanstring) if wire is not None else None
    if found is not None:
        start, end, pieces, scores = found
        try:
            data = folder_files.parse_json_bytes(raw[:start] + b"[]" + raw[end:], file, finite=True)
        except FormatError:
            data = None
        model = data.get("model") if isinstance(data, dict) else None
        if isinstance(model, dict) and model.get("type") == "Unigram" and model.get("vocab") == []:
            model["vocab"] = VocabColumns(pieces, scores)
            return data
    return folder_files.parse_json_bytes(raw, file, finite=True)


def _added_token(d: Any, path: str) -> AddedToken:
    d = as_object(d, path)
    content = required(d, "content", str, path)
    required(d, "id", int, path)
    flags = {k: required(d, k, bool, path) for k in _ADDED_FLAGS}
    return AddedToken(content, **flags)


def _component(builder: Any, d: dict[str, Any], key: str) -> Any:
    value = d.get(key)
    if value is None:
        return None
    check_depth(value, key, MAX_JSON_DEPTH - 1)  # the builders recurse once per nested Sequence
    return builder(value, key)


def parse_tokenizer_json(data: Any, *, facts: FormatFacts | None = None) -> Tokenizer:
    """Build a `Tokenizer` from the parsed JSON object of a ``tokenizer.json``."""
    data = as_object(data, "")
    version = data.get("version")
    if version is not None and version != "1.0":
        raise FormatError(f"unknown tokenizer version {version!r} (expected \"1.0\")", key="version")
    if "model" not in data:
        raise FormatError("missing required key 'model'", key="model")
    model = models.from_config(data["model"], "model")
    normalizer = _component(normalizers.from_config, data, "normalizer")
    raw_added = optional(data, "added_tokens", list, "", [])
    added = [_added_token(t, join("added_tokens", i)) for i, t in enumerate(raw_added)]
    truncation = optional(data, "truncation", dict, "")
    padding = optional(data, "padding", dict, "")
    pre_tokenizer = _component(pre_tokenizers.from_config, data, "pre_tokenizer")
    post_processor = _component(post_processors.from_config, data, "post_processor")
    chain = _component(decoders.from_config, data, "decoder")
    tok = Tokenizer(
        model,
        normalizer=normalizer,
        pre_tokenizer=pre_tokenizer,
        post_processor=post_processor,
        added_tokens=added,
        truncation=Truncation.from_config(truncation) if truncation is not None else None,
        padding=Padding.from_config(padding) if padding is not None else None,
        facts=facts,
    )
    tok.decoder = ChainDecoder(chain, tok.model, tok.added)  # it reads the tokenizer's added vocabulary
    return tok


def read_tokenizer_json(path: str | Path) -> Tokenizer:
    """Load one ``tokenizer.json`` (or ``.json.gz``) file."""
    path = Path(path)
    try:
        return parse_tokenizer_json(read_json(path), facts=FormatFacts(format="tokenizer.json", source=str(path),
                                                                         files=(str(path),)))
    except FormatError as exc:
        raise exc.with_file(str(path)) from None


def read_model_folder(folder: str | Path) -> Tokenizer:
    """Load a Hugging Face model folder: ``tokenizer.json`` plus its config files."""
    folder = Path(folder)
    tok = read_tokenizer_json(folder_files.where(folder, "tokenizer.json"))
    config = _optional_json(folder, "tokenizer_config.json")
    extra = _config_added_tokens(folder, config)
    new = [t for t in extra if tok.added.token_to_id(t.content) is None]
    if new:
        tok.add_tokens(new)
    named_texts = _named_special_tokens(folder, config)
    named = {name.removesuffix("_token"): NamedToken(text, tok.token_to_id(text)) for name, text in named_texts.items()}
    tok.facts = replace(tok.facts, source=str(folder), files=_files_read(folder), named_tokens=named,
                        eog_ids=eos_ends(named),
                        chat=_chat_facts(folder, config, named_texts),
                        details={"added_from_config": [t.content for t in new]} if new else {})
    return tok


_FOLDER_FILES = ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "added_tokens.json",
                 "chat_template.jinja")


def _files_read(folder: Path) -> tuple[str, ...]:
    found = [folder_files.find(folder, name) for name in _FOLDER_FILES]
    extra = sorted((folder / "additional_chat_templates").glob("*.jinja*"))
    return tuple(str(p) for p in [*found, *extra] if p is not None and p.is_file())


def _chat_facts(folder: Path, config: dict[str, Any], named_texts: dict[str, str]) -> ChatFacts:
    """Templates, template variables and listed control tokens of a folder (transformers 5.x)."""
    variables = dict(named_texts)
    extra = config.get("extra_special_tokens")
    if isinstance(extra, dict):  # model-specific named tokens join the map (transformers 5.x)
        for key, value in extra.items():
            value = value.get("content") if isinstance(value, dict) else value
            if isinstance(value, str):
                variables[str(key)] = value
    listed = config.get("chat_control_tokens")
    return ChatFacts(templates=folder_templates(folder, config), variables=variables,
                     listed_control_tokens=tuple(t for t in listed if isinstance(t, str))
                     if isinstance(listed, list) else None)


def _optional_json(folder: Path, name: str) -> dict[str, Any]:
    return folder_files.read_object(folder, name) or {}


def _config_added_tokens(folder: Path, config: dict[str, Any]) -> list[AddedToken]:
    """Added tokens declared beside tokenizer.json, in id order (transformers' order)."""
    path = str(folder_files.where(folder, "tokenizer_config.json"))
    decoder = config.get("added_tokens_decoder")
    if isinstance(decoder, dict):
        out = []
        for key in sorted(decoder, key=lambda k: int(k) if str(k).isdigit() else -1):
            entry = as_object(decoder[key], f"added_tokens_decoder.{key}")
            try:
                content = required(entry, "content", str, f"added_tokens_decoder.{key}")
                flags = {k: bool(entry.get(k, k == "normalized" and not entry.get("special", False)))
                         for k in _ADDED_FLAGS}
            except FormatError as exc:
                raise exc.with_file(path) from None
            out.append(AddedToken(content, **flags))
        return out
    legacy = _optional_json(folder, "added_tokens.json")
    return [AddedToken(content, special=False, normalized=True)
            for content, _ in sorted(legacy.items(), key=lambda kv: kv[1]) if isinstance(content, str)]


def _named_special_tokens(folder: Path, config: dict[str, Any]) -> dict[str, str]:
    """``bos_token`` … ``mask_token`` as strings, from the config or special_tokens_map.json."""
    names = ("bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token", "mask_token")
    sources = [config, _optional_json(folder, "special_tokens_map.json")]
    out: dict[str, str] = {}
    for name in names:
        for source in sources:
            value = source.get(name)
            if isinstance(value, dict):
                value = value.get("content")
            if isinstance(value, str):
                out[name] = value
                break
    return out
