"""What a transformers tokenizer object knows besides the pipeline, for `Tokenizer.__call__`.

transformers 5.24.0 decides a call's padding side, truncation side, pad token,
``model_max_length`` and which arrays it returns from the tokenizer object, not from
``tokenizer.json``. `call_settings` rebuilds those attributes the way
``AutoTokenizer.from_pretrained(folder)`` sets them:

- the class: ``tokenizer_config.json``'s ``tokenizer_class`` without a ``Fast`` suffix
  (``models/auto/tokenization_auto.py`` ``AutoTokenizer.from_pretrained``), else the
  class a classic vocabulary's reader reproduces (``vocab.txt``: ``BertTokenizer``;
  ``vocab.json`` and ``merges.txt``: ``GPT2Tokenizer``), except that
  a ``LlamaTokenizer`` whose ``tokenizer.json`` holds ``"ByteLevel"`` loads as
  ``TokenizersBackend`` (the same function; ``_tokenizer_json_has_byte_level``);
- the class attributes ``model_input_names``, ``padding_side`` and ``truncation_side``
  (`CLASS_ATTRIBUTES`: every class of transformers 5.24.0 whose attributes differ from
  ``PreTrainedTokenizerBase``'s, found by resolving each tokenizer class name with
  ``tokenizer_class_from_name``; a name not listed has the base's);
- the config's keys of the same names override the class's, and ``tokenizer.json``'s
  own ``padding`` and ``truncation`` fill in what the config leaves out (the
  direction and pad token; ``TokenizersBackend.__init__``'s ``kwargs.setdefault``);
- ``model_max_length`` from the config, else ``VERY_LARGE_INTEGER`` (1e30)
  (``PreTrainedTokenizerBase.__init__``); the pad token from the config (or
  ``special_tokens_map.json``), its id as ``convert_tokens_to_ids`` gives it (the unk
  id for a text outside the vocabulary).

Known gaps: ``config.json``'s ``model_type`` (which can pick another class), remote
code (``auto_map``), the default named tokens of a class's ``__init__`` (``BertTokenizer``
passes ``pad_token="[PAD]"``, which wins over ``tokenizer.json``'s padding) and a named
pad token that transformers adds to the vocabulary because the tokenizer files lack it
are not followed. Formats other than a model
folder get ``TokenizersBackend``'s defaults and the format's own pad token.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .tokenizer import Tokenizer

__all__ = ["CallSettings", "call_settings", "CLASS_ATTRIBUTES", "VERY_LARGE_INTEGER", "LARGE_INTEGER"]

VERY_LARGE_INTEGER = int(1e30)  # transformers: no model_max_length
LARGE_INTEGER = int(1e20)  # above it, model_max_length means "no limit" when max_length is None

_BASE = (("input_ids", "attention_mask"), "right", "right")
_BERT = (("input_ids", "token_type_ids", "attention_mask"), "right", "right")
_TYPES_LAST = (("input_ids", "attention_mask", "token_type_ids"), "right", "right")
_LEFT = (("input_ids", "attention_mask"), "left", "right")

#: class name -> (model_input_names, padding_side, truncation_side), where not `_BASE`
CLASS_ATTRIBUTES: dict[str, tuple[tuple[str, ...], str, str]] = {
    **dict.fromkeys(("BertTokenizer", "ConvBertTokenizer", "DPRContextEncoderTokenizer",
                     "DPRQuestionEncoderTokenizer", "ElectraTokenizer", "LayoutLMTokenizer", "LxmertTokenizer",
                     "MarkupLMTokenizer", "MobileBertTokenizer", "SqueezeBertTokenizer"), _BERT),
    **dict.fromkeys(("CanineTokenizer", "DebertaTokenizer", "DebertaV2Tokenizer", "LayoutLMv2Tokenizer",
                     "TapasTokenizer"), _TYPES_LAST),
    **dict.fromkeys(("CodeLlamaTokenizer", "CohereTokenizer", "GemmaTokenizer", "LlamaTokenizer",
                     "MistralCommonBackend", "Phi3Tokenizer", "Siglip2Tokenizer", "XLNetTokenizer"), _LEFT),
    "FNetTokenizer": (("input_ids", "token_type_ids"), "right", "right"),
    "LayoutLMv3Tokenizer": (("input_ids", "attention_mask", "bbox"), "right", "right"),
}


@dataclass(frozen=True, slots=True)
class CallSettings:
    """The transformers tokenizer attributes a call reads (see the module notes)."""

    tokenizer_class: str = "TokenizersBackend"
    model_input_names: tuple[str, ...] = _BASE[0]
    padding_side: str = "right"
    truncation_side: str = "right"
    model_max_length: int = VERY_LARGE_INTEGER
    #: the pad token's text and id (None: the tokenizer has no pad token; padding is refused)
    pad_token: str | None = None
    pad_id: int | None = None


_KNOWN: weakref.WeakKeyDictionary[Tokenizer, CallSettings] = weakref.WeakKeyDictionary()


def call_settings(tok: Tokenizer) -> CallSettings:
    """`tok`'s `CallSettings`, read once per tokenizer (its config file is read on first use)."""
    found = _KNOWN.get(tok)
    if found is None:
        found = _KNOWN[tok] = _settings(tok, _config(tok))
    return found


