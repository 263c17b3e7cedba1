"""Added tokens, BOS/EOS template and the tokenizer_config.json of a GGUF vocabulary.

Part of `polytok.convert.gguf_to_hf`. llama.cpp (llama-cpp-python 0.3.36,
``src/llama-vocab.cpp`` ``tokenizer_st_partition``; reference/llama_vocab.md §5.1)
cuts out CONTROL and UNKNOWN entries only when parsing specials, USER_DEFINED
ones always, on the raw text: in a tokenizer.json these are added tokens with
``normalized: false``, ``special: true`` for the first two (``encode_special_tokens``
leaves them as text, ``skip_special_tokens`` drops them, as llama.cpp renders them
empty) and ``special: false`` for user-defined ones. llama.cpp takes the longest
entry first over the whole text, HF's matcher the leftmost-longest: they agree
unless an entry's end is another's start (`overlapping_entries`). LSTRIP/RSTRIP
strip ASCII ``isspace`` bytes in llama.cpp and every Unicode whitespace in HF.
"""

from __future__ import annotations

from typing import Any

from ..formats.gguf import GGUFVocab
from ..formats.gguf_keys import Tokenizer, chat_template_key
from ..formats.gguf_token_attrs import ATTR_CONTROL, ATTR_LSTRIP, ATTR_RSTRIP, ATTR_UNKNOWN, ATTR_USER_DEFINED

__all__ = ["added_tokens", "post_processor", "tokenizer_config", "special_tokens_map", "overlapping_entries"]

_PARSED = ATTR_CONTROL | ATTR_UNKNOWN


def _added(vocab: GGUFVocab, id_: int) -> dict[str, Any]:
    attr = vocab.specials.attrs[id_]
    return {"id": id_, "content": vocab.texts[id_], "single_word": False, "lstrip": bool(attr & ATTR_LSTRIP),
            "rstrip": bool(attr & ATTR_RSTRIP), "normalized": False, "special": bool(attr & _PARSED)}


def added_tokens(vocab: GGUFVocab) -> tuple[list[dict[str, Any]], list[str]]:
    """The entries llama.cpp's partition matches, as tokenizer.json ``added_tokens``, and the reasons
    their matching cannot be the same."""
    attrs = vocab.specials.attrs
    ids = [i for i, a in enumerate(attrs) if a & (_PARSED | ATTR_USER_DEFINED) and vocab.texts[i]]
    reasons = []
    stripped = [i for i in ids if attrs[i] & (ATTR_LSTRIP | ATTR_RSTRIP)]
    if stripped:
        first = stripped[0]
        reasons.append(f"{len(stripped)} special tokens (first {first} {vocab.texts[first]!r}) strip the "
                       "whitespace beside them: llama.cpp strips ASCII isspace bytes only, an added token's "
                       "lstrip/rstrip every Unicode whitespace")
    for category, flag in (("bos", "add_bos"), ("eos", "add_eos")):
        id_ = vocab.specials.ids.get(category)
        if vocab.flags[flag] and id_ is not None and not attrs[id_] & _PARSED:
            reasons.append(f"the added {category.upper()} {id_} {vocab.texts[id_]!r} is not a control token: "
                           "llama.cpp's remove_special drops it on decode, HF's skip_special_tokens keeps it")
    for parse_special in (False, True):
        texts = [vocab.texts[i] for i in ids if parse_special or not attrs[i] & _PARSED]
        pair = overlapping_entries(texts)
        if pair is not None:
            reasons.append(f"special tokens {pair[0]!r} and {pair[1]!r} overlap: llama.cpp matches the longest "
                           "special token first over the whole text, HF the leftmost")
            break
    return [_added(vocab, i) for i in ids], reasons


