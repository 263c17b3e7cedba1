"""A SentencePiece ``.model`` as a Hugging Face folder whose tokenizer.json gives sentencepiece's ids.

HF tokenizers 0.23.3 on the written ``tokenizer.json`` with ``add_special_tokens=False``
(and with True: no post-processor is written) gives ``SentencePieceProcessor.encode(text)``
of sentencepiece 0.2.3 on the source. The pipeline written, and the sentencepiece rule
each part reproduces (sentencepiece 0.2.3 ``normalizer.cc`` ``Normalizer::Normalize``,
``unigram_model.cc`` ``EncodeOptimized``, ``bpe_model.cc`` ``SampleEncode``,
``sentencepiece_processor.cc`` ``PopulateSentencePieceText``):

* normalizer: ``Precompiled`` (the charsmap, when not empty); with
  ``remove_extra_whitespaces``, a ``Replace`` deleting spaces at either end and one
  folding each run of spaces to one (sentencepiece tests the normalized text for
  U+0020 alone, not for other whitespace, so ``Strip`` would remove too much); with
  ``add_dummy_prefix``, ``Prepend("▁")`` (unconditional on a non-empty text, where
  ``Metaspace`` adds none before a text that starts with "▁": the
  ``metaspace-leading-space`` difference); with ``escape_whitespaces``,
  ``Replace(" ", "▁")``;
* no pre-tokenizer: sentencepiece encodes the normalized text as one string;
* BPE: the vocabulary as is, and for every NORMAL piece every split into two pieces that
  can be symbols as a merge, the merges ordered by the piece's score (best first; ties by
  id): sentencepiece merges the adjacent pair whose concatenation scores best, HF the pair
  of lowest rank. CONTROL, UNKNOWN and BYTE pieces are left out of the merges
  (sentencepiece never makes them by merging), so their spellings in the text stay text.
  ``fuse_unk`` (sentencepiece joins a run of unknown pieces) and ``byte_fallback``;
* Unigram: the scores as read; CONTROL, UNKNOWN, BYTE and UNUSED pieces, which
  sentencepiece never matches in the text but HF's trie would, get a score below any path
  they could replace (only where every character they hold is a NORMAL piece, and no
  piece holds a character that is not: then the unknown score HF derives from the lowest
  score of the whole vocabulary is paid by every path alike);
* no post-processor: ``sp.encode`` adds no BOS/EOS (the same choice as a folder whose
  tokenizer class adds none; transformers' LlamaConverter writes a ``<s> $A`` template
  because LlamaTokenizer adds BOS, which sentencepiece's encode does not);
* decoder: "▁" to space, byte pieces to bytes, joined, and the dummy prefix's space
  stripped (transformers' LlamaConverter decoder); ``unk_surface`` is not reproduced.

The CONTROL and UNKNOWN pieces are not written as added tokens: HF would then cut their
spellings out of any text, which ``sp.encode`` never does; tokenizer_config.json and
special_tokens_map.json name them as the unk/bos/eos/pad tokens.

Refused (`ConversionRefused`, each reason named after `polytok.parity.reasons` where one
applies): user-defined symbols (sentencepiece matches them inside the normalized text,
an HF added token is cut out before normalization, so the dummy prefix and spaces around
it differ), ``treat_whitespace_as_suffix`` (no HF normalizer appends), UNUSED pieces in a
BPE model (sentencepiece re-splits them), a piece holding a character that is no piece of
its own (HF cannot make a symbol of it), BPE pieces sharing a score whose merges compete
(sentencepiece takes the leftmost pair of equal score, HF the pair of lower rank: the
``spm-space-runs`` difference), a Unigram model whose reserved pieces cannot be kept out of
HF's matches, and WORD and CHAR models.
"""

from __future__ import annotations

import base64
import json
import os
from pathlib import Path
from typing import Any

from ..formats.compressed import read_bytes
from ..formats.sentencepiece import CONTROL, NORMAL, UNKNOWN, UNUSED, USER_DEFINED, ModelProto, read_model_proto
from .outcome import ConversionRefused, Written

__all__ = ["write_hf_from_model", "tokenizer_json_of"]

_SPACE = "\u2581"


