"""The pipeline transformers 5.24.0 builds for a ``tokenizer.json`` folder, by tokenizer class.

``AutoTokenizer.from_pretrained(folder)`` loads ``tokenizer.json`` as it is only for
``TokenizersBackend`` and classes without an ``__init__`` of their own. A class with one
(``LlamaTokenizer``, ``GPT2Tokenizer``, ``T5Tokenizer`` …) takes only the vocabulary (and
merges) from the file and builds the normalizer, pre-tokenizer, decoder and model options
itself, from its own rules and ``tokenizer_config.json``'s keys; of the file it keeps the
post-processor, padding and truncation (``tokenization_utils_tokenizers.py``
``TokenizersBackend.convert_to_native_format`` and ``__init__``). `as_transformers`
reproduces that rebuild with polytok's own components, each written as the
``tokenizer.json`` object the class would save, read by the stage registries.

Classes reproduced (``models/<name>/tokenization_<name>.py`` ``__init__``; `CLASSES`):
Llama (``legacy`` and ``add_prefix_space`` pick the Metaspace ``prepend_scheme`` through
``tokenization_utils_base._get_prepend_scheme``: "always" with ``legacy=True``, "first"
without, "never" without a prefix space), CodeLlama, Gemma, GPT2, Roberta (and Bart, LED,
Mvp, which are Roberta), Whisper, CodeGen, Blenderbot, CLIP, Qwen2, Qwen3.5, GPTNeoX,
Cohere, T5, XLMRoberta, Camembert, Albert, Bert (and Lxmert, MobileBert, SqueezeBert, MPNet,
Funnel), DebertaV2, XLNet, MBart, NLLB, Pegasus, BigBird, Barthez, RemBert, XGLM.
A class's SentencePiece charsmap is the file's ``Precompiled`` normalizer, found at the top
level or in a top-level ``Sequence`` (``convert_to_native_format``). T5, XLNet, Pegasus,
Funnel, RemBert and XGLM set their own ``TemplateProcessing`` after ``super().__init__``, in place of the
file's post-processor (`Rebuild.template`); the other classes keep the file's.

The model is the file's model object, shared, where the class builds it with the same
options; where an option differs (``ignore_merges``, ``unk_id`` …) a model is built from
the file's vocabulary with the class's options. An ``unk_token`` the class leaves out is
no difference under ``byte_fallback`` when all 256 byte pieces are in the vocabulary.

Falls back to the file's pipeline (the result is the tokenizer itself), as listed in
docs/transformers.md:
- a class not in `CLASSES` (``TokenizersBackend``, classes that keep the file, and the
  rebuilding classes not reproduced: Herbert, LayoutLM*/LayoutXLM, Luke/mLuke, MBart50,
  Nougat, OpenAI GPT, Reformer, RoFormer, SeamlessM4T, Siglip2, Splinter, Udop, …);
- a file whose model type is not the class's (transformers then builds a model from the
  vocabulary alone, e.g. a BPE without merges for a Unigram file);
- a tokenizer that is not read from a ``tokenizer.json``;
- added tokens that would not keep their ids when re-added.

A config's ``add_bos_token`` / ``add_eos_token`` leave the file's post-processor as it is
(transformers 5.24.0 on a folder with ``tokenizer.json``, checked live).

Not followed: the post-processors MBart and NLLB build from language codes and MPNet's
``RobertaProcessing``; the default special tokens a class names (T5's ``<extra_id_*>``,
Gemma's ``<pad>``/``<mask>`` …) that transformers adds when the files lack them (a template
naming one keeps the file's post-processor); the added tokens transformers drops
with the file (those ``tokenizer.json`` lists but ``tokenizer_config.json`` does not; polytok
keeps the file's), ``_patch_mistral_regex`` (read from ``config.json``) and remote code.
The file is read a second time (once per tokenizer) to learn its model options.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .call_settings import call_settings

if TYPE_CHECKING:
    from .tokenizer import Tokenizer

__all__ = ["Rebuild", "CLASSES", "as_transformers", "rebuild_for"]

_SPACE = "\u2581"
#: qwen2/tokenization_qwen2.py PRETOKENIZE_REGEX
_QWEN2_PATTERN = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*"
                  r"|\s*[\r\n]+|\s+(?!\S)|\s+")
#: qwen3_5/tokenization_qwen3_5.py PRETOKENIZE_REGEX
_QWEN3_5_PATTERN = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*"
                    r"|\s*[\r\n]+|\s+(?!\S)|\s+")
#: clip/tokenization_clip.py, the Split pattern of CLIPTokenizer.__init__
_CLIP_PATTERN = r"<\|startoftext\|>|<\|endoftext\|>|'s|'t|'re|'ve|'m|'ll|'d|[\p{L}]+|[\p{N}]|[^\s\p{L}\p{N}]+"
_BPE_DEFAULTS: dict[str, Any] = {"dropout": None, "unk_token": None, "continuing_subword_prefix": "",
                                 "end_of_word_suffix": "", "fuse_unk": False, "byte_fallback": False,
                                 "ignore_merges": False}
_MODEL_DEFAULTS: dict[str, dict[str, Any]] = {
    "BPE": _BPE_DEFAULTS,
    "Unigram": {"unk_id": None, "byte_fallback": False},
    "WordPiece": {"unk_token": "[UNK]", "continuing_subword_prefix": "##", "max_input_chars_per_word": 100},
}


@dataclass(frozen=True, slots=True)
class Rebuild:
    """What a class's ``__init__`` builds, as ``tokenizer.json`` objects (None: no such stage)."""

    model_type: str
    model_options: dict[str, Any] = field(default_factory=dict)
    normalizer: dict[str, Any] | None = None
    pre_tokenizer: dict[str, Any] | None = None
    decoder: dict[str, Any] | None = None
    #: the (single, pair) template a class sets after ``super().__init__`` in place of the file's
    #: post-processor, in ``TemplateProcessing``'s string form; None: the file's is kept
    template: tuple[str, str] | None = None


