"""`explain`: what each stage of a `Tokenizer` made of one text, laid out for a person.

    text ─► special-token split ─► normalize ─► pre-tokenize ─► model ─► post-process ─► ids

The stages are the ones `Tokenizer.encode_full` runs, through the same seams
(`Tokenizer.aligned_splits`, `pre_tokens_aligned`, `model_tokens`, `post_process`; the order of
HF tokenizers 0.23.3 ``tokenizers/src/tokenizer/mod.rs`` ``encode_single_sequence``
and ``added_vocabulary.rs`` ``extract_and_normalize``), kept grouped by raw
segment so the explanation can show the special split, then each segment's
normalized text, its pre-tokens with their offsets into the input, and the
model's pieces and ids per pre-token. The final ids go through the tokenizer's
own `post_process` (truncation, post-processor, padding), so they are the ids
`Tokenizer.encode` returns; the post-processor's additions are what surrounds
the sequence's ids in them.

Nothing is invented: a pipeline without a stage shows none (a GGUF SPM vocabulary
has no pre-tokenizer, so its model merges over each whole fragment; llama.cpp's
regex split is its pre-tokenizer; the decoder is the format's, e.g.
``ChainDecoder[ByteLevel]`` for HF, ``LlamaDetokenizer`` for GGUF).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from ..normalized import NormalizedString
from ..special import SpecialTokens

if TYPE_CHECKING:
    from ..tokenizer import AlignedSplit, Tokenizer

__all__ = ["Explanation", "Segment", "PreToken", "explain"]


@dataclass
class PreToken:
    """One pre-token: its text after normalization and pre-tokenization, and the model's result.

    ``start``/``end`` are character offsets into the input text. ``added`` is the
    id of an added token found in the normalized text (HF ``normalized=True``).
    """

    text: str
    start: int
    end: int
    ids: list[int]
    pieces: list[str]
    added: int | None = None


@dataclass
class Segment:
    """A piece of the special-token split: a special token (``token_id``) or plain text."""

    start: int
    end: int
    text: str
    token_id: int | None
    normalized: str | None = None
    pre_tokens: list[PreToken] = field(default_factory=list)


@dataclass
class Explanation:
    """The stages of one encode call; ``ids`` equals `Tokenizer.encode` with the same arguments."""

    text: str
    add_special: bool
    special: str
    source: str
    components: dict[str, str]
    segments: list[Segment]
    sequence_ids: list[int]
    ids: list[int]
    added_before: list[int]
    added_after: list[int]
    pieces: list[str]

    def to_json(self) -> str:
        """The explanation as one JSON object."""
        return json.dumps(asdict(self), ensure_ascii=False)

    def render(self) -> str:
        """The explanation as text, stage by stage."""
        from ._explain_render import render

        return render(self)


def component_name(component: Any) -> str:
    """A short description of a pipeline component (class names, nested ones in brackets)."""
    if component is None:
        return "-"
    inner = None
    for attr in ("normalizers", "pretokenizers", "processors", "decoders"):
        inner = getattr(component, attr, None)
        if isinstance(inner, (list, tuple)):
            break
        inner = None
    name = type(component).__name__
    if inner:
        return f"{name}[{', '.join(component_name(c) for c in inner)}]"
    return name


def components(tok: Tokenizer) -> dict[str, str]:
    """The components that fill each stage of `tok` (what `explain` shows as the pipeline)."""
    return {
        "special split": component_name(tok.special_split),
        "normalizer": component_name(tok.normalizer),
        "pre_tokenizer": component_name(tok.pre_tokenizer),
        "model": component_name(tok.model),
        "post_processor": component_name(tok.post_processor),
        "decoder": component_name(tok.decoder),
    }


def explain(tok: Tokenizer, text: str, *, special: SpecialTokens | str | None = None,
            add_special: bool = True) -> Explanation:
    """What each stage of `tok` makes of `text`.

    Args:
        tok: a loaded tokenizer (any format).
        text: the input.
        special: as for `Tokenizer.encode` (None: the format's default).
        add_special: as for `Tokenizer.encode`.

    Returns:
        An `Explanation`; its ``ids`` are ``tok.encode(text, add_special=…, special=…)``.
    """
    mode = SpecialTokens(tok.default_special if special is None else special)
    segments = [_segment(tok, text, split) for split in tok.aligned_splits(text, mode is SpecialTokens.PARSE)]
    sequence: list[int] = []
    for seg in segments:
        if seg.token_id is not None:
            sequence.append(seg.token_id)
        for pre in seg.pre_tokens:
            sequence.extend(pre.ids)
    ids = tok.post_process(list(sequence), add_special=add_special)
    before, after = _additions(sequence, ids)
    pieces = [_piece(tok, i) for i in ids]
    return Explanation(text, add_special, mode.value, tok.facts.source, components(tok),
                       segments, sequence, ids, before, after, pieces)


def _piece(tok: Tokenizer, id_: int) -> str:
    found = tok.id_to_token(id_)
    return found if found is not None else f"<id {id_}>"


def _additions(sequence: list[int], ids: list[int]) -> tuple[list[int], list[int]]:
    """The ids the post-processor put before and after the sequence (empty when it is not found whole)."""
    n = len(sequence)
    if n == 0:
        return list(ids), []
    for at in range(len(ids) - n + 1):
        if ids[at:at + n] == sequence:
            return ids[:at], ids[at + n:]
    return [], []


def _segment(tok: Tokenizer, text: str, split: AlignedSplit) -> Segment:
    seg = Segment(split.start, split.end, text[split.start:split.end], split.token_id)
    if split.token_id is not None:
        return seg
    seg.normalized = split.normalized.text if split.normalized is not None else None
    for part, added in split.parts:
        if added is not None:
            a, b = part.offsets(0, len(part.text))
            seg.pre_tokens.append(PreToken(part.text, a, b, [added], [_piece(tok, added)], added))
            continue
        seg.pre_tokens.extend(_model(tok, word) for word in tok.pre_tokens_aligned(part))
    return seg


def _model(tok: Tokenizer, word: NormalizedString) -> PreToken:
    found = tok.model_tokens(word.text)
    start, end = word.offsets(0, len(word.text)) if word.text else (word.orig_start, word.orig_start)
    return PreToken(word.text, start, end, [f[0] for f in found], [f[1] for f in found])
