"""llama.cpp's load-time rules for a GGUF vocabulary's special tokens: attributes, ids, EOG set.

The reader side of GGUF's special tokens: what llama.cpp decides when it loads
a vocabulary (llama-cpp-python 0.3.36 sdist, ``vendor/llama.cpp/src/llama-vocab.cpp``,
``llama_vocab::impl::load``, in its order):

- each GGUF token type becomes an attribute bit (the ``switch`` on
  ``toktypes[i]``, lines 2531-2540; the bits are llama.h ``enum llama_token_attr``);
- a special id the file does not give is found by its text ("auto-detect
  special tokens by text", lines 2686-2843), and that token becomes CONTROL;
- a CONTROL token whose text contains ``unused`` is also UNUSED (lines 2845-2869);
- the end-of-generation set: FIM pad/repo/sep, every known EOG text (made
  CONTROL), gpt-oss's always-USER_DEFINED markers, then EOS/EOT/EOM; harmony
  and solar-open drop ``<|end|>`` from it, gemma-4 and PLaMo drop ``</s>``
  (lines 2871-3027);
- the special-token cache (CONTROL, USER_DEFINED, UNKNOWN; lines 3030-3049) that
  ``tokenizer_st_partition`` walks, as a `polytok.special.LongestFirstPartition`;
- LSTRIP/RSTRIP set by tokenizer pre type, architecture or model name
  (``_set_token_attr`` rules, lines 3108-3135).

Not to be confused with `polytok.convert.gguf_special_vocab`, the writer side:
gguf-py's ``SpecialVocab``, which picks the special ids a converted GGUF is given.
The matching itself (the partition split) is an algorithm and lives in
`polytok.special`; this module only decides which entries it gets.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import compress, repeat

from ..errors import FormatError
from ..special import LongestFirstPartition, PartitionEntry

__all__ = ["ATTR_UNKNOWN", "ATTR_UNUSED", "ATTR_NORMAL", "ATTR_CONTROL", "ATTR_USER_DEFINED", "ATTR_BYTE",
           "ATTR_LSTRIP", "ATTR_RSTRIP", "LSTRIP_MASK_PRES", "GGUF_TYPE_TO_ATTR", "LLAMA_AUTODETECT", "LLAMA_EOG_TEXTS",
           "LlamaSpecials", "llama_specials"]

# Token attribute bits (llama.h, enum llama_token_attr) and the GGUF token types that set them.
ATTR_UNKNOWN, ATTR_UNUSED, ATTR_NORMAL, ATTR_CONTROL, ATTR_USER_DEFINED, ATTR_BYTE = 1, 2, 4, 8, 16, 32
ATTR_LSTRIP, ATTR_RSTRIP = 128, 256
GGUF_TYPE_TO_ATTR = {0: 0, 1: ATTR_NORMAL, 2: ATTR_UNKNOWN, 3: ATTR_CONTROL, 4: ATTR_USER_DEFINED,
                     5: ATTR_UNUSED, 6: ATTR_BYTE}
_SPECIAL_CACHE = ATTR_CONTROL | ATTR_USER_DEFINED | ATTR_UNKNOWN  # the entries tokenizer_st_partition tries

# Texts llama.cpp looks for when a special id is not given (first found wins; llama.cpp walks a
# hash map, polytok these lists in order — the choice matters only for files holding several).
LLAMA_AUTODETECT = {
    "eot": ("<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>", "<|endoftext|>", "<|end_of_text|>",
            "<EOT>", "_<EOT>", "[EOT]", "<｜end▁of▁sentence｜>", "<end_of_utterance>"),
    "eom": ("<|eom_id|>",),
    "fim_pre": ("<|fim_prefix|>", "<fim-prefix>", "<fim_prefix>", "<｜fim▁begin｜>", "<PRE>", "▁<PRE>",
                "<|code_prefix|>", "<|prefix|>"),
    "fim_suf": ("<|fim_suffix|>", "<fim-suffix>", "<fim_suffix>", "<｜fim▁hole｜>", "<SUF>", "▁<SUF>",
                "<|code_suffix|>", "<|suffix|>"),
    "fim_mid": ("<|fim_middle|>", "<fim-middle>", "<fim_middle>", "<｜fim▁end｜>", "<MID>", "▁<MID>",
                "<|code_middle|>", "<|middle|>"),
    "fim_pad": ("<|fim_pad|>", "<fim-pad>", "<fim_pad>", "<PAD>", "[PAD]"),
    "fim_rep": ("<|fim_repo|>", "<|repo_name|>", "<fim-repo>", "<REPO>", "<reponame>"),
    "fim_sep": ("<|file_sep|>",),
}
# End-of-generation texts: always EOG, and promoted to CONTROL whatever the file says.
LLAMA_EOG_TEXTS = frozenset((
    "<|eot_id|>", "<|im_end|>", "<|end|>", "<|return|>", "<|call|>", "<|flush|>", "<|calls|>", "<end_of_turn>",
    "<|endoftext|>", "</s>", "<|eom_id|>", "<EOT>", "_<EOT>", "[EOT]", "[EOS]", "<|end_of_text|>",
    "<end_of_utterance>", "<eos>", "<turn|>", "<|tool_response>", "<｜end▁of▁sentence｜>", "[e~["))
# gpt-oss: always matched and always rendered.
_ALWAYS_USER_DEFINED = ("<|channel|>", "<|message|>", "<|start|>", "<|constrain|>")
# The EOG texts whose presence together changes the EOG set (harmony, gemma-4, PLaMo).
_EOG_SHAPE_TEXTS = ("<|return|>", "<|call|>", "<|calls|>", "<|flush|>", "<|end|>", "<|tool_response>",
                    "<|plamo:eos|>", "</s>")


@dataclass(slots=True)
class LlamaSpecials:
    """What llama.cpp decides about a GGUF vocabulary's special tokens (attributes, ids, EOG set)."""

    attrs: list[int]
    ids: dict[str, int | None]
    eog: set[int]

    def partition(self, texts: list[str]) -> LongestFirstPartition:
        """The partition over CONTROL / USER_DEFINED / UNKNOWN entries (llama.cpp's special cache)."""
        entries = []
        attrs = self.attrs
        for id_ in compress(range(len(attrs)), map(_SPECIAL_CACHE.__and__, attrs)):
            attr = attrs[id_]
            entries.append(PartitionEntry(id_, texts[id_], always=not attr & (ATTR_CONTROL | ATTR_UNKNOWN),
                                          lstrip=bool(attr & ATTR_LSTRIP), rstrip=bool(attr & ATTR_RSTRIP)))
        return LongestFirstPartition(entries)


