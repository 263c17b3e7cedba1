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

from dataclasses import replace
from pathlib import Path
from typing import Any

from ..errors import FormatError
from ..formats import folder as folder_files
from ..formats.compressed import read_bytes
from ..formats.gguf_keys import Tokenizer, chat_template_key
from ..formats.gguf_token_attrs import LLAMA_EOG_TEXTS, LSTRIP_MASK_PRES
from ..formats.hf_json import sequence_steps
from ..formats.redefinitions import CONTROL, NORMAL, TYPE_NAMES, USER_DEFINED, SpmVocab, apply, rule_for
from .gguf_special_vocab import SpecialVocab, match_post_processor, match_unknown, read_special_vocab
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


_ID_KEYS = {"bos": Tokenizer.BOS_ID, "eos": Tokenizer.EOS_ID, "unk": Tokenizer.UNK_ID, "sep": Tokenizer.SEP_ID,
            "pad": Tokenizer.PAD_ID, "mask": Tokenizer.MASK_ID, "eot": Tokenizer.EOT_ID,
            "eom": Tokenizer.EOM_ID}  # no writer handler for cls: gguf-py skips it
_ADD_KEYS = {"bos": Tokenizer.ADD_BOS, "eos": Tokenizer.ADD_EOS, "sep": Tokenizer.ADD_SEP}


def _special_keys(sv: SpecialVocab) -> list[KeyValue]:
    keys: list[KeyValue] = []
    if sv.merges:
        keys.append(KeyValue(Tokenizer.MERGES, sv.merges, "str[]"))
    keys += _id_and_add_keys(sv)
    keys += _template_keys(sv.chat_template)
    if sv.lowercase is not None:
        keys.append(KeyValue(Tokenizer.NORMALIZER_LOWERCASE, bool(sv.lowercase), "bool"))
    if sv.strip_accents is not None:
        keys.append(KeyValue(Tokenizer.NORMALIZER_STRIP_ACCENTS, bool(sv.strip_accents), "bool"))
    return keys


def _id_and_add_keys(sv: SpecialVocab) -> list[KeyValue]:
    keys = [KeyValue(_ID_KEYS[t], i, "u32") for t, i in sv.ids.items() if t in _ID_KEYS]
    return keys + [KeyValue(_ADD_KEYS[t], v, "bool") for t, v in sv.add.items() if t in _ADD_KEYS]


def _as_hf_tokenizes(folder: Path, keys: list[KeyValue], facts: dict[str, Any]) -> list[KeyValue]:
    """The default mode's keys (``like_converter`` off) on the tokenizer.json paths.

    llama.cpp must add around a text what the tokenizer.json's post-processor adds
    (`gguf_special_vocab.match_post_processor`: the ids it names where the configs name
    none, the add flags it implies, or a `FormatError` for what a GGUF cannot add), and
    on the Llama HF path put its space prefix only where the tokenizer.json puts a
    ``▁`` before the text (`_space_prefix_key`). Keys that are already right stay as
    the converter writes them.
    """
    if facts["path"] == "sentencepiece":
        return keys
    data = read_tokenizer_json_data(folder)
    sv: SpecialVocab = facts["special"]
    match_post_processor(sv, facts["model"], facts["pre"], data, str(tokenizer_json_path(folder)))
    match_unknown(sv, facts["model"], data)
    fresh = {k.key: k for k in _id_and_add_keys(sv)}
    out = [fresh.pop(k.key) if k.key in fresh else k for k in keys]
    out += fresh.values()
    if facts["path"] == "llama-hf":
        if all(k.key != Tokenizer.ADD_PREFIX for k in out):
            out = _space_prefix_key(data) + out
        _added_tokens_typed(data, out, facts)
    out = _lstrip_twin(data, out, facts)
    _refuse_lstrip(data, facts, str(tokenizer_json_path(folder)))
    return out


def _added_tokens_typed(data: dict[str, Any], keys: list[KeyValue], facts: dict[str, Any]) -> None:
    """Added tokens inside the base vocabulary typed CONTROL (special) or USER_DEFINED, not NORMAL.

    HF matches every added token whole before its model runs (a special one only while
    special tokens are parsed); gguf-py's ``LlamaHfVocab`` types only the added tokens past
    the base vocabulary and the named special ones, so an added token that is also a piece
    of the base vocabulary stays NORMAL, which llama.cpp's SPM session merges from smaller
    pieces (gemma's ``<start_of_turn>``, ``<unused0>``, ``<s>``). llama.cpp matches CONTROL
    only with ``parse_special``, as HF a special token, and USER_DEFINED in any text, as HF a
    non-special one. An end-of-generation text is left as it is: llama.cpp makes it CONTROL
    whatever the file says; so is a non-special one holding a ``▁``: llama.cpp renders a
    USER_DEFINED token's text as it is, HF's decoder turns its ``▁`` into a space (gemma's
    whitespace runs, which llama.cpp merges from ``▁`` pieces as the text spells them).
    """
    at = next((i for i, k in enumerate(keys) if k.key == Tokenizer.TOKEN_TYPE), None)
    if at is None:
        return
    types = list(keys[at].value)
    for entry in data.get("added_tokens") or []:
        tid = entry.get("id") if isinstance(entry, dict) else None
        content = entry.get("content") if isinstance(entry, dict) else None
        if isinstance(tid, int) and 0 <= tid < len(types) and types[tid] == NORMAL \
                and content not in LLAMA_EOG_TEXTS \
                and (entry.get("special") or "\u2581" not in str(content)):
            types[tid] = CONTROL if entry.get("special") else USER_DEFINED
            facts["types"][tid] = TYPE_NAMES[types[tid]]
    keys[at] = KeyValue(Tokenizer.TOKEN_TYPE, types, keys[at].kind)