# -- tokenizer.json objects ---------------------------------------------------------------

def _metaspace(scheme: str, split: bool = True) -> dict[str, Any]:
    return {"type": "Metaspace", "replacement": _SPACE, "prepend_scheme": scheme, "split": split}


def _byte_level(add_prefix_space: bool, use_regex: bool = True) -> dict[str, Any]:
    return {"type": "ByteLevel", "add_prefix_space": add_prefix_space, "trim_offsets": True, "use_regex": use_regex}


def _replace(pattern: str, content: str, regex: bool = False) -> dict[str, Any]:
    return {"type": "Replace", "pattern": {"Regex" if regex else "String": pattern}, "content": content}


def _normalizers(items: list[dict[str, Any] | None]) -> dict[str, Any] | None:
    kept = [item for item in items if item is not None]
    return {"type": "Sequence", "normalizers": kept} if kept else None


def _pre_tokenizers(*items: dict[str, Any]) -> dict[str, Any]:
    return {"type": "Sequence", "pretokenizers": list(items)}


def _decoders(*items: dict[str, Any]) -> dict[str, Any]:
    return {"type": "Sequence", "decoders": list(items)}


_SPM_DECODER = (_replace(_SPACE, " "), {"type": "ByteFallback"}, {"type": "Fuse"})
_STRIP_ONE = {"type": "Strip", "content": " ", "start": 1, "stop": 0}


def _precompiled(data: dict[str, Any]) -> dict[str, Any] | None:
    """The file's ``Precompiled`` normalizer, where ``convert_to_native_format`` finds it."""
    found = data.get("normalizer")
    if not isinstance(found, dict):
        return None
    items = found.get("normalizers") if found.get("type") == "Sequence" else [found]
    for item in items if isinstance(items, list) else []:
        if isinstance(item, dict) and item.get("type") == "Precompiled" and "precompiled_charsmap" in item:
            return item
    return None


def _flag(config: dict[str, Any], key: str, default: bool) -> bool:
    value = config.get(key, default)
    return default if value is None else bool(value)


def _unigram_index(data: dict[str, Any], piece: str, fallback: int) -> int:
    """The index of ``(piece, 0.0)`` in the file's Unigram vocabulary (``list.index``), else `fallback`."""
    for i, entry in enumerate(data["model"].get("vocab") or []):
        if isinstance(entry, list) and len(entry) == 2 and entry[0] == piece and entry[1] == 0.0:
            return i
    return fallback


def _token(config: dict[str, Any], key: str, default: str) -> str:
    value = config.get(key, default)
    if isinstance(value, dict):
        value = value.get("content", default)
    return value if isinstance(value, str) else default


# -- the classes ---------------------------------------------------------------------------