def write_hf_from_model(source: str, out_dir: str) -> Written:
    """Write the ``.model`` at `source` as a Hugging Face folder at `out_dir` (created if needed).

    Raises:
        ConversionRefused: the model has a behaviour tokenizer.json cannot express (each reason named).
        FormatError: `source` is not a model sentencepiece loads.
    """
    proto = read_model_proto(read_bytes(Path(source)), source).materialize()
    document, notes = tokenizer_json_of(proto)
    os.makedirs(out_dir, exist_ok=True)
    files = []
    for name, content in (("tokenizer.json", document), ("tokenizer_config.json", _config(proto)),
                          ("special_tokens_map.json", _special_tokens_map(proto))):
        path = os.path.join(out_dir, name)
        with open(path, "w", encoding="utf-8") as f:
            f.write(json.dumps(content, ensure_ascii=False, indent=2 if name != "tokenizer.json" else None) + "\n")
        files.append(path)
    return Written("hf", out_dir, files, notes=notes)


def tokenizer_json_of(proto: ModelProto) -> tuple[dict[str, Any], list[str]]:
    """The tokenizer.json of `proto` and the notes on what was chosen; refuses what it cannot express."""
    reasons = _refusals(proto)
    model_type = proto.model_type
    if model_type == "bpe":
        model, model_reasons = _bpe(proto)
    elif model_type == "unigram":
        model, model_reasons = _unigram(proto)
    else:
        model, model_reasons = {}, [f"model type {model_type.upper()}: HF tokenizers has no model that splits "
                                    "as sentencepiece's WORD and CHAR models do"]
    reasons += model_reasons
    if reasons:
        raise ConversionRefused(proto.file, "hf", reasons)
    document: dict[str, Any] = {
        "version": "1.0", "truncation": None, "padding": None, "added_tokens": [],
        "normalizer": _normalizer(proto), "pre_tokenizer": None, "model": model,
        "post_processor": None, "decoder": _decoder(proto),
    }
    notes = ["no post-processor: sentencepiece's encode adds no BOS/EOS"]
    if proto.normalizer("precompiled_charsmap"):
        notes.append("unicode-normalization: HF applies the charsmap per grapheme cluster with the shortest matching "
                     "key, sentencepiece with the longest: a combining sequence the charsmap maps may normalize "
                     "differently")
    notes.append("CONTROL and UNKNOWN pieces are vocabulary entries, not added tokens: their spellings in a text "
                 "are text, as sentencepiece reads them")
    return document, notes


def _refusals(proto: ModelProto) -> list[str]:
    reasons = []
    user_defined = [p for p, t in zip(proto.pieces, proto.types, strict=True) if t == USER_DEFINED]
    if user_defined:
        reasons.append(f"user-defined symbols {_sample(user_defined)}: sentencepiece matches them inside the "
                       "normalized text, after its dummy prefix ('[REF]' -> '▁', '[REF]'); an HF added token is cut "
                       "out before normalization (each text around it then gets its own prefix), or, normalized, "
                       "is matched as the normalizer's output of its text (which takes the prefix in: '▁[REF]')")
    if proto.trainer("treat_whitespace_as_suffix", False):
        reasons.append("treat_whitespace_as_suffix: sentencepiece puts '▁' after each word and a dummy suffix at "
                       "the end; no HF normalizer appends")
    vocab = set(proto.pieces)
    holders = {c for p, t in zip(proto.pieces, proto.types, strict=True) if t == NORMAL for c in p}
    singles = {p for p, t in zip(proto.pieces, proto.types, strict=True) if t == NORMAL and len(p) == 1}
    lone = sorted(holders - singles)
    if lone:
        reasons.append(f"unknown-token: the characters {_sample(lone)} are in pieces but are no NORMAL piece "
                       "of their own: sentencepiece starts from them as symbols, HF makes them unknown"
                       + (" (or a piece of another type)" if set(lone) & vocab else ""))
    return reasons


def _sample(items: list[str], n: int = 5) -> str:
    shown = ", ".join(repr(x) for x in items[:n])
    return f"[{shown}{', …' if len(items) > n else ''}] ({len(items)})"


def _unk_piece(proto: ModelProto) -> str | None:
    for piece, kind in zip(proto.pieces, proto.types, strict=True):
        if kind == UNKNOWN:
            return piece
    return None


