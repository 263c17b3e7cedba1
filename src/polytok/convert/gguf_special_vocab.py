"""The special ids, add_* flags, merges, normalizer flags and chat templates a converted GGUF gets.

Reproduces gguf-py's ``SpecialVocab`` (llama-cpp-python 0.3.36 sdist,
``vendor/llama.cpp/gguf-py/gguf/vocab.py``: ``_try_load_from_tokenizer_json``,
``_try_load_from_config_json``, ``_try_load_merges_txt``, ``_parse_normalizer``,
``_set_special_token``, lines 118-378), which llama.cpp's convert_hf_to_gguf.py
runs over a model folder: special ids are found by looking a config's
``<type>_token`` text up in ``tokenizer.json``'s ``added_tokens`` (so a folder
with no tokenizer.json gets them only from ``config.json``'s ``<type>_token_id``);
add_bos/add_eos/add_sep come from the tokenizer.json post-processor, then from
``add_<type>_token``. Written to the GGUF by `polytok.convert.gguf_writer`.

`match_post_processor` and `match_unknown` then change what gguf-py would write so
that llama.cpp adds around a text what HF adds (the default mode of
`polytok.convert.converter.to_gguf`; ``like_converter`` keeps gguf-py's keys).

This is the writer side. What llama.cpp makes of a GGUF's special tokens when
it loads one (attributes, ids found by text, the EOG set) is the reader side,
`polytok.formats.gguf_token_attrs`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import FormatError, PolytokError
from ..formats import folder as folder_files
from ..formats.gguf import default_special
from ..post_processors import from_config as post_processor_from_config
from ..pre_tokenizers.llama_pre_types import PRE_TYPES

__all__ = ["SpecialVocab", "read_special_vocab", "post_processor_adds", "match_post_processor", "match_unknown"]

DEFAULT_TYPES = ("bos", "eos", "unk", "sep", "pad", "cls", "mask")


@dataclass
class SpecialVocab:
    """What gguf-py's SpecialVocab would add to a GGUF (ids in the order they were set)."""

    ids: dict[str, int] = field(default_factory=dict)
    add: dict[str, bool] = field(default_factory=dict)
    merges: list[str] = field(default_factory=list)
    chat_template: str | list[dict[str, str]] | None = None
    lowercase: bool | None = None
    strip_accents: bool | None = None
    types: tuple[str, ...] = DEFAULT_TYPES
    n_vocab: int | None = None

    def set_id(self, typ: str, tid: Any) -> None:
        if not isinstance(tid, int) or isinstance(tid, bool) or tid < 0:
            return
        if (self.n_vocab is None or tid < self.n_vocab) and typ not in self.ids:
            self.ids[typ] = tid


def read_special_vocab(folder: Path, *, load_merges: bool = False, n_vocab: int | None = None,
                       types: tuple[str, ...] = DEFAULT_TYPES) -> SpecialVocab:
    """gguf-py's ``SpecialVocab(folder, load_merges, types, n_vocab)`` (module notes)."""
    sv = SpecialVocab(types=types, n_vocab=n_vocab)
    tokenizer = folder_files.read_json(folder, "tokenizer.json")
    config = folder_files.read_json(folder, "tokenizer_config.json")
    if isinstance(tokenizer, dict):
        if load_merges:
            sv.merges = _merges(tokenizer)
        if isinstance(tokenizer.get("normalizer"), dict):
            _normalizer(sv, tokenizer["normalizer"])
        added = tokenizer.get("added_tokens") or []
        _post_processor(sv, tokenizer.get("post_processor"), config if isinstance(config, dict) else None)
    else:
        added = []
    if isinstance(config, dict) and config:
        _from_config(sv, folder, config, added)
    model_config = folder_files.read_json(folder, "config.json")
    if isinstance(model_config, dict):
        text_config = model_config.get("text_config")
        for typ in sv.types:
            tid = model_config.get(f"{typ}_token_id")
            if tid is None and isinstance(text_config, dict):
                tid = text_config.get(f"{typ}_token_id")
            sv.set_id(typ, tid)
    if load_merges and not sv.merges:
        sv.merges = _merges_txt(folder)
    return sv


