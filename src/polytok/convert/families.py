"""The tokenizer keys of each converter family, for `polytok.convert.converter.to_gguf`.

One function per ``set_vocab`` path of llama.cpp's convert_hf_to_gguf.py
(llama-cpp-python 0.3.36 sdist, vendor/llama.cpp/conversion/): see the notes
of `polytok.convert.converter` for which family takes which path, and
`polytok.convert.gguf_vocab` / `polytok.formats.redefinitions` for the
vocabulary rules. gguf-py's ``add_chat_template`` (gguf_writer.py line 1289) is
reproduced in `_template_keys`, except that named templates are listed in
first-seen order (gguf-py collects the names in a set, so its order varies).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..errors import FormatError
from ..formats import folder as folder_files
from ..formats.compressed import read_bytes
from ..formats.gguf_keys import Tokenizer, chat_template_key
from ..formats.redefinitions import TYPE_NAMES, SpmVocab, apply, rule_for
from .gguf_special_vocab import SpecialVocab, read_special_vocab
from .gguf_vocab import (
    HfVocab,
    bert_vocab,
    bpe_vocab,
    is_llama_hf,
    llama_hf_vocab,
    pre_hash,
    pre_name,
    read_tokenizer_json_data,
    tokenizer_json_path,
)
from .gguf_writer import KeyValue
from .pre_structure import PreDecision, decide

__all__ = ["keys_for"]


def _spm(folder: Path, rule: str, hparams: dict[str, Any]) -> tuple[SpmVocab, bool]:
    """The SentencePiece vocabulary, and the model's add_dummy_prefix."""
    from ..formats.sentencepiece import read_model_proto

    model = folder_files.where(folder, "tokenizer.model")
    proto = read_model_proto(read_bytes(model), str(model))
    n = len(proto.pieces)
    size = hparams.get("vocab_size") or n
    if not isinstance(size, int) or (rule != "generic" and size > n):
        raise FormatError(f"vocab_size {size!r} does not fit the {n} pieces of tokenizer.model",
                          file=str(folder_files.where(folder, "config.json")), key="vocab_size")
    vocab = SpmVocab([f"[PAD{i}]" for i in range(size)], [-10000.0] * size, [5] * size, rule)
    for i in range(min(n, size)):
        vocab.tokens[i], vocab.scores[i], vocab.types[i] = proto.pieces[i], proto.scores[i], proto.types[i]
    return apply(vocab, folder), bool(proto.normalizer("add_dummy_prefix"))


def _special_keys(sv: SpecialVocab) -> list[KeyValue]:
    keys: list[KeyValue] = []
    if sv.merges:
        keys.append(KeyValue(Tokenizer.MERGES, sv.merges, "str[]"))
    id_keys = {"bos": Tokenizer.BOS_ID, "eos": Tokenizer.EOS_ID, "unk": Tokenizer.UNK_ID, "sep": Tokenizer.SEP_ID,
               "pad": Tokenizer.PAD_ID, "mask": Tokenizer.MASK_ID, "eot": Tokenizer.EOT_ID,
               "eom": Tokenizer.EOM_ID}  # no writer handler for cls: gguf-py skips it
    keys += [KeyValue(id_keys[t], i, "u32") for t, i in sv.ids.items() if t in id_keys]
    add_keys = {"bos": Tokenizer.ADD_BOS, "eos": Tokenizer.ADD_EOS, "sep": Tokenizer.ADD_SEP}
    keys += [KeyValue(add_keys[t], v, "bool") for t, v in sv.add.items() if t in add_keys]
    keys += _template_keys(sv.chat_template)
    if sv.lowercase is not None:
        keys.append(KeyValue(Tokenizer.NORMALIZER_LOWERCASE, bool(sv.lowercase), "bool"))
    if sv.strip_accents is not None:
        keys.append(KeyValue(Tokenizer.NORMALIZER_STRIP_ACCENTS, bool(sv.strip_accents), "bool"))
    return keys


def _template_keys(template: str | list[dict[str, str]] | None) -> list[KeyValue]:
    """gguf-py's ``add_chat_template``: a list is named templates plus the 'default' one."""
    if template is None:
        return []
    if isinstance(template, str):
        return [KeyValue(chat_template_key(), template, "str")]
    keys, names, default = [], [], None
    for choice in template:
        name = "".join(c if c.isascii() and c.isalnum() else "_" for c in str(choice.get("name", "")))
        body = choice.get("template")
        if name and body is not None:
            if name == "default":
                default = body
            elif name not in names:
                names.append(name)
                keys.append(KeyValue(chat_template_key(name), body, "str"))
    if names:
        keys.append(KeyValue(Tokenizer.CHAT_TEMPLATES, names, "str[]"))
    if default is not None:
        keys.append(KeyValue(chat_template_key(), default, "str"))
    return keys


def _vocab_list_keys(model: str, pre: str, tokens: list[str], scores: list[float] | None,
                     types: list[int]) -> list[KeyValue]:
    keys = [KeyValue(Tokenizer.MODEL, model, "str"), KeyValue(Tokenizer.PRE, pre, "str"),
            KeyValue(Tokenizer.LIST, tokens, "str[]")]
    if scores is not None:
        keys.append(KeyValue(Tokenizer.SCORES, scores, "f32[]"))
    keys.append(KeyValue(Tokenizer.TOKEN_TYPE, types, "i32[]"))
    return keys


# the llama model (SentencePiece and Llama HF paths): the converter always writes "default"
_SPM_PRE = PreDecision("default", "sentencepiece", note="llama.cpp's SPM session reads no pre type (impl::load "
                                                        "sets DEFAULT), the converter writes 'default'")


