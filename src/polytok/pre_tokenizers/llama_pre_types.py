"""llama.cpp's ``tokenizer.ggml.pre`` values as data: name -> enum, regex list and flags.

Pre-tokenization stage data for GGUF BPE vocabularies (``tokenizer.ggml.model`` = ``gpt2``,
``gemma4``, ``whitespace``, ``hybriddna``). Read from llama.cpp as vendored by llama-cpp-python
0.3.36, ``src/llama-vocab.cpp``:
- the regex lists come from the ``llm_tokenizer_bpe`` constructor (the ``switch`` over
  ``vocab.get_pre_type()``), spelt here exactly as the C++ string literals (same escapes, so the
  source can be grepped; characters that Unicode normalization would alter, in the DEEPSEEK_LLM
  list, are written as ``\\u`` escapes so no editor can change them);
- the names and flags come from the BPE branch of ``llama_vocab::impl::load`` (the ``if`` chain on
  ``tokenizer_pre``): every string it compares, aliases included.

How the lists are executed (hand-written splitters, collapsed categories) is
``llama_regex_split.LlamaRegexSplit``. Flags, as load sets them for a BPE vocabulary:
``add_space_prefix`` and ``escape_whitespaces`` start false and ``clean_spaces`` true for every
pre type, then the pre type changes some of them. A ``None`` flag leaves the vocab-type default
(``add_bos``/``add_sep`` false for BPE; the GGUF ``add_*`` keys override them later).

The fallback, as load does it: a missing or empty pre name gives DEFAULT with a warning; an
unknown non-empty name is an error (llama.cpp throws ``unknown pre-tokenizer type``). Not here,
because it is a vocab-type rule: ``tokenizer.ggml.model = gemma4`` forces the pre name
``gemma4`` whatever the file says. Enums without a name (CHATGLM3; LLAMA4 and PIXTRAL, whose
names map to GPT4O and LLAMA3) cannot be reached from a GGUF file and are not listed.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from ..errors import FormatError

logger = logging.getLogger(__name__)

# Regex lists of llm_tokenizer_bpe, named after the first enum that uses them.
_LLAMA3 = (
    "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
)
_JAIS2 = (
    "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s{512}(?!\\S)|\\s{256}(?!\\S)|\\s{128}(?!\\S)|\\s{64}(?!\\S)|\\s{32}(?!\\S)|\\s{16}(?!\\S)|\\s{8}(?!\\S)|\\s{4}(?!\\S)|\\s{1,2}(?!\\S)|\\s{1}",
)
_DEEPSEEK_LLM = (
    "[\r\n]",
    "\\s?[A-Za-zµÀ-ÖØ-öø-ƺƼ-ƿǄ-ʓʕ-ʯͰ-ͳͶͷͻ-ͽͿΆΈ-ΊΌΎ-ΡΣ-ϵϷ-ҁҊ-ԯԱ-ՖႠ-ჅᎠ-Ᏽᏸ-ᏽᲐ-ᲺᲽ-Ჿᴀ-ᴫᵫ-ᵷᵹ-ᶚḀ-ἕἘ-Ἕἠ-ὅὈ-Ὅὐ-ὗὙὛὝὟ-\u1f7dᾀ-ᾴᾶ-ᾼ\u1fbeῂ-ῄῆ-ῌῐ-\u1fd3ῖ-\u1fdbῠ-Ῥῲ-ῴῶ-ῼℂℇℊ-ℓℕℙ-ℝℤ\u2126ℨ\u212a-ℭℯ-ℴℹℼ-ℿⅅ-ⅉⅎↃↄⰀ-ⱻⱾ-ⳤⳫ-ⳮⳲⳳꙀ-ꙭꚀ-ꚛꜢ-ꝯꝱ-ꞇꞋ-ꞎꭰ-ꮿﬀ-ﬆﬓ-ﬗＡ-Ｚａ-ｚ𐐀-𐑏𐒰-𐓓𐓘-𐓻𐲀-𐲲𐳀-𐳲𑢠-𑣟𞤀-𞥃]+",
    "\\s?[!-/:-~！-／：-～‘-‟　-。]+",
    "\\s+$",
    "[一-龥ࠀ-一가-퟿]+",
    "\\p{N}+",
)
_DEEPSEEK3_LLM = (
    "\\p{N}{1,3}",
    "[一-龥぀-ゟ゠-ヿ]+",
    "[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+| ?[\\p{P}\\p{S}]+[\r\n]*|\\s*[\r\n]+|\\s+(?!\\S)|\\s+",
)
_SPARK2_5 = (
    "\\p{N}{1,3}",
    "[一-龥぀-ゟ゠-ヿ]+",
    "[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+| ?[\\p{P}\\p{S}]+|[\r\n]|\\s+(?!\\S)|\\s+",
    "\\p{N}",
)
_YOUTU = (
    "[가-힣ㄱ-ㆎ]+|[！…“”‘’—：；，、-〿︰-﹏]+|[ㄅ-ㄯ]+|[一-龥぀-ゟ゠-ヿ]+",
    "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
)
_DEEPSEEK_CODER = (
    "[\r\n]",
    "\\s?\\p{L}+",
    "\\s?\\p{P}+",
    "[一-龥ࠀ-一가-퟿]+",
    "\\p{N}",
)
_FALCON = (
    "[\\p{P}\\$\\+<=>\\^~\\|`]+",
    "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)",
    "[0-9][0-9][0-9]",
)
_STARCODER = (
    "\\p{N}",
    "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)",
)
_GPT2 = (
    "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)",
)
_STABLELM2 = (
    "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
)
_QWEN35 = (
    "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?[\\p{L}\\p{M}]+|\\p{N}| ?[^\\s\\p{L}\\p{M}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
)
_PORO = (
    " ?[^(\\s|.,!?…。，、।۔،)]+",
)
_VIKING = (
    " ?[^(\\s|.,!?…。，、।۔،)]+",
    "\\p{N}",
)
_TEKKEN = (
    "[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}])([^a-z]))*((?=[\\p{L}])([^A-Z]))+|[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}])([^a-z]))+((?=[\\p{L}])([^A-Z]))*|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
)
_CHAMELEON = (
    "<sentinel:[0-9]+>",
    "(IMGIMG)((A|B|C|D|E|F|G|H|I){1,4})Z",
    "([\\t\\n]|    |  )",
    "\\p{N}",
    "[\\p{P}!-/:-@\\[-`{-~]",
    "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)",
)
_GPT4O = (
    "[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}])([^a-z]))*((?=[\\p{L}])([^A-Z]))+(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}])([^a-z]))+((?=[\\p{L}])([^A-Z]))*(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
)
_GRANITE_EMB_MULTI = (
    "[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}\\p{M}])([^a-z]))*((?=[\\p{L}\\p{M}])([^A-Z]))+(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}\\p{M}])([^a-z]))+((?=[\\p{L}\\p{M}])([^A-Z]))*(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
)
_TINY_AYA = (
    "\\d{1,3}(?=(?:\\d{3})*\\b)",
    "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
)
_KIMI_K2 = (
    "\\p{Han}+",
)
_SUPERBPE = (
    "\\p{N}+",
    "(?=(\\d{3})+(?!\\d))",
)
_BAILINGMOE = (
    "'(?:[sSdDmMtT]|[lL][lL]|[vV][eE]|[rR][eE])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]|\\s+(?!\\S)|\\s+",
)
_SEED_CODER = (
    "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1}| ?[^\\s\\p{L}\\p{N}\\r\\n]+|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
)
_UFAKZEKA = (
    "[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
)
_AFMOE = (
    "\\p{AFMoE_digits}",
    "[一-鿿㐀-䶿豈-﫿぀-ゟ゠-ヿ･-ﾟ⼀-⿟เ-๿຀-໿ក-៿က-႟ꩠ-ꩿꧠ-꧿가-힯ᄀ-ᇿ]+",
    "[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\\r\\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+| ?[\\p{P}\\p{S}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
)
_LAGUNA = (
    "[^\\n]+|[\\n]+",
    "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
)
_EXAONE_MOE = (
    "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?(?:\\p{L}\\p{M}*(?: \\p{L}\\p{M}*)*)+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]?|\\s*[\\r\\n]|\\s+(?!\\S)|\\s+",
)
_GEMMA4 = (
    "[^\\n]+|[\\n]+",
)
_MINICPM5 = (
    "\\p{N}{1,3}",
    "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}+| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
)
_WHITESPACE = (
    "\\S+",
)
_DEFAULT = (
    "[\\p{P}\\$\\+<=>\\^~\\|]+",
    "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)",
    "\\p{N}+",
    "[0-9][0-9][0-9]",
)

_REGEXES_BY_ENUM: dict[str, tuple[tuple[str, ...], bool]] = {
    # enum name: (regex list, byte_encode)
    "LLAMA3": (_LLAMA3, True), "DBRX": (_LLAMA3, True), "SMAUG": (_LLAMA3, True),
    "CHATGLM4": (_LLAMA3, True), "JAIS2": (_JAIS2, True), "DEEPSEEK_LLM": (_DEEPSEEK_LLM, True),
    "DEEPSEEK3_LLM": (_DEEPSEEK3_LLM, True), "HUNYUAN_DENSE": (_DEEPSEEK3_LLM, True),
    "JOYAI_LLM": (_DEEPSEEK3_LLM, True), "HY_V4": (_DEEPSEEK3_LLM, True),
    "SPARK2_5": (_SPARK2_5, True), "YOUTU": (_YOUTU, True), "DEEPSEEK_CODER": (_DEEPSEEK_CODER, True),
    "FALCON": (_FALCON, True), "STARCODER": (_STARCODER, True), "REFACT": (_STARCODER, True),
    "COMMAND_R": (_STARCODER, True), "SMOLLM": (_STARCODER, True), "CODESHELL": (_STARCODER, True),
    "EXAONE": (_STARCODER, True), "MINERVA": (_STARCODER, True), "MELLUM2": (_STARCODER, True),
    "GPT2": (_GPT2, True), "MPT": (_GPT2, True), "OLMO": (_GPT2, True), "JAIS": (_GPT2, True),
    "TRILLION": (_GPT2, True), "GRANITE_DOCLING": (_GPT2, True),
    "STABLELM2": (_STABLELM2, True), "QWEN2": (_STABLELM2, True), "HUNYUAN": (_STABLELM2, True),
    "SOLAR_OPEN": (_STABLELM2, True), "GROK_2": (_STABLELM2, True), "QWEN35": (_QWEN35, True),
    "PORO": (_PORO, True), "BLOOM": (_PORO, True), "GPT3_FINNISH": (_PORO, True),
    "VIKING": (_VIKING, True), "TEKKEN": (_TEKKEN, True), "CHAMELEON": (_CHAMELEON, True),
    "GPT4O": (_GPT4O, True), "MINIMAX_M2": (_GPT4O, True), "GRANITE_EMB_MULTI": (_GRANITE_EMB_MULTI, True),
    "TINY_AYA": (_TINY_AYA, True), "KIMI_K2": (_KIMI_K2, True), "SUPERBPE": (_SUPERBPE, True),
    "BAILINGMOE": (_BAILINGMOE, True), "SEED_CODER": (_SEED_CODER, True), "UFAKZEKA": (_UFAKZEKA, True),
    "AFMOE": (_AFMOE, True), "LAGUNA": (_LAGUNA, True), "EXAONE_MOE": (_EXAONE_MOE, True),
    # SPM-style BPE over raw UTF-8 (the ``byte_encode = false`` cases)
    "GEMMA4": (_GEMMA4, False), "SARVAM_MOE": (_GEMMA4, False), "WHITESPACE": (_WHITESPACE, False),
    "MINICPM5": (_MINICPM5, True), "DEFAULT": (_DEFAULT, True),
}


@dataclass(frozen=True, slots=True)
class PreType:
    """One ``tokenizer.ggml.pre`` value as llama.cpp loads it for a BPE vocabulary.

    ``enum`` is the ``LLAMA_VOCAB_PRE_TYPE_*`` name; ``regexes``/``byte_encode`` configure
    LlamaRegexSplit; the rest are the flags load sets: ``ignore_merges`` (BPE), ``clean_spaces``
    (detokenizer), ``escape_whitespaces`` (space -> U+2581 before splitting), ``add_bos`` /
    ``add_sep`` (None: unchanged), ``force_add_bos`` (GEMMA4: true even over a false GGUF key),
    ``bos_none`` (the BOS id default becomes none; a GGUF BOS key still sets it) and
    ``lowercase`` (the whitespace session's normalizer; None: unchanged, i.e. true).
    """

    name: str
    enum: str
    regexes: tuple[str, ...]
    byte_encode: bool = True
    ignore_merges: bool = False
    clean_spaces: bool = True
    escape_whitespaces: bool = False
    add_space_prefix: bool = False
    add_bos: bool | None = None
    add_sep: bool | None = None
    force_add_bos: bool = False
    bos_none: bool = False
    lowercase: bool | None = None


# name(s) compared in impl::load -> (enum, flag changes), in the order load tests them
_NAMES: tuple[tuple[tuple[str, ...], str, dict[str, bool]], ...] = (
    (("default",), "DEFAULT", {}),
    (("minicpm5",), "MINICPM5", {"ignore_merges": True}),
    (("llama3", "llama-v3", "llama-bpe", "falcon3", "falcon-h1", "pixtral", "midm-2.0", "lfm2",
      "jina-v5-nano"), "LLAMA3", {"ignore_merges": True, "add_bos": True}),
    (("deepseek-llm",), "DEEPSEEK_LLM", {"clean_spaces": False}),
    (("deepseek-coder",), "DEEPSEEK_CODER", {"clean_spaces": False}),
    (("deepseek-v3",), "DEEPSEEK3_LLM", {"clean_spaces": False}),
    (("spark2_5",), "SPARK2_5", {"clean_spaces": False}),
    (("youtu",), "YOUTU", {"clean_spaces": False, "ignore_merges": True}),
    (("falcon",), "FALCON", {}),
    (("mpt",), "MPT", {}),
    (("starcoder",), "STARCODER", {}),
    (("gpt-2", "phi-2", "jina-es", "jina-de", "gigachat", "jina-v2-es", "jina-v2-de", "a.x-4.0",
      "mellum", "modern-bert"), "GPT2", {}),
    (("jais-2",), "JAIS2", {}),
    (("gemma4", "granite-embed-multi-311m"), "GEMMA4", {"escape_whitespaces": True, "force_add_bos": True}),
    (("sarvam-moe",), "SARVAM_MOE", {"escape_whitespaces": True, "clean_spaces": False}),
    (("jina-v1-en", "jina-v2-code", "roberta-bpe"), "GPT2", {"add_sep": True}),
    (("whitespace",), "WHITESPACE", {"lowercase": False}),
    (("refact",), "REFACT", {}),
    (("command-r",), "COMMAND_R", {"clean_spaces": False}),
    (("qwen2", "deepseek-r1-qwen", "kormo", "f2llmv2"), "QWEN2", {"clean_spaces": False}),
    (("qwen35",), "QWEN35", {"clean_spaces": False}),
    (("stablelm2",), "STABLELM2", {}),
    (("olmo",), "OLMO", {}),
    (("dbrx",), "DBRX", {}),
    (("smaug-bpe",), "SMAUG", {}),
    (("poro-chat",), "PORO", {"clean_spaces": False}),
    (("chatglm-bpe",), "CHATGLM4", {"bos_none": True}),
    (("glm4", "glm5"), "CHATGLM4", {"bos_none": True, "ignore_merges": True}),
    (("viking",), "VIKING", {"clean_spaces": False}),
    (("jais",), "JAIS", {}),
    (("tekken",), "TEKKEN", {"clean_spaces": False, "ignore_merges": True, "add_bos": True}),
    (("smollm",), "SMOLLM", {"clean_spaces": False}),
    (("codeshell",), "CODESHELL", {}),
    (("bloom",), "BLOOM", {}),
    (("gpt3-finnish",), "GPT3_FINNISH", {}),
    (("exaone",), "EXAONE", {}),
    (("exaone4",), "GPT2", {}),
    (("exaone-moe",), "EXAONE_MOE", {}),
    (("chameleon",), "CHAMELEON", {"add_bos": True, "clean_spaces": False}),
    (("minerva-7b",), "MINERVA", {}),
    (("megrez",), "QWEN2", {}),  # subtle: unlike "qwen2", keeps clean_spaces true
    (("gpt-4o", "llama4", "kanana2", "talkie"), "GPT4O", {"clean_spaces": False}),
    (("granite-embed-multi-97m",), "GRANITE_EMB_MULTI", {"clean_spaces": False, "ignore_merges": True}),
    (("tiny_aya", "cohere2moe"), "TINY_AYA", {"clean_spaces": False}),
    (("superbpe",), "SUPERBPE", {"clean_spaces": False}),
    (("trillion",), "TRILLION", {"clean_spaces": False}),
    (("granite-docling",), "GRANITE_DOCLING", {"clean_spaces": False}),
    (("bailingmoe", "bailingmoe2", "llada-moe"), "BAILINGMOE", {"clean_spaces": False}),
    (("seed-coder",), "SEED_CODER", {"clean_spaces": False}),
    (("hunyuan",), "HUNYUAN", {"clean_spaces": False}),
    (("hunyuan-dense",), "HUNYUAN_DENSE", {"clean_spaces": False}),
    (("hy_v4",), "HY_V4", {"clean_spaces": False}),
    (("joyai-llm",), "JOYAI_LLM", {"clean_spaces": False}),
    (("kimi-k2",), "KIMI_K2", {"clean_spaces": False}),
    (("ufakzeka",), "UFAKZEKA", {"clean_spaces": False}),
    (("grok-2",), "GROK_2", {"clean_spaces": False}),
    (("afmoe",), "AFMOE", {"clean_spaces": False}),
    (("laguna",), "LAGUNA", {"clean_spaces": False}),
    (("minimax-m2",), "MINIMAX_M2", {"clean_spaces": False}),
    (("solar-open",), "SOLAR_OPEN", {"clean_spaces": False}),
    (("mellum2",), "MELLUM2", {}),
)


def _build() -> dict[str, PreType]:
    table = {}
    for names, enum, flags in _NAMES:
        regexes, byte_encode = _REGEXES_BY_ENUM[enum]
        for name in names:
            table[name] = PreType(name, "LLAMA_VOCAB_PRE_TYPE_" + enum, regexes, byte_encode, **flags)
    return table


PRE_TYPES: dict[str, PreType] = _build()


def pre_type(name: str | None, key: str | None = None) -> PreType:
    """The pre type llama.cpp's load picks for a BPE vocabulary whose pre name is `name`.

    Args:
        name: the file's pre-tokenizer name; None or "" when the key is absent or empty.
        key: where the name was read, for the error message.

    Raises:
        FormatError: `name` is not one llama.cpp knows (compared exactly, case-sensitive).
    """
    if not name:
        logger.warning("missing pre-tokenizer type, using 'default' (llama.cpp warns that quality degrades)")
        return PRE_TYPES["default"]
    found = PRE_TYPES.get(name)
    if found is None:
        raise FormatError(f"unknown pre-tokenizer type: {name!r}", key=key)
    return found