def llama_specials(texts: list[str], token_types: Sequence[int] | None, ids: dict[str, int | None], *,
                   pre: str = "", architecture: str = "", name: str = "",
                   by_text: dict[str, int] | None = None) -> LlamaSpecials:
    """Apply llama.cpp's load-time rules (llama-vocab.cpp ``impl::load``, in its order).

    `ids` holds the special ids already read from the file (None where absent);
    categories still None are found by text. Texts shared by several ids resolve
    to the last of them, as llama.cpp's ``token_to_id`` map does: `by_text` is that
    map when the caller has it (``dict(zip(texts, range(len(texts))))``; read, never changed).
    """
    n = len(texts)
    attrs = list(map(GGUF_TYPE_TO_ATTR.get, token_types, repeat(0))) if token_types else [ATTR_NORMAL] * n
    if by_text is None:
        by_text = dict(zip(texts, range(n)))
    ids = dict(ids)
    for category, candidates in LLAMA_AUTODETECT.items():
        if ids.get(category) is None:
            found = next((by_text[t] for t in candidates if t in by_text), None)
            if found is not None:
                ids[category] = found
                attrs[found] |= ATTR_CONTROL
    for id_ in list(compress(range(n), map(ATTR_CONTROL.__and__, attrs))):
        if "unused" in texts[id_] and by_text[texts[id_]] == id_:  # a text's last id, as llama.cpp's map
            attrs[id_] |= ATTR_UNUSED
    eog = _eog(by_text, attrs, ids)
    _name_rules(by_text, attrs, pre, architecture, name.lower())
    return LlamaSpecials(attrs, ids, eog)


def _eog(by_text: dict[str, int], attrs: list[int], ids: dict[str, int | None]) -> set[int]:
    eog: set[int] = {i for k in ("fim_pad", "fim_rep", "fim_sep") if (i := ids.get(k)) is not None}
    for text in LLAMA_EOG_TEXTS:
        if text in by_text:
            eog.add(by_text[text])
            attrs[by_text[text]] |= ATTR_CONTROL
    for text in _ALWAYS_USER_DEFINED:
        if text in by_text:
            attrs[by_text[text]] = ATTR_USER_DEFINED
    eog |= {i for k in ("eos", "eot", "eom") if (i := ids.get(k)) is not None}
    in_eog = {by_text.get(t) for t in _EOG_SHAPE_TEXTS} & eog
    texts_in_eog = {t for t in _EOG_SHAPE_TEXTS if by_text.get(t) in in_eog}
    has_call = bool(texts_in_eog & {"<|call|>", "<|calls|>"})
    if "<|end|>" in texts_in_eog and has_call and texts_in_eog & {"<|return|>", "<|flush|>"}:
        end = by_text["<|end|>"]
        eog.discard(end)
        attrs[end] = ATTR_USER_DEFINED  # harmony / solar-open: <|end|> ends a message, not the generation
    if "</s>" in texts_in_eog and texts_in_eog & {"<|tool_response>", "<|plamo:eos|>"}:
        s = by_text["</s>"]
        eog.discard(s)
        attrs[s] = ATTR_NORMAL  # gemma-4 / PLaMo: </s> is an ordinary word
    return eog


#: the pre names under which llama.cpp strips the spaces before "<mask>" (LSTRIP; a name holding one counts)
LSTRIP_MASK_PRES = ("jina-v2-de", "jina-v2-es", "jina-v2-code")


def _name_rules(by_text: dict[str, int], attrs: list[int], pre: str, arch: str, name: str) -> None:
    """LSTRIP/RSTRIP that llama.cpp sets by tokenizer, architecture or model name (first rule only)."""
    if any(p in pre for p in LSTRIP_MASK_PRES) or any(
            a in arch for a in ("nomic-bert-moe", "jina-bert-v3")):
        if "<mask>" in by_text:
            attrs[by_text["<mask>"]] |= ATTR_LSTRIP
    elif "phi-3" in name or "phi3" in name:
        for id_, attr in enumerate(attrs):
            if attr & _SPECIAL_CACHE:
                attrs[id_] |= ATTR_RSTRIP
        for text, on in (("</s>", True), ("<unk>", False), ("<s>", False), ("<|endoftext|>", False)):
            if text not in by_text:
                raise FormatError(f"llama.cpp requires the token {text!r} in a Phi-3 vocabulary", key="tokenizer")
            id_ = by_text[text]
            attrs[id_] = attrs[id_] | ATTR_RSTRIP if on else attrs[id_] & ~ATTR_RSTRIP
    elif "modern-bert" in name and "[MASK]" in by_text:
        attrs[by_text["[MASK]"]] |= ATTR_LSTRIP