def _bpe(proto: ModelProto) -> tuple[dict[str, Any], list[str]]:
    pieces, scores, types = proto.pieces, proto.scores, proto.types
    reasons = []
    unused = [p for p, t in zip(pieces, types, strict=True) if t == UNUSED]
    if unused:
        reasons.append(f"UNUSED pieces {_sample(unused)}: sentencepiece's BPE merges through them and re-splits "
                       "the result (bpe_model.cc resegment); HF BPE has no such rule")
    ids = {p: i for i, p in enumerate(pieces)}
    # a user-defined symbol is frozen (bpe_model.cc): never merged with a neighbour
    symbols = {p for p, t in zip(pieces, types, strict=True) if t in (NORMAL, UNUSED)}
    merges: list[tuple[float, int, int, str, str]] = []
    for i, (piece, score, kind) in enumerate(zip(pieces, scores, types, strict=True)):
        if kind != NORMAL or len(piece) < 2:
            continue
        for cut in range(1, len(piece)):
            left, right = piece[:cut], piece[cut:]
            if left in symbols and right in symbols:
                merges.append((-score, i, cut, left, right))
    merges.sort()
    reasons += _tied_merges(merges, ids)
    model = {"type": "BPE", "dropout": None, "unk_token": _unk_piece(proto), "continuing_subword_prefix": None,
             "end_of_word_suffix": None, "fuse_unk": True, "byte_fallback": bool(proto.trainer("byte_fallback", False)),
             "ignore_merges": False, "vocab": ids, "merges": [[left, right] for *_, left, right in merges]}
    return model, reasons


def _tied_merges(merges: list[tuple[float, int, int, str, str]], ids: dict[str, int]) -> list[str]:
    """A reason when pieces of equal score merge differently under HF's ranks.

    Sentencepiece takes, among adjacent pairs of equal score, the leftmost; HF BPE the pair
    of lower rank. For each score shared by two or more pieces, every text made of one to
    three of those pieces is merged both ways (`_merge_by_score`, `_merge_by_rank`, from
    single characters); a text that ends differently is a reason.
    """
    by_score: dict[float, set[str]] = {}
    for negative, _, _, left, right in merges:
        by_score.setdefault(negative, set()).add(left + right)
    tied = {negative: sorted(made, key=ids.__getitem__) for negative, made in by_score.items() if len(made) > 1}
    if not tied:
        return []
    score_of = {left + right: -negative for negative, _, _, left, right in merges}
    rank_of: dict[tuple[str, str], int] = {}
    for rank, (_, _, _, left, right) in enumerate(merges):
        rank_of.setdefault((left, right), rank)
    for group in tied.values():
        for text in _tie_texts(group):
            if _merge_by_score(list(text), score_of) != _merge_by_rank(list(text), rank_of):
                return [f"spm-space-runs: the pieces {_sample(group)} share a score, and {text!r} merges "
                        "differently: sentencepiece merges the leftmost pair of equal score, HF BPE the pair of "
                        "lower rank"]
    return []


def _tie_texts(group: list[str]) -> list[str]:
    """Texts where pieces of `group` meet: each piece, each two side by side or overlapping (a suffix of one
    the prefix of the other), and the first three-piece concatenations."""
    texts = dict.fromkeys(group)
    for a in group:
        for b in group:
            texts[a + b] = None
            for k in range(1, min(len(a), len(b))):
                if a[-k:] == b[:k]:
                    texts[a + b[k:]] = None
    for a in group[:12]:
        for b in group[:12]:
            for c in group[:12]:
                texts[a + b + c] = None
    return list(texts)


def _merge_by_score(symbols: list[str], score_of: dict[str, float]) -> list[str]:
    """Sentencepiece's BPE (bpe_model.cc): the best-scoring adjacent pair, leftmost of equals, until none."""
    while True:
        best = None
        for i in range(len(symbols) - 1):
            score = score_of.get(symbols[i] + symbols[i + 1])
            if score is not None and (best is None or score > best[0]):
                best = (score, i)
        if best is None:
            return symbols
        i = best[1]
        symbols[i:i + 2] = [symbols[i] + symbols[i + 1]]


