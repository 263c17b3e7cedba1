"""Which stage first differs between two polytok pipelines on one text (``compare --explain``).

The stages are `polytok.parity.explain`'s: the special-token split, then per text
segment the characters that reach the model (normalizer and pre-tokenizer
together: a tokenizer.json may escape spaces in its pre-tokenizer where a
SentencePiece model does it in its normalizer), the pre-token boundaries, the
model's ids, and last the post-processor's additions. Where the pre-tokens
differ, side A's model is run over side B's pre-tokens: if it then gives B's
ids, the boundaries are the cause ("pre-tokenize"), else the models differ
("model").
"""

from __future__ import annotations

from dataclasses import dataclass

from ..tokenizer import Tokenizer
from .explain import Explanation, Segment, explain

__all__ = ["StageDiff", "first_stage"]


@dataclass
class StageDiff:
    stage: str
    detail: str


def _model_input(seg: Segment) -> str:
    return "".join(p.text for p in seg.pre_tokens)


def _seg_ids(seg: Segment) -> list[int]:
    if seg.token_id is not None:
        return [seg.token_id]
    return [i for p in seg.pre_tokens for i in p.ids]


def first_stage(ta: Tokenizer, tb: Tokenizer, text: str, add_special: bool,
                special: str | None) -> StageDiff | None:
    """The first stage where `ta` and `tb` differ on `text` (None when even the final ids agree)."""
    ea = explain(ta, text, add_special=add_special, special=special)
    eb = explain(tb, text, add_special=add_special, special=special)
    split_a = [(s.start, s.end, s.token_id) for s in ea.segments]
    split_b = [(s.start, s.end, s.token_id) for s in eb.segments]
    if split_a != split_b:
        return StageDiff("special split", f"A {_first_other(split_a, split_b)} / B {_first_other(split_b, split_a)}")
    for sa, sb in zip(ea.segments, eb.segments):
        found = _segment_stage(ta, sa, sb)
        if found is not None:
            return found
    return _post_stage(ea, eb)


def _first_other(mine: list[tuple[int, int, int | None]], theirs: list[tuple[int, int, int | None]]) -> str:
    for seg in mine:
        if seg not in theirs:
            return f"[{seg[0]}:{seg[1]}] {'special ' + str(seg[2]) if seg[2] is not None else 'text'}"
    return "(same segments)"


def _segment_stage(ta: Tokenizer, sa: Segment, sb: Segment) -> StageDiff | None:
    if sa.token_id is not None:
        return None
    where = f"segment [{sa.start}:{sa.end}]"
    if _model_input(sa) != _model_input(sb):
        stage = "normalize" if sa.normalized != sb.normalized else "pre-tokenize"
        return StageDiff(stage, f"{where}: model input A {_model_input(sa)!r} / B {_model_input(sb)!r} "
                                f"(normalized A {sa.normalized!r} / B {sb.normalized!r})")
    words_a = [(p.text, p.start, p.end) for p in sa.pre_tokens]
    words_b = [(p.text, p.start, p.end) for p in sb.pre_tokens]
    if _seg_ids(sa) == _seg_ids(sb):
        return None
    if words_a != words_b:
        crossed = [i for p in sb.pre_tokens for i in (p.ids if p.added is not None else ta.model.tokenize(p.text))]
        if crossed == _seg_ids(sb):
            return StageDiff("pre-tokenize", f"{where}: pre-tokens A {[w[0] for w in words_a]} / "
                                             f"B {[w[0] for w in words_b]} (A's model on B's pre-tokens gives B's ids)")
    pieces_a = [x for p in sa.pre_tokens for x in p.pieces]
    pieces_b = [x for p in sb.pre_tokens for x in p.pieces]
    cut = "" if words_a == words_b else " (the pre-tokens differ too, but A's model on B's pre-tokens still differs)"
    pieces = f"pieces A {pieces_a} / B {pieces_b}{cut}"
    return StageDiff("model", f"{where}: same model input {_model_input(sa)!r}; {pieces}")


def _post_stage(ea: Explanation, eb: Explanation) -> StageDiff | None:
    if ea.ids == eb.ids:
        return None
    if ea.sequence_ids != eb.sequence_ids:
        return StageDiff("model", "the sequences' ids differ")
    return StageDiff("post-process", f"A adds {ea.added_before} … {ea.added_after} / "
                                     f"B adds {eb.added_before} … {eb.added_after}")