def _llama(config: dict[str, Any], data: dict[str, Any]) -> Rebuild:
    add_prefix_space = _flag(config, "add_prefix_space", True)
    scheme = ("always" if _flag(config, "legacy", False) else "first") if add_prefix_space else "never"
    decoder = _decoders(*_SPM_DECODER, *([_STRIP_ONE] if add_prefix_space else []))
    return Rebuild("BPE", {"fuse_unk": True, "byte_fallback": True}, None, _metaspace(scheme, split=False), decoder)


def _code_llama(config: dict[str, Any], data: dict[str, Any]) -> Rebuild:
    scheme = "first" if _flag(config, "add_prefix_space", True) else "never"
    return Rebuild("BPE", {"fuse_unk": True, "byte_fallback": True, "unk_token": _token(config, "unk_token", "<unk>")},
                   None, _metaspace(scheme, split=False), _decoders(*_SPM_DECODER, _STRIP_ONE))


def _gemma(config: dict[str, Any], data: dict[str, Any]) -> Rebuild:
    split = {"type": "Split", "pattern": {"String": " "}, "behavior": "MergedWithPrevious", "invert": False}
    return Rebuild("BPE", {"fuse_unk": True, "byte_fallback": True, "unk_token": _token(config, "unk_token", "<unk>")},
                   _replace(" ", _SPACE), split, _decoders(*_SPM_DECODER))


def _byte_level_bpe(prefix_space: bool) -> Callable[[dict[str, Any], dict[str, Any]], Rebuild]:
    """GPT2's rule (Roberta's, Whisper's, CodeGen's; Blenderbot's, whose prefix space defaults to on)."""
    def rule(config: dict[str, Any], data: dict[str, Any]) -> Rebuild:
        return Rebuild("BPE", {}, None, _byte_level(_flag(config, "add_prefix_space", prefix_space)),
                       _byte_level(True))
    return rule


_gpt2 = _byte_level_bpe(False)


def _split_then_bytes(pattern: str) -> Callable[[dict[str, Any], dict[str, Any]], Rebuild]:
    """Qwen2's rule (and Qwen3.5's, with its own pattern): NFC, the pattern's split, then bytes."""
    def rule(config: dict[str, Any], data: dict[str, Any]) -> Rebuild:
        split = {"type": "Split", "pattern": {"Regex": pattern}, "behavior": "Isolated", "invert": False}
        pre = _pre_tokenizers(split, _byte_level(_flag(config, "add_prefix_space", False), use_regex=False))
        return Rebuild("BPE", {}, {"type": "NFC"}, pre, _byte_level(True))
    return rule


def _clip(config: dict[str, Any], data: dict[str, Any]) -> Rebuild:
    normalizer = _normalizers([{"type": "NFC"}, _replace(r"\s+", " ", regex=True), {"type": "Lowercase"}])
    split = {"type": "Split", "pattern": {"Regex": _CLIP_PATTERN}, "behavior": "Removed", "invert": True}
    return Rebuild("BPE", {"end_of_word_suffix": "</w>", "unk_token": _token(config, "unk_token", "<|endoftext|>")},
                   normalizer, _pre_tokenizers(split, _byte_level(False)), _byte_level(True))


def _nllb(config: dict[str, Any], data: dict[str, Any]) -> Rebuild:
    charsmap = _precompiled(data)
    normalizer = None if charsmap is None else _normalizers([charsmap, _replace(" {2,}", " ", regex=True)])
    return Rebuild("BPE", {"fuse_unk": True, "unk_token": _token(config, "unk_token", "<unk>")}, normalizer,
                   _metaspace("always"), _metaspace("always"))


def _gpt_neox(config: dict[str, Any], data: dict[str, Any]) -> Rebuild:
    return Rebuild("BPE", {}, {"type": "NFC"}, _byte_level(_flag(config, "add_prefix_space", False)),
                   _byte_level(True))


def _cohere(config: dict[str, Any], data: dict[str, Any]) -> Rebuild:
    add_prefix_space = _flag(config, "add_prefix_space", False)
    pre = _pre_tokenizers({"type": "Digits", "individual_digits": True}, _byte_level(add_prefix_space))
    return Rebuild("BPE", {}, {"type": "NFC"}, pre, _byte_level(add_prefix_space))