def _merge_by_rank(symbols: list[str], rank_of: dict[tuple[str, str], int]) -> list[str]:
    """HF BPE: the adjacent pair of lowest rank, leftmost of equals, until none."""
    while True:
        best = None
        for i in range(len(symbols) - 1):
            rank = rank_of.get((symbols[i], symbols[i + 1]))
            if rank is not None and (best is None or rank < best[0]):
                best = (rank, i)
        if best is None:
            return symbols
        i = best[1]
        symbols[i:i + 2] = [symbols[i] + symbols[i + 1]]


def _unigram(proto: ModelProto) -> tuple[dict[str, Any], list[str]]:
    pieces, scores, types = proto.pieces, list(proto.scores), proto.types
    normal = [s for s, t in zip(scores, types, strict=True) if t == NORMAL]
    singles = {p for p, t in zip(pieces, types, strict=True) if t == NORMAL and len(p) == 1}
    reserved = [i for i, t in enumerate(types) if t != NORMAL]
    unmatchable = [pieces[i] for i in reserved if any(c not in singles for c in pieces[i])]
    reasons = []
    if unmatchable:
        reasons.append(f"marker-parsed-one-side: the pieces {_sample(unmatchable)} (CONTROL, UNKNOWN, BYTE or "
                       "UNUSED) are never matched in a text by sentencepiece, but HF's Unigram matches every "
                       "vocabulary entry, and these hold characters that are no piece of their own, so no score "
                       "keeps HF from choosing them")
    if reserved and normal:
        floor = min(min(normal), -1.0)
        longest = max(len(pieces[i]) for i in reserved)
        below = floor * (longest + 1) - 10.0  # worse than any path of single characters over the same span
        for i in reserved:
            scores[i] = below
    unk = next((i for i, t in enumerate(types) if t == UNKNOWN), None)
    model = {"type": "Unigram", "unk_id": unk, "vocab": [[p, float(s)] for p, s in zip(pieces, scores, strict=True)],
             "byte_fallback": bool(proto.trainer("byte_fallback", False))}
    return model, reasons


def _normalizer(proto: ModelProto) -> dict[str, Any] | None:
    steps: list[dict[str, Any]] = []
    charsmap = proto.normalizer("precompiled_charsmap")
    if charsmap:
        steps.append({"type": "Precompiled", "precompiled_charsmap": base64.b64encode(charsmap).decode("ascii")})
    if proto.normalizer("remove_extra_whitespaces"):
        steps.append({"type": "Replace", "pattern": {"Regex": r"\A +| +\z"}, "content": ""})
        steps.append({"type": "Replace", "pattern": {"Regex": " {2,}"}, "content": " "})
    escape = proto.normalizer("escape_whitespaces")
    if proto.normalizer("add_dummy_prefix"):
        steps.append({"type": "Prepend", "prepend": _SPACE if escape else " "})
    if escape:
        steps.append({"type": "Replace", "pattern": {"String": " "}, "content": _SPACE})
    if not steps:
        return None
    return steps[0] if len(steps) == 1 else {"type": "Sequence", "normalizers": steps}


def _decoder(proto: ModelProto) -> dict[str, Any]:
    steps: list[dict[str, Any]] = []
    if proto.normalizer("escape_whitespaces"):
        steps.append({"type": "Replace", "pattern": {"String": _SPACE}, "content": " "})
    steps += [{"type": "ByteFallback"}, {"type": "Fuse"}]
    if proto.normalizer("add_dummy_prefix"):
        steps.append({"type": "Strip", "content": " ", "start": 1, "stop": 0})
    return {"type": "Sequence", "decoders": steps}


def _special_tokens(proto: ModelProto) -> dict[str, str]:
    out = {}
    for name, default in (("unk", 0), ("bos", 1), ("eos", 2), ("pad", -1)):
        index = proto.trainer(f"{name}_id", default)
        if 0 <= index < len(proto.pieces) and proto.types[index] in (CONTROL, UNKNOWN):
            out[f"{name}_token"] = proto.pieces[index]
    return out


def _config(proto: ModelProto) -> dict[str, Any]:
    return {"tokenizer_class": "PreTrainedTokenizerFast", "add_bos_token": False, "add_eos_token": False,
            "clean_up_tokenization_spaces": False, **_special_tokens(proto)}


def _special_tokens_map(proto: ModelProto) -> dict[str, str]:
    return _special_tokens(proto)