def _merges(tokenizer: dict[str, Any]) -> list[str]:
    model = tokenizer.get("model")
    merges = model.get("merges") if isinstance(model, dict) else None
    if not isinstance(merges, list) or not merges:
        return []
    if isinstance(merges[0], str):
        return list(merges)
    # pairs (transformers >= 4.45): a space inside a part is written as U+0120 (' ' + 256)
    return [" ".join("".join(chr(ord(c) + 256) if c == " " else c for c in part) for part in pair)
            for pair in merges]


def _merges_txt(folder: Path) -> list[str]:
    text = folder_files.read_text(folder, "merges.txt")
    if text is None:
        return []
    lines = text.splitlines()
    if lines and lines[0].strip().startswith("#"):
        lines = lines[1:]
    out = []
    for line in lines:
        parts = line.strip().split(None, 3)
        if len(parts) == 2:
            out.append(f"{parts[0]} {parts[1]}")
    return out


def _normalizer(sv: SpecialVocab, normalizer: dict[str, Any]) -> None:
    kind = normalizer.get("type")
    if kind == "Lowercase":
        sv.lowercase = True
    elif kind == "StripAccents":
        sv.strip_accents = True
    elif kind == "BertNormalizer":
        if "lowercase" in normalizer:
            sv.lowercase = normalizer["lowercase"]
        if "strip_accents" in normalizer:
            sv.strip_accents = normalizer["strip_accents"]
    elif kind == "Sequence":
        for inner in normalizer.get("normalizers", []):
            _normalizer(sv, inner)


def _special_id_of(item: Any) -> Any:
    return item.get("SpecialToken", {}).get("id") if isinstance(item, dict) else None


def _post_processor(sv: SpecialVocab, post: Any, config: dict[str, Any] | None) -> None:
    if not isinstance(post, dict):
        return
    cfg = config or {}
    names = {k: cfg.get(f"{k}_token") for k in ("bos", "cls", "eos", "sep")}
    if not names["bos"] and names["cls"] and config:
        config["bos_token"] = names["bos"] = names["cls"]
    if not names["eos"] and names["sep"] and config:
        config["eos_token"] = names["eos"] = names["sep"]
    for proc in post.get("processors", [post]):
        kind = proc.get("type")
        if kind == "ByteLevel":
            sv.add.setdefault("bos", False)
            sv.add.setdefault("eos", False)
        elif kind == "RobertaProcessing":
            sv.add.update(bos=True, eos=True, sep=True)
            if not names["cls"] and config:
                config["cls_token"] = names["cls"] = proc.get("cls", [names["bos"]])[0]
            if not names["sep"] and config:
                config["sep_token"] = names["sep"] = proc.get("sep", [names["eos"]])[0]
        elif kind == "TemplateProcessing":
            _template(sv, proc, config, names)


def _template(sv: SpecialVocab, proc: dict[str, Any], config: dict[str, Any] | None,
              names: dict[str, Any]) -> None:
    single, pair = proc.get("single", []), proc.get("pair", [])
    first = last = None
    if len(single) > 1:
        first = _special_id_of(single[0])
        if first:
            if not config:
                names["bos"] = first
            elif first not in (names["bos"], names["cls"]):
                if not names["bos"]:
                    config["bos_token"] = names["bos"] = first
                if not names["cls"]:
                    config["cls_token"] = names["cls"] = first
            sv.add["bos"] = first in (names["bos"], names["cls"])
        last = _special_id_of(single[-1])
        if last:
            if not config:
                names["eos"] = last
            elif last != names["eos"]:
                if "eot" not in sv.types:
                    sv.types = (*sv.types, "eot")
                    config["eot_token"] = names["eos"]
                elif "eom" not in sv.types:
                    sv.types = (*sv.types, "eom")
                    config["eom_token"] = names["eos"]
                config["eos_token"] = names["eos"] = last
            sv.add["eos"] = last == names["eos"]
    if pair:
        start = 1 if first and _special_id_of(pair[0]) == first else 0
        stop = -1 if last and _special_id_of(pair[-1]) == last else None
        middle = pair[start:stop]
        _pair_sep(sv, middle, config, names, last)