def _facts(model: str, pre: str, tokens: list[str], types: list[int], sv: SpecialVocab, redefs: list[Any],
           chkhsh: str | None = None) -> dict[str, Any]:
    return {"model": model, "pre": pre, "n_tokens": len(tokens), "types": [TYPE_NAMES[t] for t in types],
            "special": sv, "redefinitions": redefs, "chkhsh": chkhsh,
            "pre_decision": _SPM_PRE if model == "llama" else None}


def _add_prefix_key(folder: Path) -> list[KeyValue]:
    config = folder_files.read_json(folder, "tokenizer_config.json")
    value = config.get("add_prefix_space") if isinstance(config, dict) else None
    return [] if value is None else [KeyValue(Tokenizer.ADD_PREFIX, bool(value), "bool")]


def _spm_keys(folder: Path, rule: str, hparams: dict[str, Any]) -> tuple[list[KeyValue], dict[str, Any]]:
    vocab, dummy_prefix = _spm(folder, rule, hparams)
    keys = _vocab_list_keys("llama", "default", vocab.tokens, vocab.scores, vocab.types)
    if rule == "internlm2":
        keys.append(KeyValue(Tokenizer.ADD_PREFIX, dummy_prefix, "bool"))
    sv = read_special_vocab(folder, n_vocab=len(vocab.tokens))
    if vocab.eos_override is not None:
        sv.ids["eos"] = vocab.eos_override
    return keys + _special_keys(sv), _facts("llama", "default", vocab.tokens, vocab.types, sv,
                                            vocab.redefinitions)


def _pre(tok: Any, override: str | None, folder: Path, bert: bool, like_converter: bool) -> PreDecision:
    """The pre name: by the pre-tokenizer's structure, cross-checked with llama.cpp's hash table."""
    chkhsh = pre_hash(tok)
    where = str(tokenizer_json_path(folder) or folder)
    return decide(read_tokenizer_json_data(folder), chkhsh, pre_name(chkhsh), override, wordpiece=bert,
                  where=where, like_converter=like_converter)


def _bpe_keys(folder: Path, hparams: dict[str, Any], pre: str | None,
              bert: bool, like_converter: bool) -> tuple[list[KeyValue], dict[str, Any]]:
    from ..formats.hf_json import read_model_folder

    tok = read_model_folder(folder)
    decision = _pre(tok, pre, folder, bert, like_converter)
    name = decision.name
    size = hparams.get("vocab_size")
    vocab: HfVocab = bpe_vocab(folder, tok, size if isinstance(size, int) else None, like_converter=like_converter)
    if bert:
        vocab = bert_vocab(vocab)
        sv = read_special_vocab(folder, n_vocab=len(vocab.tokens))
        count = hparams.get("type_vocab_size", 1)
        keys = [KeyValue(Tokenizer.TOKEN_TYPE_COUNT, int(count), "u32")]
        keys += _vocab_list_keys("bert", name, vocab.tokens, None, vocab.types)
    else:
        sv = read_special_vocab(folder, load_merges=True)
        keys = _vocab_list_keys("gpt2", name, vocab.tokens, None, vocab.types)
    model = "bert" if bert else "gpt2"
    facts = _facts(model, name, vocab.tokens, vocab.types, sv, vocab.redefinitions, decision.chkhsh)
    facts["pre_decision"] = decision
    return keys + _special_keys(sv), facts


def _llama_hf_keys(folder: Path, like_converter: bool) -> tuple[list[KeyValue], dict[str, Any]]:
    vocab = llama_hf_vocab(folder, like_converter=like_converter)
    keys = _vocab_list_keys("llama", "default", vocab.tokens, vocab.scores, vocab.types)
    sv = read_special_vocab(folder, n_vocab=len(vocab.tokens))
    facts = _facts("llama", "default", vocab.tokens, vocab.types, sv, [])
    facts["scores"] = "converter" if like_converter else "ranks"
    return keys + _special_keys(sv), facts


def keys_for(folder: Path, family: str, arch: str, hparams: dict[str, Any],
             pre: str | None, like_converter: bool = False) -> tuple[list[KeyValue], dict[str, Any]]:
    """The tokenizer keys of `folder` for a converter `family`, and facts for the report.

    ``facts["path"]`` names the ``set_vocab`` path taken: ``sentencepiece`` (the folder's
    tokenizer.model), ``llama-hf``, ``gpt2`` or ``bert`` (its tokenizer.json). On the
    ``llama-hf`` path the scores come from the merge ranks, or are the converter's -1000
    with `like_converter` (``facts["scores"]`` says which); `like_converter` also keeps the
    hash's pre name where an exact structural type would be written (`pre_structure.decide`).
    """
    has_spm = folder_files.find(folder, "tokenizer.model") is not None
    prefix = _add_prefix_key(folder) if family == "llama" else []
    if family == "spm" or (family in ("llama", "qwen") and has_spm):
        keys, facts = _spm_keys(folder, rule_for(arch), hparams)
        path = "sentencepiece"
    elif tokenizer_json_path(folder) is None:
        raise FormatError("no tokenizer.model and no tokenizer.json in this folder", file=str(folder))
    elif family == "bert":
        keys, facts = _bpe_keys(folder, hparams, pre, bert=True, like_converter=like_converter)
        path = "bert"
    elif family == "llama" and is_llama_hf(read_tokenizer_json_data(folder)):
        keys, facts = _llama_hf_keys(folder, like_converter)
        path = "llama-hf"
    else:
        keys, facts = _bpe_keys(folder, hparams, pre, bert=False, like_converter=like_converter)
        path = "gpt2"
    facts["path"] = path
    return prefix + keys, facts
