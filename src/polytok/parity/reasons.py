"""The catalogue of known reasons why two tokenizers diverge: each a detector and a sentence.

A detector looks at one divergence (`Case`: both sides, the text, the aligned
region, the ids on each side) and says whether its reason explains it. Every
reason that matches is reported, in catalogue order. The sentences name the
rule and where each engine keeps it; the measurements behind them are in
tests/compare/.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable
from dataclasses import dataclass

from .align import Region
from .engines import Side

__all__ = ["Case", "Reason", "REASONS", "reasons_for"]


@dataclass
class Case:
    """One divergence, as the detectors see it."""

    text: str
    a: Side
    b: Side
    region: Region
    ids_a: list[int]
    ids_b: list[int]
    #: the ids each side adds around any text (its encode of "" with add_special)
    framing_a: frozenset[int] = frozenset()
    framing_b: frozenset[int] = frozenset()
    #: the first differing stage, when compare(explain=True) found it
    stage: str | None = None

    @property
    def left(self) -> list[int]:
        return self.ids_a[self.region.a_start:self.region.a_end]

    @property
    def right(self) -> list[int]:
        return self.ids_b[self.region.b_start:self.region.b_end]


@dataclass(frozen=True)
class Reason:
    name: str
    sentence: str
    detect: Callable[[Case], bool]


def _spm_space_runs(case: Case) -> bool:
    kinds = {_kind(case.a), _kind(case.b)}
    if kinds != {"tokenizer.json", "sentencepiece"}:
        return False
    if case.region.text_a != case.region.text_b:
        return False  # the same characters, split differently
    pieces = [case.a.piece(i) for i in case.left] + [case.b.piece(i) for i in case.right]
    return "  " in case.region.text_a or any("\u2581\u2581" in p for p in pieces)


def _leading_space(case: Case) -> bool:
    if {_kind(case.a), _kind(case.b)} != {"tokenizer.json", "sentencepiece"} or case.text[:1] not in " \u2581":
        return False
    ta, tb = case.region.text_a, case.region.text_b
    moved = ta.count(" ") != tb.count(" ") or case.region.a_start == 0
    return ta != tb and moved and ta.replace(" ", "") == tb.replace(" ", "")


def _kind(side: Side) -> str:
    """tokenizer.json (HF BPE merges) or sentencepiece (scores), whoever runs it."""
    if side.format == "tokenizer.json":
        return "tokenizer.json"
    if side.format == "sentencepiece":
        return "sentencepiece"
    return side.format


def _added_only_one_side(case: Case) -> bool:
    left, right = case.left, case.right
    return (not left and bool(right) and set(right) <= case.framing_b) or \
        (not right and bool(left) and set(left) <= case.framing_a)


def _marker_parsed_one_side(case: Case) -> bool:
    left, right = case.left, case.right
    for one, side, other in ((left, case.a, right), (right, case.b, left)):
        markers = [side.piece(i) for i in one if i in side.added]
        if markers and len(other) > len(one) and any(len(m) > 1 and m in case.text for m in markers):
            return True
    return False


def _redefined_appended(case: Case) -> bool:
    for high, side, low, other in ((case.left, case.a, case.right, case.b), (case.right, case.b, case.left, case.a)):
        base = other.base_size
        if base is None or not high or not low:
            continue
        beyond = [i for i in high if i >= base]
        if beyond and all(i < base for i in low) and \
                {side.piece(i) for i in beyond} & {other.piece(i) for i in low}:
            return True
    return False


def _fold(text: str) -> str:
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(c for c in decomposed if not unicodedata.combining(c)).casefold()


def _not_normalized(text: str) -> bool:
    """Text that some Unicode normalization changes (combining marks, Hangul syllables, NFKC forms)."""
    return unicodedata.normalize("NFKC", text) != text or unicodedata.normalize("NFC", text) != text or \
        any(unicodedata.category(c).startswith("M") or "\uac00" <= c <= "\ud7a3" for c in text)


def _unicode_normalization(case: Case) -> bool:
    ta, tb = case.region.text_a, case.region.text_b
    if case.stage == "normalize" and _not_normalized(case.text):
        return True
    if ta == tb:
        return unicodedata.normalize("NFC", case.text) != case.text and \
            any(unicodedata.combining(c) or ord(c) >= 0xAC00 for c in case.text)
    return _fold(ta) == _fold(tb) or unicodedata.normalize("NFC", ta) == unicodedata.normalize("NFC", tb)


def _unknown(case: Case) -> bool:
    for side, ids in ((case.a, case.left), (case.b, case.right)):
        if side.unk_id is not None and side.unk_id in ids and side.piece(side.unk_id) not in case.text:
            return True  # (a marker "<unk>" written in the text is the marker reason's)
    return False


def _control_chars(case: Case) -> bool:
    if not case.left or not case.right:
        return False
    return any(unicodedata.category(c) == "Cc" and c not in "\t\n\r " for c in case.text)


def _class_rebuild(case: Case) -> bool:
    """transformers on a folder whose tokenizer class rebuilds the pipeline, against a side that reads
    tokenizer.json; where polytok's pipeline is at hand, its rebuild must give transformers' ids."""
    from ..tokenizer.transformers_classes import CLASSES, as_transformers

    for side, ids, other in ((case.a, case.ids_a, case.b), (case.b, case.ids_b, case.a)):
        if side.engine != "transformers" or other.engine == "transformers" or \
                type(getattr(side, "ref", None)).__name__ not in CLASSES:
            continue
        tok = other.tokenizer or side.tokenizer
        if tok is None:
            return True
        built = as_transformers(tok)
        return built is not tok and any(built.encode(case.text, add_special=a) == ids for a in (True, False))
    return False


REASONS: tuple[Reason, ...] = (
    Reason("transformers-class-rebuild",
           "transformers rebuilds the pipeline of the folder's tokenizer class (LlamaTokenizer, GPT2Tokenizer, "
           "T5Tokenizer, …: normalizer, pre-tokenizer and model options from the vocabulary and the class's own "
           "rules, e.g. LlamaTokenizer's Metaspace for tokenizer.json's Prepend), where HF tokenizers reads "
           "tokenizer.json as written (polytok's tok(texts) and as_transformers() follow the class)",
           _class_rebuild),
    Reason("spm-space-runs",
           "runs of spaces: a tokenizer.json converted from a SentencePiece BPE model merges by its merge list "
           "(HF BPE ranks: '▁▁' before '▁world'), sentencepiece picks the best-scoring piece, so a run of "
           "spaces before a word splits differently (transformers' converter vs sentencepiece bpe_model.cc)",
           _spm_space_runs),
    Reason("metaspace-leading-space",
           "a text that starts with a space: HF's Metaspace (prepend_scheme first/always) adds no '▁' before "
           "text that already starts with one, sentencepiece always adds its dummy prefix (add_dummy_prefix)",
           _leading_space),
    Reason("redefined-token-appended",
           "a token redefinition: one side gives the marker a new id beyond the base model's rows (transformers' "
           "AutoTokenizer appends redefined added tokens), the other maps it to the redefined base id the "
           "fine-tune trained (llama.cpp's converter, polytok)",
           _redefined_appended),
    Reason("special-added-one-side",
           "special tokens (BOS/EOS) added on one side only: the files disagree on add_bos/add_eos or the "
           "post-processor, or the two sides run in different add_special modes",
           _added_only_one_side),
    Reason("marker-parsed-one-side",
           "a special-token marker in the text is one token on one side and plain text on the other: a "
           "different special mode, or an HF added token with special=false (HF matches it even with "
           "encode_special_tokens) that llama.cpp reads as text without parse_special",
           _marker_parsed_one_side),
    Reason("unicode-normalization",
           "Unicode normalization on one side only (NFC/NFKC/NFD, accent stripping, lowercasing): the same "
           "characters reach the model in different forms",
           _unicode_normalization),
    Reason("unknown-token",
           "a character the vocabulary lacks: one side emits the unknown token where the other falls back "
           "to bytes or splits differently",
           _unknown),
    Reason("control-characters",
           "control characters (\\x0b, \\x0c, …): one side drops them or takes them for whitespace "
           "(HF BertNormalizer clean_text), the other keeps them",
           _control_chars),
)


def reasons_for(case: Case) -> list[Reason]:
    """The catalogue's reasons that explain `case` (maybe none)."""
    return [r for r in REASONS if r.detect(case)]