def _config(tok: Tokenizer) -> dict[str, Any]:
    from ..formats import folder

    for name in tok.facts.files:
        path = Path(name)
        if path.name in ("tokenizer_config.json", "tokenizer_config.json.gz"):
            return folder.read_object(path.parent, "tokenizer_config.json") or {}
    return {}


#: the class a classic vocabulary file is read as (its reader's reference), where no config names one
_FORMAT_CLASSES = {"wordpiece_vocab": "BertTokenizer", "gpt2_vocab": "GPT2Tokenizer"}


def _class_name(tok: Tokenizer, config: dict[str, Any]) -> str:
    name = config.get("tokenizer_class")
    if not isinstance(name, str):
        return _FORMAT_CLASSES.get(tok.facts.format, "TokenizersBackend")
    name = name.removesuffix("Fast")
    if name == "LlamaTokenizer" and _byte_level(tok):
        return "TokenizersBackend"
    return name


def _byte_level(tok: Tokenizer) -> bool:
    """Whether the tokenizer.json read holds the text ``"ByteLevel"`` (transformers' test, on the file)."""
    from ..formats import folder

    for name in tok.facts.files:
        path = Path(name)
        if path.name in ("tokenizer.json", "tokenizer.json.gz"):
            return b'"ByteLevel"' in (folder.read_file_bytes(path.parent, "tokenizer.json") or b"")
    return False


def _settings(tok: Tokenizer, config: dict[str, Any]) -> CallSettings:
    class_name = _class_name(tok, config)
    names, padding_side, truncation_side = CLASS_ATTRIBUTES.get(class_name, _BASE)
    if tok.padding is not None:
        padding_side = tok.padding.direction
    if tok.truncation is not None:
        truncation_side = tok.truncation.direction
    listed = config.get("model_input_names")
    if isinstance(listed, list) and all(isinstance(n, str) for n in listed):
        names = tuple(listed)
    padding_side = _side(config.get("padding_side", padding_side), "padding_side")
    truncation_side = _side(config.get("truncation_side", truncation_side), "truncation_side")
    length = config.get("model_max_length", config.get("max_len"))
    model_max_length = int(length) if isinstance(length, (int, float)) and not isinstance(length, bool) \
        else VERY_LARGE_INTEGER
    pad_token = _pad_token(tok, config)
    pad_id = None
    if pad_token is not None:
        pad_id = tok.token_to_id(pad_token)
        if pad_id is None:
            unk = tok.facts.named_tokens.get("unk")
            pad_id = None if unk is None else unk.id
    return CallSettings(class_name, names, padding_side, truncation_side, model_max_length, pad_token, pad_id)


def _side(value: Any, key: str) -> str:
    if value not in ("left", "right"):
        from ..errors import FormatError

        raise FormatError(f"expected 'left' or 'right', found {value!r:.40}", file="tokenizer_config.json", key=key)
    return str(value)


def _pad_token(tok: Tokenizer, config: dict[str, Any]) -> str | None:
    """The named pad token; without one, tokenizer.json's padding's (unless the config says ``null``)."""
    named = tok.facts.named_tokens.get("pad")
    if named is not None:
        return named.text
    if "pad_token" in config:
        return None
    return tok.padding.pad_token if tok.padding is not None else None