def _t5(config: dict[str, Any], data: dict[str, Any]) -> Rebuild:
    pre = _pre_tokenizers({"type": "WhitespaceSplit"}, _metaspace("always"))
    eos = _token(config, "eos_token", "</s>")
    return Rebuild("Unigram", {"unk_id": 2}, _precompiled(data), pre, _metaspace("always"),
                   (f"$A {eos}", f"$A {eos} $B {eos}"))


def _whitespace_metaspace(unk_id: int) -> Callable[[dict[str, Any], dict[str, Any]], Rebuild]:
    """XLMRoberta's rule: the charsmap, then WhitespaceSplit and Metaspace."""
    def rule(config: dict[str, Any], data: dict[str, Any]) -> Rebuild:
        scheme = "always" if _flag(config, "add_prefix_space", True) else "never"
        pre = _pre_tokenizers({"type": "WhitespaceSplit"}, _metaspace(scheme))
        return Rebuild("Unigram", {"unk_id": unk_id}, _precompiled(data), pre, _metaspace(scheme))
    return rule


def _camembert(config: dict[str, Any], data: dict[str, Any]) -> Rebuild:
    unk = _token(config, "unk_token", "<unk>")
    unk_id = next((i for i, e in enumerate(data["model"].get("vocab") or []) if e and e[0] == unk), 0)
    return _whitespace_metaspace(unk_id)(config, data)


def _albert(config: dict[str, Any], data: dict[str, Any]) -> Rebuild:
    items: list[dict[str, Any] | None] = [_replace("``", '"'), _replace("''", '"')]
    if not _flag(config, "keep_accents", False):
        items += [{"type": "NFKD"}, {"type": "StripAccents"}]
    if _flag(config, "do_lower_case", True):
        items.append({"type": "Lowercase"})
    items.append(_precompiled(data))
    scheme = "always" if _flag(config, "add_prefix_space", True) else "never"
    pre = _pre_tokenizers({"type": "WhitespaceSplit"}, _metaspace(scheme))
    return Rebuild("Unigram", {"unk_id": 1}, _normalizers(items), pre, _metaspace(scheme))


def _xlnet(config: dict[str, Any], data: dict[str, Any]) -> Rebuild:
    items: list[dict[str, Any] | None] = [_replace("``", '"'), _replace("''", '"'), {"type": "NFKD"},
                                          {"type": "StripAccents"}]
    if _flag(config, "do_lower_case", False):
        items.append({"type": "Lowercase"})
    items.append(_precompiled(data))
    unk_id = config.get("unk_id", 0)
    pre = _pre_tokenizers({"type": "WhitespaceSplit"}, _metaspace("always"))  # no `legacy` yet: "always"
    sep, cls = _token(config, "sep_token", "<sep>"), _token(config, "cls_token", "<cls>")
    return Rebuild("Unigram", {"unk_id": unk_id if isinstance(unk_id, int) else 0}, _normalizers(items), pre,
                   _metaspace("always"), (f"$A:0 {sep}:0 {cls}:2", f"$A:0 {sep}:0 $B:1 {sep}:1 {cls}:2"))


def _bert(config: dict[str, Any], data: dict[str, Any]) -> Rebuild:
    """BertTokenizer's rule (MPNet's and Funnel's too; Funnel's class reads ``clean_text`` and
    ``wordpieces_prefix``, absent from the others' configs)."""
    strip_accents = config.get("strip_accents")
    prefix = config.get("wordpieces_prefix", "##")
    normalizer = {"type": "BertNormalizer", "clean_text": _flag(config, "clean_text", True),
                  "handle_chinese_chars": _flag(config, "tokenize_chinese_chars", True),
                  "strip_accents": strip_accents if isinstance(strip_accents, bool) else None,
                  "lowercase": _flag(config, "do_lower_case", True)}
    return Rebuild("WordPiece", {"unk_token": _token(config, "unk_token", "[UNK]")}, normalizer,
                   {"type": "BertPreTokenizer"},
                   {"type": "WordPiece", "prefix": prefix if isinstance(prefix, str) else "##", "cleanup": True})


def _funnel(config: dict[str, Any], data: dict[str, Any]) -> Rebuild:
    cls, sep = _token(config, "cls_token", "<cls>"), _token(config, "sep_token", "<sep>")
    bert = _bert(config, data)
    return Rebuild(bert.model_type, bert.model_options, bert.normalizer, bert.pre_tokenizer, bert.decoder,
                   (f"{cls}:2 $A:0 {sep}:0", f"{cls}:2 $A:0 {sep}:0 $B:1 {sep}:1"))


