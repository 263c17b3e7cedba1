"""The GGUF metadata keys polytok reads: the one place their names are written.

Names as llama.cpp spells them in src/llama-arch.cpp (LLM_KV_NAMES, the
LLM_KV_TOKENIZER_* and LLM_KV_GENERAL_* rows, checked against llama-cpp-python
0.3.36's vendored llama.cpp), grouped and named like gguf-py 0.19.0's
``gguf.constants.Keys.Tokenizer`` / ``Keys.General`` so either source can be
grepped.  ``SEP_ID`` keeps llama.cpp's spelling "seperator".  The GGUF type each
key must have (llama.cpp's loader is type-strict) is in
reference/llama_vocab.md §1.  No other module writes a ``"tokenizer.ggml."``
literal.
"""

from __future__ import annotations

from typing import Final

__all__ = ["General", "Tokenizer", "Paperkiln", "KEY_TYPES", "chat_template_key", "vocab_size_key"]


class General:
    """``general.*`` keys: read for the name-based attribute rules (llama-vocab.cpp, impl::load)."""

    ARCHITECTURE: Final = "general.architecture"
    NAME: Final = "general.name"
    ALIGNMENT: Final = "general.alignment"


class Tokenizer:
    """``tokenizer.*`` keys (llama-arch.cpp LLM_KV_TOKENIZER_*)."""

    MODEL: Final = "tokenizer.ggml.model"
    PRE: Final = "tokenizer.ggml.pre"
    LIST: Final = "tokenizer.ggml.tokens"
    TOKEN_TYPE: Final = "tokenizer.ggml.token_type"
    TOKEN_TYPE_COUNT: Final = "tokenizer.ggml.token_type_count"
    SCORES: Final = "tokenizer.ggml.scores"
    MERGES: Final = "tokenizer.ggml.merges"
    BOS_ID: Final = "tokenizer.ggml.bos_token_id"
    EOS_ID: Final = "tokenizer.ggml.eos_token_id"
    EOT_ID: Final = "tokenizer.ggml.eot_token_id"
    EOM_ID: Final = "tokenizer.ggml.eom_token_id"
    UNK_ID: Final = "tokenizer.ggml.unknown_token_id"
    SEP_ID: Final = "tokenizer.ggml.seperator_token_id"
    PAD_ID: Final = "tokenizer.ggml.padding_token_id"
    CLS_ID: Final = "tokenizer.ggml.cls_token_id"
    MASK_ID: Final = "tokenizer.ggml.mask_token_id"
    FIM_PRE_ID: Final = "tokenizer.ggml.fim_pre_token_id"
    FIM_SUF_ID: Final = "tokenizer.ggml.fim_suf_token_id"
    FIM_MID_ID: Final = "tokenizer.ggml.fim_mid_token_id"
    FIM_PAD_ID: Final = "tokenizer.ggml.fim_pad_token_id"
    FIM_REP_ID: Final = "tokenizer.ggml.fim_rep_token_id"
    FIM_SEP_ID: Final = "tokenizer.ggml.fim_sep_token_id"
    # Deprecated spellings of FIM_PRE/SUF/MID; llama.cpp reads them after the
    # fim_* keys, so where both are present these win.
    PREFIX_ID: Final = "tokenizer.ggml.prefix_token_id"
    SUFFIX_ID: Final = "tokenizer.ggml.suffix_token_id"
    MIDDLE_ID: Final = "tokenizer.ggml.middle_token_id"
    ADD_BOS: Final = "tokenizer.ggml.add_bos_token"
    ADD_EOS: Final = "tokenizer.ggml.add_eos_token"
    ADD_SEP: Final = "tokenizer.ggml.add_sep_token"
    ADD_PREFIX: Final = "tokenizer.ggml.add_space_prefix"
    REMOVE_EXTRA_WS: Final = "tokenizer.ggml.remove_extra_whitespaces"
    PRECOMPILED_CHARSMAP: Final = "tokenizer.ggml.precompiled_charsmap"
    NORMALIZER_LOWERCASE: Final = "tokenizer.ggml.normalizer.lowercase"
    NORMALIZER_STRIP_ACCENTS: Final = "tokenizer.ggml.normalizer.strip_accents"
    SUPPRESS_TOKENS: Final = "tokenizer.ggml.suppress_tokens"
    HF_JSON: Final = "tokenizer.huggingface.json"
    RWKV: Final = "tokenizer.rwkv.world"
    CHAT_TEMPLATE: Final = "tokenizer.chat_template"
    CHAT_TEMPLATES: Final = "tokenizer.chat_templates"

    # Every llama.cpp special-id key, in the order impl::load reads them
    # (the deprecated three last).
    SPECIAL_ID_KEYS: Final = (
        BOS_ID, EOS_ID, EOT_ID, EOM_ID, UNK_ID, SEP_ID, PAD_ID, MASK_ID,
        FIM_PRE_ID, FIM_SUF_ID, FIM_MID_ID, FIM_PAD_ID, FIM_REP_ID, FIM_SEP_ID,
        PREFIX_ID, SUFFIX_ID, MIDDLE_ID,
    )  # fmt: skip