def _pair_sep(sv: SpecialVocab, middle: list[Any], config: dict[str, Any] | None, names: dict[str, Any],
              last: Any) -> None:
    if not middle:
        return
    seq = [m.get("Sequence", {}).get("id") if isinstance(m, dict) else None for m in (middle[0], middle[-1])]
    inner = middle[1:-1]
    if seq != ["A", "B"] or not inner:
        return
    add_sep = False
    entry = _special_id_of(inner[0])
    if entry and entry in (names["sep"], names["eos"]) and not last:
        add_sep = True
    if len(inner) == 2:
        entry = _special_id_of(inner[1])
        if entry and entry in (names["sep"], names["eos"]):
            add_sep = True
    sv.add["sep"] = add_sep
    if add_sep and not names["sep"] and config:
        config["sep_token"] = names["eos"]


def _chat_template(folder: Path, config: dict[str, Any]) -> Any:
    alt: Any = folder_files.read_text(folder, "chat_template.jinja")
    if alt is not None:
        extra = folder_files.additional_templates(folder)
        if extra:
            alt = [{"name": "default", "template": alt}] + [
                {"name": name, "template": body} for name, body in extra.items()]
    else:
        data = folder_files.read_json(folder, "chat_template.json")
        alt = data.get("chat_template") if isinstance(data, dict) else None
    return config.get("chat_template", alt)


def _from_config(sv: SpecialVocab, folder: Path, config: dict[str, Any], added: list[Any]) -> None:
    template = _chat_template(folder, config)
    if template is None or isinstance(template, (str, list)):
        sv.chat_template = template
    for typ in sv.types:
        flag = config.get(f"add_{typ}_token")
        if isinstance(flag, bool) and typ not in sv.add:
            sv.add[typ] = flag
        entry = config.get(f"{typ}_token")
        text = entry.get("content") if isinstance(entry, dict) else entry
        if not isinstance(text, str):
            continue
        tid = next((a.get("id") for a in added if isinstance(a, dict) and a.get("content") == text), None)
        sv.set_id(typ, tid)


# --- what HF adds around a text, as GGUF keys (the default mode of `to_gguf`) -----------------------------

_TEXT = -1  # stands for the text's ids when the post-processor is run on one sequence
# the token llama.cpp's tokenize adds on each side, by tokenizer.ggml.model (llama-vocab.cpp
# llama_vocab::impl::tokenize): SPM and BPE add BOS / EOS as add_bos / add_eos say; WPM adds
# BOS and SEP whatever the flags say
_SIDES = {"llama": ("bos", "eos"), "gpt2": ("bos", "eos"), "bert": ("bos", "sep")}
_ALWAYS = {"bert"}


def post_processor_adds(tokenizer: dict[str, Any]) -> tuple[list[int], list[int]] | None:
    """The ids the tokenizer.json's post-processor puts before and after the text of one sequence.

    HF runs the post-processor on every encode with special tokens (``TemplateProcessing``'s
    ``single``, ``RobertaProcessing`` / ``BertProcessing``'s ``cls`` and ``sep``, each step of a
    ``Sequence``); none adds nothing. None when it cannot be run, or does not place the text
    exactly once (the tokenizer.json's own reader reports what is wrong with it).
    """
    post = tokenizer.get("post_processor")
    if post is None:
        return [], []
    try:
        out = post_processor_from_config(post).process_ids([_TEXT], None, True)
    except PolytokError:
        return None
    if out.count(_TEXT) != 1:
        return None
    at = out.index(_TEXT)
    return out[:at], out[at + 1:]