def _deberta_v2(config: dict[str, Any], data: dict[str, Any]) -> Rebuild:
    items: list[dict[str, Any] | None] = [{"type": "Lowercase"}] if _flag(config, "do_lower_case", False) else []
    items += [_replace(r"\s{2,}|[\n\r\t]", " ", regex=True), {"type": "NFC"},
              {"type": "Strip", "strip_left": False, "strip_right": True}]
    scheme = "always" if _flag(config, "add_prefix_space", True) else "first"
    pres = [{"type": "Punctuation", "behavior": "Isolated"}] if _flag(config, "split_by_punct", False) else []
    unk_id = config.get("unk_id", 1)
    unk_id = _unigram_index(data, _token(config, "unk_token", "[UNK]"), unk_id if isinstance(unk_id, int) else 1)
    return Rebuild("Unigram", {"unk_id": unk_id}, _normalizers(items), _pre_tokenizers(*pres, _metaspace(scheme)),
                   _metaspace(scheme))


def _barthez(config: dict[str, Any], data: dict[str, Any]) -> Rebuild:
    normalizer = _normalizers([_replace(r"\s{2,}|[\n\r\t]", " ", regex=True), {"type": "NFC"},
                               {"type": "Strip", "strip_left": False, "strip_right": True}])
    scheme = "always" if _flag(config, "add_prefix_space", True) else "never"
    return Rebuild("Unigram", {"unk_id": 3}, normalizer, _metaspace(scheme), _metaspace(scheme))


def _rembert(config: dict[str, Any], data: dict[str, Any]) -> Rebuild:
    items: list[dict[str, Any] | None] = [_replace("``", '"'), _replace("''", '"'),
                                          _replace(" {2,}", " ", regex=True)]
    if not _flag(config, "keep_accents", True):
        items += [{"type": "NFKD"}, {"type": "StripAccents"}]
    if _flag(config, "do_lower_case", False):
        items.append({"type": "Lowercase"})
    items.append(_precompiled(data))
    scheme = "always" if _flag(config, "add_prefix_space", True) else "never"
    cls, sep = _token(config, "cls_token", "[CLS]"), _token(config, "sep_token", "[SEP]")
    return Rebuild("Unigram", {"unk_id": 2}, _normalizers(items), _metaspace(scheme), _metaspace(scheme),
                   (f"{cls}:0 $A:0 {sep}:0", f"{cls}:0 $A:0 {sep}:0 $B:1 {sep}:1"))


def _xglm(config: dict[str, Any], data: dict[str, Any]) -> Rebuild:
    normalizer = _normalizers([_precompiled(data), _replace(" {2,}", " ", regex=True)])
    scheme = "always" if _flag(config, "add_prefix_space", True) else "never"
    eos = _token(config, "eos_token", "</s>")
    return Rebuild("Unigram", {"unk_id": 3}, normalizer, _metaspace(scheme), _metaspace(scheme),
                   (f"{eos} $A", f"{eos} $A {eos} {eos} $B"))


def _mbart(config: dict[str, Any], data: dict[str, Any]) -> Rebuild:
    pre = _pre_tokenizers({"type": "WhitespaceSplit"}, _metaspace("always"))
    return Rebuild("Unigram", {"unk_id": 3}, None, pre, _metaspace("always"))


def _pegasus(config: dict[str, Any], data: dict[str, Any]) -> Rebuild:
    charsmap = _precompiled(data)
    first = charsmap if charsmap is not None else _replace(r"\n", " ", regex=True)
    unk = _token(config, "unk_token", "<unk>")
    vocab = data["model"].get("vocab") or []
    unk_id = next((i for i, e in enumerate(vocab) if i >= 1 and e == [unk, 0.0]), None)
    if unk_id is None:
        raise LookupError("unk piece")  # transformers' list.index raises too
    eos = _token(config, "eos_token", "</s>")
    return Rebuild("Unigram", {"unk_id": unk_id}, _normalizers([first, _replace(" {2,}", " ", regex=True)]),
                   _metaspace("always"), _metaspace("always"), (f"$A {eos}", f"$A $B {eos}"))