def overlapping_entries(texts: list[str]) -> tuple[str, str] | None:
    """Two texts where a proper end of the first is a proper start of the second, no shorter than
    the first (then llama.cpp and a leftmost matcher can cut a text differently), or None."""
    by_start: dict[str, list[str]] = {}
    for text in texts:
        for cut in range(1, len(text)):
            by_start.setdefault(text[:cut], []).append(text)
    for text in texts:
        for cut in range(1, len(text)):
            for other in by_start.get(text[cut:], ()):
                if len(other) >= len(text) and text not in other:
                    return text, other
    return None


def post_processor(vocab: GGUFVocab) -> dict[str, Any] | None:
    """BOS/EOS (WPM: CLS/SEP) around the ids when ``add_special`` (llama-vocab.cpp tokenize)."""
    ids, flags = vocab.specials.ids, vocab.flags
    if vocab.vocab_type == "wpm":
        first, last = [ids.get("bos")], [ids.get("sep")]
    else:
        first = [ids.get("bos")] if flags["add_bos"] else []
        last = [ids.get("eos")] if flags["add_eos"] else []
    head = [i for i in first if i is not None]
    tail = [i for i in last if i is not None]
    if not head and not tail:
        return None
    names = {i: vocab.texts[i] for i in head + tail}

    def special(i: int) -> dict[str, Any]:
        return {"SpecialToken": {"id": names[i], "type_id": 0}}

    single = [special(i) for i in head] + [{"Sequence": {"id": "A", "type_id": 0}}] + [special(i) for i in tail]
    pair = single[:len(head)] + [{"Sequence": {"id": "A", "type_id": 0}},
                                 {"Sequence": {"id": "B", "type_id": 1}}] + single[len(head) + 1:]
    return {"type": "TemplateProcessing", "single": single, "pair": pair,
            "special_tokens": {text: {"id": text, "ids": [i], "tokens": [text]} for i, text in names.items()}}


def _named_tokens(vocab: GGUFVocab) -> dict[str, str]:
    ids = vocab.specials.ids
    keys = {"bos_token": "bos", "eos_token": "eos", "unk_token": "unk", "pad_token": "pad"}
    if vocab.vocab_type == "wpm":
        keys.update(cls_token="bos", sep_token="sep", mask_token="mask")
    named = {}
    for key, category in keys.items():
        id_ = ids.get(category)
        if id_ is not None:
            named[key] = vocab.texts[id_]
    return named


def _chat_templates(vocab: GGUFVocab) -> str | list[dict[str, str]] | None:
    kv = vocab.metadata
    default = kv.get(chat_template_key())
    names = kv.get(Tokenizer.CHAT_TEMPLATES) or []
    named = [{"name": str(n), "template": str(kv[chat_template_key(str(n))])} for n in names
             if isinstance(kv.get(chat_template_key(str(n))), str)]
    if not named:
        return default if isinstance(default, str) else None
    if isinstance(default, str):
        named.insert(0, {"name": "default", "template": default})
    return named


def tokenizer_config(vocab: GGUFVocab, added: list[dict[str, Any]]) -> dict[str, Any]:
    """tokenizer_config.json: what transformers needs beside tokenizer.json.

    ``clean_up_tokenization_spaces`` is false: llama.cpp's clean-up, when the vocabulary has it,
    is already in the tokenizer.json decoder (transformers' own clean-up is another one)."""
    config: dict[str, Any] = {
        "tokenizer_class": "PreTrainedTokenizerFast",
        "add_bos_token": vocab.flags["add_bos"] or vocab.vocab_type == "wpm",
        "add_eos_token": vocab.flags["add_eos"],
        "clean_up_tokenization_spaces": False,
        "added_tokens_decoder": {str(t["id"]): {k: v for k, v in t.items() if k != "id"} for t in added},
    }
    config.update(_named_tokens(vocab))
    templates = _chat_templates(vocab)
    if templates is not None:
        config["chat_template"] = templates
    return config


def special_tokens_map(vocab: GGUFVocab) -> dict[str, Any]:
    return {key: {"content": text, "single_word": False, "lstrip": False, "rstrip": False, "normalized": False}
            for key, text in _named_tokens(vocab).items()}