# pre types llama.cpp loads alike (llama-vocab.cpp impl::load: the same regexes and flags), the second of
# each also stripping the spaces before "<mask>"
_LSTRIP_TWINS = {"roberta-bpe": "jina-v2-code", "gpt-2": "jina-v2-es"}


def _lstrip_twin(data: dict[str, Any], keys: list[KeyValue], facts: dict[str, Any]) -> list[KeyValue]:
    """The pre name of `_LSTRIP_TWINS` for a folder whose ``<mask>`` takes the spaces before it.

    RoBERTa's ``<mask>`` is ``lstrip``; llama.cpp gives that attribute only by name, to
    ``<mask>`` under the jina-v2 pre types, and ``jina-v2-code`` is loaded as ``roberta-bpe``
    is (GPT-2's regex, ``add_sep``), ``jina-v2-es`` as ``gpt-2``. The decision's note says so.
    """
    twin = _LSTRIP_TWINS.get(str(facts["pre"]))
    if twin is None or not any(isinstance(e, dict) and e.get("lstrip") and e.get("content") == "<mask>"
                               for e in data.get("added_tokens") or []):
        return keys
    why = (f"{twin}, which llama.cpp loads as {facts['pre']} but with the spaces before '<mask>' stripped "
           "(lstrip), as the tokenizer.json does")
    decision = facts.get("pre_decision")
    if decision is not None:
        note = f"{decision.note}; written {why}" if decision.note else f"written {why}"
        facts["pre_decision"] = replace(decision, name=twin, note=note)
    facts["pre"] = twin
    return [KeyValue(Tokenizer.PRE, twin, "str") if k.key == Tokenizer.PRE else k for k in keys]


def _refuse_lstrip(data: dict[str, Any], facts: dict[str, Any], where: str) -> None:
    """A `FormatError` for an added token HF matches with the spaces before it (``lstrip``).

    llama.cpp gives a GGUF's tokens that attribute only by model name (`LSTRIP_MASK_PRES`), so the
    spaces would be tokenized as text before the token.
    """
    for i, entry in enumerate(data.get("added_tokens") or []):
        if not isinstance(entry, dict) or not entry.get("lstrip"):
            continue
        if entry.get("content") == "<mask>" and any(p in str(facts["pre"]) for p in LSTRIP_MASK_PRES):
            continue
        raise FormatError(f"added token {entry.get('content')!r} (id {entry.get('id')}) takes the spaces before "
                          "it (lstrip): llama.cpp strips none for a GGUF's tokens (only '<mask>' under the pre "
                          "types " + ", ".join(LSTRIP_MASK_PRES) + ")", file=where, key=f"added_tokens.{i}.lstrip")


def _space_prefix_key(data: dict[str, Any]) -> list[KeyValue]:
    """``add_space_prefix`` false where the tokenizer.json puts no ``▁`` before the text.

    llama.cpp's SPM session (llama-vocab.cpp ``llama_vocab::impl::tokenize``) prepends a
    space to the text, and to the text after a special token, while ``add_space_prefix``
    is true, its default. The tokenizer.json prepends one with a ``Prepend('▁')``
    normalizer or a ``Metaspace`` pre-tokenizer whose ``prepend_scheme`` is ``always`` or
    ``first`` (the default ``always``; a legacy ``add_prefix_space: false`` is ``never``);
    with neither, the key is written false. Read only when tokenizer_config.json's
    ``add_prefix_space`` says nothing (`_add_prefix_key`).
    """
    normalizers = [n for n in sequence_steps(data.get("normalizer"), "normalizers") if isinstance(n, dict)]
    pre_tokenizers = [p for p in sequence_steps(data.get("pre_tokenizer"), "pretokenizers") if isinstance(p, dict)]
    prepends = any(n.get("type") == "Prepend" and n.get("prepend") == "\u2581" for n in normalizers) or any(
        p.get("type") == "Metaspace" and p.get("prepend_scheme", "never" if p.get("add_prefix_space") is False
                                                else "always") in ("always", "first") for p in pre_tokenizers)
    return [] if prepends else [KeyValue(Tokenizer.ADD_PREFIX, False, "bool")]


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


def _require_unknown(folder: Path) -> None:
    """A `FormatError` for a WordPiece vocabulary without its ``unk_token``: HF fails on a word it
    cannot split ("Missing [UNK] token"), llama.cpp's WordPiece session gives its unknown id."""
    model = read_tokenizer_json_data(folder)["model"]
    unk, vocab = model.get("unk_token", "[UNK]"), model.get("vocab")
    if isinstance(vocab, dict) and unk not in vocab:
        raise FormatError(f"the WordPiece unk_token {unk!r} is not in the vocabulary: HF fails on a word it cannot "
                          "split, llama.cpp gives its unknown id (a GGUF cannot fail)",
                          file=str(tokenizer_json_path(folder)), key="model.unk_token")


def _bpe_keys(folder: Path, hparams: dict[str, Any], pre: str | None,
              bert: bool, like_converter: bool) -> tuple[list[KeyValue], dict[str, Any]]:
    from ..formats.hf_json import read_model_folder

    tok = read_model_folder(folder)
    if bert:
        _require_unknown(folder)
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
    keys = prefix + keys
    return (keys if like_converter else _as_hf_tokenizes(folder, keys, facts)), facts