def _big_bird(config: dict[str, Any], data: dict[str, Any]) -> Rebuild:
    unk_id = _unigram_index(data, _token(config, "unk_token", "<unk>"), 100)
    normalizer = _normalizers([{"type": "Strip", "strip_left": False, "strip_right": False},
                               _replace(" {2,}", _SPACE, regex=True)])
    scheme = "always" if _flag(config, "add_prefix_space", True) else "never"
    return Rebuild("Unigram", {"unk_id": unk_id}, normalizer, _metaspace(scheme), _metaspace(scheme))


#: transformers class name (``tokenizer_config.json``'s ``tokenizer_class`` without ``Fast``) -> its rebuild
CLASSES: dict[str, Callable[[dict[str, Any], dict[str, Any]], Rebuild]] = {
    "LlamaTokenizer": _llama,
    "CodeLlamaTokenizer": _code_llama,
    "GemmaTokenizer": _gemma,
    "GPT2Tokenizer": _gpt2,
    **dict.fromkeys(("RobertaTokenizer", "BartTokenizer", "LEDTokenizer", "MvpTokenizer"), _gpt2),
    "Qwen2Tokenizer": _split_then_bytes(_QWEN2_PATTERN),
    "Qwen3_5Tokenizer": _split_then_bytes(_QWEN3_5_PATTERN),
    "WhisperTokenizer": _gpt2,
    "CodeGenTokenizer": _gpt2,
    "BlenderbotTokenizer": _byte_level_bpe(True),
    "BarthezTokenizer": _barthez,
    "RemBertTokenizer": _rembert,
    "XGLMTokenizer": _xglm,
    "CLIPTokenizer": _clip,
    "NllbTokenizer": _nllb,
    "GPTNeoXTokenizer": _gpt_neox,
    "CohereTokenizer": _cohere,
    "T5Tokenizer": _t5,
    "XLMRobertaTokenizer": _whitespace_metaspace(3),
    "CamembertTokenizer": _camembert,
    "AlbertTokenizer": _albert,
    "XLNetTokenizer": _xlnet,
    **dict.fromkeys(("BertTokenizer", "LxmertTokenizer", "MobileBertTokenizer", "SqueezeBertTokenizer",
                     "MPNetTokenizer"), _bert),
    "FunnelTokenizer": _funnel,
    "DebertaV2Tokenizer": _deberta_v2,
    "MBartTokenizer": _mbart,
    "PegasusTokenizer": _pegasus,
    "BigBirdTokenizer": _big_bird,
}


# -- building ------------------------------------------------------------------------------

_BUILT: weakref.WeakKeyDictionary[Tokenizer, tuple[tuple[Any, ...], Tokenizer | None]] = \
    weakref.WeakKeyDictionary()


def as_transformers(tok: Tokenizer) -> Tokenizer:
    """`tok` with the pipeline ``AutoTokenizer.from_pretrained(folder)`` builds for its class (module
    notes): a new `Tokenizer` sharing `tok`'s model where the class rebuilds the pipeline, else
    `tok` itself. Built once per tokenizer, and again after `tok` changes what the rebuild takes
    from it (added tokens, model, post-processor, truncation, padding)."""
    stamp = (len(tok.added), id(tok.model), id(tok.post_processor), id(tok.truncation), id(tok.padding))
    found = _BUILT.get(tok)
    if found is None or found[0] != stamp:
        found = _BUILT[tok] = (stamp, _build(tok))
    return found[1] or tok


def rebuild_for(tok: Tokenizer) -> tuple[str, Rebuild] | None:
    """The class name and `Rebuild` transformers applies to `tok`'s folder, None where it keeps the file."""
    found = _inputs(tok)
    return None if found is None else (found[0], found[1])


def _inputs(tok: Tokenizer) -> tuple[str, Rebuild, dict[str, Any]] | None:
    rule = CLASSES.get(call_settings(tok).tokenizer_class)
    data = _tokenizer_json(tok) if rule is not None else None
    if rule is None or data is None or not isinstance(data.get("model"), dict):
        return None
    config = _folder_object(tok, "tokenizer_config.json") or {}
    try:
        rebuild = rule(config, data)
    except LookupError:  # the class fails on this file
        return None
    model_type = data["model"].get("type")
    if model_type is not None and model_type != rebuild.model_type:
        return None
    return call_settings(tok).tokenizer_class, rebuild, data