def match_post_processor(sv: SpecialVocab, model: str, pre: str, tokenizer: dict[str, Any], where: str) -> None:
    """Set `sv`'s ids and add flags so that llama.cpp adds what the tokenizer.json's post-processor adds.

    `model` and `pre` are the GGUF's ``tokenizer.ggml.model`` (``llama``, ``gpt2`` or
    ``bert``) and ``tokenizer.ggml.pre``. llama.cpp adds at most one token before the text
    (BOS) and one after (EOS; SEP for WordPiece, which adds both whatever the flags say).
    The ids are taken from the post-processor wherever the config files name none (or a
    different one), and the add flags follow what it adds. A key already right, or absent
    where llama.cpp's default for the vocab type and pre type is right, is left as gguf-py's
    ``SpecialVocab`` has it.

    Raises:
        FormatError: the post-processor adds what a GGUF cannot express (`where` is the
            tokenizer.json; the message names the tokens).
    """
    adds = post_processor_adds(tokenizer)
    if adds is None or model not in _SIDES:
        return
    for side, ids, typ in zip(("before", "after"), adds, _SIDES[model], strict=True):
        always = model in _ALWAYS
        if len(ids) > 1 or (always and not ids):
            names = " ".join(_token_text(tokenizer, i) for i in ids) or "none"
            raise FormatError(f"the post-processor adds {len(ids)} token{'s' if len(ids) != 1 else ''} {side} "
                              f"the text ({names}); a GGUF adds {'exactly' if always else 'at most'} one "
                              f"({typ.upper()}) there", file=where, key="post_processor")
        default_ids, default_flags = _defaults(model, pre)
        if ids and sv.ids.get(typ, default_ids.get(typ)) != ids[0]:
            sv.ids[typ] = ids[0]
        if not always and sv.add.get(typ, default_flags[f"add_{typ}"]) != bool(ids):
            sv.add[typ] = bool(ids)


def match_unknown(sv: SpecialVocab, model: str, tokenizer: dict[str, Any]) -> None:
    """Set `sv`'s unk id to the tokenizer.json model's ``unk_token`` where the configs name none.

    HF's model puts the unknown token for what its vocabulary lacks (WordPiece a word, BPE
    without byte fallback a character); llama.cpp puts its own default id (100 for WordPiece,
    0 for SentencePiece) when the GGUF names none, and gguf-py finds an id only through a
    config's ``unk_token``.
    """
    if "unk" in sv.ids or model not in _SIDES:
        return
    body = tokenizer.get("model")
    name = body.get("unk_token") if isinstance(body, dict) else None
    vocab = body.get("vocab") if isinstance(body, dict) else None
    tid = vocab.get(name) if isinstance(name, str) and isinstance(vocab, dict) else None
    if isinstance(tid, int) and tid != _defaults(model, "")[0].get("unk"):
        sv.set_id("unk", tid)


def _defaults(model: str, pre: str) -> tuple[dict[str, int], dict[str, bool]]:
    """llama.cpp's special ids and add flags for a GGUF naming none (`formats.gguf.default_special`);
    `pre` counts for a BPE only."""
    return default_special(model, PRE_TYPES.get(pre) if model == "gpt2" else None)


def _token_text(tokenizer: dict[str, Any], tid: int) -> str:
    for entry in tokenizer.get("added_tokens") or []:
        if isinstance(entry, dict) and entry.get("id") == tid and isinstance(entry.get("content"), str):
            return str(entry["content"])
    model = tokenizer.get("model")
    vocab = model.get("vocab") if isinstance(model, dict) else None
    if isinstance(vocab, dict):
        found = next((piece for piece, i in vocab.items() if i == tid), None)
        if isinstance(found, str):
            return found
    elif isinstance(vocab, list) and 0 <= tid < len(vocab) and isinstance(vocab[tid], list) and vocab[tid]:
        return str(vocab[tid][0])
    return f"id {tid}"