class Paperkiln:
    """``paperkiln.*`` keys: paperkiln's own metadata, read by `polytok.chat.render` (per-turn state tokens)."""

    STATE_TOKENS_K: Final = "paperkiln.state_tokens.k"


def chat_template_key(name: str | None = None) -> str:
    """``tokenizer.chat_template``, or ``tokenizer.chat_template.<name>`` for a named one.

    llama.cpp builds the named key by appending ``"." + name``
    (llama-model.cpp, llama_model_chat_template through LLM_KV's suffix).
    """
    return Tokenizer.CHAT_TEMPLATE if name is None else f"{Tokenizer.CHAT_TEMPLATE}.{name}"


def vocab_size_key(architecture: str) -> str:
    """``<arch>.vocab_size``, read only for the ``none``/``no_vocab`` model (llama-vocab.cpp, impl::load)."""
    return f"{architecture}.vocab_size"


_BOOL: Final = ("BOOL",)
_ID: Final = ("UINT32",)
# The GGUF types each key polytok reads must have (type names of gguf_reader.ValueType;
# an array is ("ARRAY", element type)).  llama.cpp's loader is type-strict: get_key
# refuses a key of another type (llama-model-loader.cpp, GGUFMeta validate_type), and
# llama-vocab.cpp load checks the arrays itself (tokens: STRING; scores: INT32 or
# FLOAT32; token_type: INT32; precompiled_charsmap: UINT8 or INT8).
KEY_TYPES: Final[dict[str, tuple[tuple[str, ...], ...]]] = {
    General.ARCHITECTURE: (("STRING",),),
    General.NAME: (("STRING",),),
    Tokenizer.MODEL: (("STRING",),),
    Tokenizer.PRE: (("STRING",),),
    Tokenizer.LIST: (("ARRAY", "STRING"),),
    Tokenizer.MERGES: (("ARRAY", "STRING"),),
    Tokenizer.TOKEN_TYPE: (("ARRAY", "INT32"),),
    Tokenizer.SCORES: (("ARRAY", "FLOAT32"), ("ARRAY", "INT32")),
    Tokenizer.PRECOMPILED_CHARSMAP: (("ARRAY", "UINT8"), ("ARRAY", "INT8")),
    Tokenizer.ADD_BOS: (_BOOL,), Tokenizer.ADD_EOS: (_BOOL,), Tokenizer.ADD_SEP: (_BOOL,),
    Tokenizer.ADD_PREFIX: (_BOOL,), Tokenizer.REMOVE_EXTRA_WS: (_BOOL,),
    Tokenizer.NORMALIZER_LOWERCASE: (_BOOL,), Tokenizer.NORMALIZER_STRIP_ACCENTS: (_BOOL,),
    **{key: (_ID,) for key in Tokenizer.SPECIAL_ID_KEYS},
}  # fmt: skip