def _build(tok: Tokenizer) -> Tokenizer | None:
    from .. import decoders, normalizers, post_processors, pre_tokenizers
    from ..decoders.chain_decoder import ChainDecoder
    from .tokenizer import Tokenizer

    found = _inputs(tok)
    if found is None:
        return None
    _, rebuild, data = found
    normalizer = None if rebuild.normalizer is None else normalizers.from_config(rebuild.normalizer)
    entries = sorted(tok.added.id_to_entry.items())
    post_processor = tok.post_processor
    if rebuild.template is not None:
        template = _template(tok, *rebuild.template)
        if template is not None:  # (else a token transformers adds to the vocabulary: not followed)
            post_processor = post_processors.from_config(template)
    new = Tokenizer(_model(tok, rebuild, data["model"]), normalizer=normalizer,
                    pre_tokenizer=None if rebuild.pre_tokenizer is None
                    else pre_tokenizers.from_config(rebuild.pre_tokenizer),
                    post_processor=post_processor, added_tokens=[entry for _, entry in entries],
                    truncation=tok.truncation, padding=tok.padding, facts=tok.facts)
    if sorted(new.added.id_to_entry) != [id_ for id_, _ in entries]:
        return None  # the added tokens would move
    chain = None if rebuild.decoder is None else decoders.from_config(rebuild.decoder)
    new.decoder = ChainDecoder(chain, new.model, new.added)
    return new


def _template(tok: Tokenizer, single: str, pair: str) -> dict[str, Any] | None:
    """The ``TemplateProcessing`` object of a template in string form (``"$A:0 </s>:0"``; a piece's
    type id defaults to 0), its tokens' ids as ``convert_tokens_to_ids`` gives them; None where a
    token is not in the vocabulary."""
    specials: dict[str, Any] = {}

    def pieces(text: str) -> list[dict[str, Any]] | None:
        out = []
        for item in text.split():
            name, _, type_id = item.rpartition(":") if item.rpartition(":")[2].isdigit() else (item, "", "0")
            if name in ("$A", "$B"):
                out.append({"Sequence": {"id": name[1], "type_id": int(type_id)}})
                continue
            id_ = tok.token_to_id(name)
            if id_ is None:
                return None
            specials[name] = {"id": name, "ids": [id_], "tokens": [name]}
            out.append({"SpecialToken": {"id": name, "type_id": int(type_id)}})
        return out

    single_pieces, pair_pieces = pieces(single), pieces(pair)
    if single_pieces is None or pair_pieces is None:
        return None
    return {"type": "TemplateProcessing", "single": single_pieces, "pair": pair_pieces, "special_tokens": specials}


def _model(tok: Tokenizer, rebuild: Rebuild, file_model: dict[str, Any]) -> Any:
    """The file's model where the class's options agree with it, else one built with the class's."""
    from .. import models

    wanted = {**_MODEL_DEFAULTS[rebuild.model_type], **rebuild.model_options}
    differ = {key for key, value in wanted.items() if _option(file_model, key, value) != value}
    if rebuild.model_type == "BPE" and wanted["byte_fallback"] and \
            all(tok.model.token_to_id(f"<0x{b:02X}>") is not None for b in range(256)):
        differ.discard("unk_token")  # (never reached: every byte has its piece)
    if rebuild.model_type == "Unigram" and wanted["unk_id"] is None:
        differ.discard("unk_id")
    if not differ:
        return tok.model
    return models.from_config({**file_model, **{key: wanted[key] for key in differ}})


def _option(file_model: dict[str, Any], key: str, like: Any) -> Any:
    value = file_model.get(key, _MODEL_DEFAULTS.get(str(file_model.get("type")), {}).get(key))
    if key in ("continuing_subword_prefix", "end_of_word_suffix") and isinstance(like, str) and like == "":
        return value or ""
    return value


def _folder_file(tok: Tokenizer, name: str) -> Path | None:
    for file in tok.facts.files:
        path = Path(file)
        if path.name in (name, name + ".gz"):
            return path
    return None


def _folder_object(tok: Tokenizer, name: str) -> dict[str, Any] | None:
    from ..formats import folder

    path = _folder_file(tok, name)
    return None if path is None else folder.read_object(path.parent, name)


def _tokenizer_json(tok: Tokenizer) -> dict[str, Any] | None:
    if tok.facts.format != "tokenizer.json":
        return None
    return _folder_object(tok, "tokenizer.json")
