"""A Hugging Face tokenizer.json as a SentencePiece ``.model`` giving HF's ids in sentencepiece.

Sentencepiece 0.2.3's ``encode(text)`` on the written model gives HF tokenizers 0.23.3's
``encode(text, add_special_tokens=False)`` on the source, for the tokenizer.json files a
``.model`` can express: a Unigram or BPE model over one normalized string, whose
normalizer is (in this order, each optional) ``Precompiled``, the two ``Replace`` steps
deleting spaces at the ends and folding runs of spaces (sentencepiece's
``remove_extra_whitespaces``), ``Prepend`` (``add_dummy_prefix``) and ``Replace(" ",
"▁")`` (``escape_whitespaces``), with no pre-tokenizer (or a ``Split`` on a string the
normalizer has already replaced everywhere, as Gemma's). What `polytok.convert.spm_to_hf`
writes is of this shape, and so is transformers' LlamaConverter output.

The model (sentencepiece 0.2.3 ``bpe_model.cc``, ``unigram_model.cc``):

* BPE: sentencepiece merges the adjacent pair whose concatenation has the best score,
  the leftmost of equals; HF the pair of lowest merge rank. Each piece's score is minus
  the rank of the first merge that makes it, which gives the same order when every pair
  of pieces whose concatenation is a piece is a merge (sentencepiece merges any such
  pair) and the merges making one piece are consecutive; anything else is refused.
  Sentencepiece joins a run of unknown pieces, HF BPE only with ``fuse_unk``.
* Unigram: the scores as written (sentencepiece keeps them as float32, so a near tie of
  two paths may fall the other way).
* Piece types: the unknown token UNKNOWN, ``<0xHH>`` BYTE (with ``byte_fallback``),
  special added tokens CONTROL, the rest NORMAL.

Differences kept, named in `Written.notes`: sentencepiece's ``encode`` reads a special
token's spelling in the text as text (its CONTROL pieces), where HF cuts it out
(``marker-parsed-one-side``); a charsmap is applied by HF per grapheme cluster with the
shortest matching key, by sentencepiece with the longest (``unicode-normalization``); the
post-processor's BOS/EOS are not part of a ``.model``.

Refused (`ConversionRefused`, each reason named): other models, normalizers and
pre-tokenizers (``unicode-normalization`` for Unicode forms, lowercasing and accent
stripping; ``metaspace-leading-space`` for a Metaspace pre-tokenizer, which adds no "▁"
before a text that starts with one), non-special added tokens (sentencepiece's
user-defined symbols are matched inside the normalized text, HF cuts added tokens out
before normalization), added tokens outside the vocabulary's id range or with gaps, BPE
merges that scores cannot order, and incomplete byte fallback.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..errors import FormatError
from ..formats.compressed import read_bytes
from ..formats.hf_json import sequence_steps
from ..formats.sentencepiece import BYTE, CONTROL, NORMAL, UNKNOWN, as_float32
from ..formats.sentencepiece_writer import model_bytes
from .outcome import ConversionRefused, Written

__all__ = ["write_model_from_hf", "model_of"]

_SPACE = "\u2581"
_BYTE_PIECE = re.compile(r"<0x[0-9A-F]{2}>")
_STRIP_ENDS = r"\A +| +\z"
_FOLD_RUNS = " {2,}"
_UNICODE_FORMS = {"NFC", "NFD", "NFKC", "NFKD", "Lowercase", "StripAccents", "BertNormalizer", "Nmt"}


def write_model_from_hf(source: str, out_path: str) -> Written:
    """Write the tokenizer.json at `source` (a file, or a folder holding one) as a ``.model`` at `out_path`.

    Raises:
        ConversionRefused: the tokenizer has a behaviour a ``.model`` cannot express (each reason named).
        FormatError: `source` is no readable tokenizer.json.
    """
    path = _tokenizer_json(Path(source))
    try:
        document = json.loads(read_bytes(path))
    except (ValueError, UnicodeDecodeError) as exc:
        raise FormatError(f"not a JSON document: {exc}", file=str(path)) from None
    if not isinstance(document, dict):
        raise FormatError("tokenizer.json is not a JSON object", file=str(path))
    data, notes = model_of(document, str(path))
    with open(out_path, "wb") as f:
        f.write(data)
    return Written("sentencepiece", out_path, [out_path], notes=notes)


def _tokenizer_json(source: Path) -> Path:
    if source.is_dir():
        for name in ("tokenizer.json", "tokenizer.json.gz"):
            if (source / name).is_file():
                return source / name
        raise FormatError("the folder holds no tokenizer.json", file=str(source))
    return source


def model_of(document: Mapping[str, Any], file: str) -> tuple[bytes, list[str]]:
    """The ``.model`` bytes of the tokenizer.json `document` and the notes; refuses what it cannot express."""
    reasons: list[str] = []
    notes: list[str] = []
    normalizer_spec = _normalizer_spec(document.get("normalizer"), document.get("pre_tokenizer"), reasons, notes)
    model = document.get("model")
    if not isinstance(model, dict) or model.get("type", "BPE" if isinstance(model, dict) and "merges" in model
                                                 else None) not in ("BPE", "Unigram"):
        kind = model.get("type") if isinstance(model, dict) else None
        raise ConversionRefused(file, "sentencepiece", reasons + [
            f"model {kind}: a .model holds a Unigram or BPE model only"])
    if "merges" in model and model.get("type", "BPE") == "BPE":
        pieces, scores, byte_fallback, unk = _bpe(model, reasons)
        model_type = 2
    else:
        pieces, scores, byte_fallback, unk = _unigram(model, reasons)
        model_type = 1
    types = _types(document, pieces, unk, byte_fallback, reasons, notes)
    scores += [0.0] * (len(pieces) - len(scores))  # added tokens after the model's vocabulary
    if len(set(pieces)) != len(pieces):
        counts = Counter(pieces)
        twice = [p for p, n in counts.items() if n > 1]
        reasons.append(f"the texts {_sample(twice)} are held by two ids: a .model's pieces are unique")
    if model_type == 2:
        made_by_merges = _made_by_merges(model)
        made = [p for p, t in zip(pieces, types, strict=True) if t != NORMAL and p in made_by_merges]
        if made:
            reasons.append(f"merges make the non-NORMAL pieces {_sample(made)}, which sentencepiece never merges into")
        _unreachable_as_control(pieces, types, made_by_merges, notes)
        _missing_merges(model, pieces, types, reasons)
    else:
        _unknown_score(pieces, scores, types, reasons)
        if any(as_float32(score) != score for score in scores):
            notes.append("the Unigram scores are rounded to float32 (a .model's type): a near tie of two paths may "
                         "fall the other way")
    if reasons:
        raise ConversionRefused(file, "sentencepiece", list(dict.fromkeys(reasons)))
    trainer: dict[str, Any] = {"model_type": model_type, "vocab_size": len(pieces), "byte_fallback": byte_fallback}
    if unk is not None:
        trainer["unk_id"], trainer["unk_piece"] = unk, pieces[unk]
    for name, spelling in (("bos", "<s>"), ("eos", "</s>"), ("pad", "<pad>")):
        index = _find(pieces, types, spelling)
        trainer[f"{name}_id"] = index
        if index >= 0:
            trainer[f"{name}_piece"] = spelling
    if document.get("post_processor") is not None:
        notes.append("the post-processor (BOS/EOS around a text) is not part of a .model: sentencepiece's encode "
                     "adds nothing unless asked (add_bos/add_eos)")
    data = model_bytes(list(zip(pieces, scores, types, strict=True)), trainer_spec=trainer,
                       normalizer_spec=normalizer_spec)
    return data, notes


def _find(pieces: list[str], types: list[int], spelling: str) -> int:
    for i, (piece, kind) in enumerate(zip(pieces, types, strict=True)):
        if piece == spelling and kind == CONTROL:
            return i
    return -1


def _normalizer_spec(normalizer: Any, pre_tokenizer: Any, reasons: list[str], notes: list[str]) -> dict[str, Any]:
    steps = sequence_steps(normalizer, "normalizers")
    charsmap = b""
    strip = fold = prepend = escape = False
    prepend_text = None
    position = 0
    for step in steps:
        kind = step.get("type") if isinstance(step, dict) else None
        pattern = step.get("pattern") if isinstance(step, dict) else None
        if kind == "Precompiled" and position == 0:
            try:
                charsmap = base64.b64decode(step.get("precompiled_charsmap") or "", validate=True)
            except (binascii.Error, ValueError, TypeError):
                reasons.append("Precompiled: the charsmap is not valid base64")
            position = 1
        elif kind == "Replace" and pattern == {"Regex": _STRIP_ENDS} and step.get("content") == "" and position <= 1:
            strip, position = True, 2
        elif kind == "Replace" and pattern == {"Regex": _FOLD_RUNS} and step.get("content") == " " and position == 2:
            fold, position = True, 3
        elif kind == "Prepend" and not prepend and position <= 3 + escape:
            prepend, prepend_text = True, step.get("prepend")
            if escape and prepend_text != _SPACE:
                reasons.append(f"Prepend({prepend_text!r}) after the spaces are escaped: sentencepiece's dummy "
                               "prefix is '▁'")
            position = max(position, 4)
        elif kind == "Replace" and pattern == {"String": " "} and step.get("content") == _SPACE and not escape:
            escape, position = True, max(position, 4)
        elif kind in _UNICODE_FORMS:
            reasons.append(f"unicode-normalization: the normalizer {kind} has no sentencepiece equivalent (a .model "
                           "normalizes through a compiled charsmap only, and none is written)")
        else:
            reasons.append(f"the normalizer step {json.dumps(step, ensure_ascii=False)[:120]} (at this place in the "
                           "sequence) has no sentencepiece equivalent")
    if strip != fold:
        reasons.append("whitespace: only one of the two Replace steps of remove_extra_whitespaces is present")
    if prepend and not escape and prepend_text != " ":
        reasons.append(f"Prepend({prepend_text!r}) without escaped spaces: sentencepiece's dummy prefix is then ' '")
    _pre_tokenizer(pre_tokenizer, escape, reasons)
    if charsmap:
        notes.append("unicode-normalization: HF applies the charsmap per grapheme cluster with the shortest matching "
                     "key, sentencepiece with the longest: a combining sequence the charsmap maps may normalize "
                     "differently")
    return {"name": "user_defined" if charsmap else "identity", "precompiled_charsmap": charsmap,
            "add_dummy_prefix": prepend, "remove_extra_whitespaces": strip and fold, "escape_whitespaces": escape}


def _pre_tokenizer(pre_tokenizer: Any, escape: bool, reasons: list[str]) -> None:
    for step in sequence_steps(pre_tokenizer, "pretokenizers"):
        kind = step.get("type") if isinstance(step, dict) else None
        pattern = step.get("pattern") if isinstance(step, dict) else None
        if kind == "Split" and isinstance(pattern, dict) and isinstance(pattern.get("String"), str) and \
                " " in pattern["String"] and escape and not step.get("invert"):
            continue  # the normalizer has replaced every space: the pattern never occurs
        if kind == "Metaspace":
            reasons.append("metaspace-leading-space: a Metaspace pre-tokenizer adds no '▁' before a text that "
                           "already starts with one (or a space), sentencepiece always adds its dummy prefix"
                           + ("; and split=true cuts the text at every '▁'" if step.get("split", True) else ""))
        else:
            reasons.append(f"the pre-tokenizer {kind}: sentencepiece encodes the normalized text as one string")


def _bpe(model: Mapping[str, Any], reasons: list[str]) -> tuple[list[str], list[float], bool, int | None]:
    vocab = model.get("vocab") or {}
    pieces = _pieces_by_id(vocab, reasons)
    for option in ("dropout", "continuing_subword_prefix", "end_of_word_suffix"):
        if model.get(option):
            reasons.append(f"BPE {option}={model[option]!r}: sentencepiece's BPE has no such option")
    if model.get("ignore_merges"):
        reasons.append("BPE ignore_merges: sentencepiece always merges")
    merges = [tuple(m.split(" ", 1)) if isinstance(m, str) else tuple(m) for m in model.get("merges") or []]
    first_rank: dict[str, int] = {}
    ranks_of: dict[str, list[int]] = {}
    for rank, pair in enumerate(merges):
        if len(pair) != 2:
            reasons.append(f"merge {rank} is not a pair")
            break
        left, right = str(pair[0]), str(pair[1])
        made = left + right
        first_rank.setdefault(made, rank)
        ranks_of.setdefault(made, []).append(rank)
    scattered = [p for p, ranks in ranks_of.items() if ranks[-1] - ranks[0] + 1 != len(ranks)]
    if scattered:
        reasons.append(f"BPE merges vs spm BPE scores: the merges making {_sample(scattered)} are not consecutive "
                       "ranks; a .model gives each piece one score")
    present = set(pieces)
    unreachable = [p for p in first_rank if p not in present]
    if unreachable:
        reasons.append(f"merges make {_sample(unreachable)}, which are not in the vocabulary")
    n = len(merges)
    scores = [-float(first_rank[p]) if p in first_rank else -float(n + i) for i, p in enumerate(pieces)]
    unk_token = model.get("unk_token")
    unk = vocab.get(unk_token) if isinstance(unk_token, str) else None
    byte_fallback = bool(model.get("byte_fallback"))
    if not model.get("fuse_unk") and unk is not None and not byte_fallback:
        reasons.append("unknown-token: HF BPE without fuse_unk gives one unknown per character, sentencepiece joins "
                       "a run of unknown pieces")
    return pieces, scores, byte_fallback, unk if isinstance(unk, int) else None


def _made_by_merges(model: Mapping[str, Any]) -> set[str]:
    return {"".join(m.split(" ", 1)) if isinstance(m, str) else "".join(map(str, m)) for m in model.get("merges") or []}


def _unreachable_as_control(pieces: list[str], types: list[int], made: set[str], notes: list[str]) -> None:
    """Pieces HF's BPE never gives (longer than a character, made by no merge) become CONTROL: sentencepiece's
    BPE never merges into a CONTROL piece, and would into a NORMAL one whose halves are pieces."""
    marked = []
    for i, (piece, kind) in enumerate(zip(pieces, types, strict=True)):
        if kind == NORMAL and len(piece) > 1 and piece not in made:
            types[i] = CONTROL
            marked.append(piece)
    if marked:
        notes.append(f"the pieces {_sample(marked)}, which no merge makes (HF never gives them), are CONTROL "
                     "pieces, which sentencepiece never merges into (and decodes as '')")


def _missing_merges(model: Mapping[str, Any], pieces: list[str], types: list[int], reasons: list[str]) -> None:
    """Sentencepiece merges any two adjacent symbols whose concatenation is a NORMAL piece; HF only the merges."""
    merges = {tuple(m.split(" ", 1)) if isinstance(m, str) else tuple(map(str, m)) for m in model.get("merges") or []}
    symbols = {p for p, t in zip(pieces, types, strict=True) if t == NORMAL}
    missing = []
    for piece, kind in zip(pieces, types, strict=True):
        if kind != NORMAL or len(piece) < 2:
            continue
        for cut in range(1, len(piece)):
            left, right = piece[:cut], piece[cut:]
            if (len(left) == 1 or left in symbols) and (len(right) == 1 or right in symbols) and \
                    (left, right) not in merges:
                missing.append(f"{left}+{right}")
    if missing:
        reasons.append(f"BPE merges vs spm BPE scores: {_sample(missing)} are symbols whose concatenation is a "
                       "piece but no merge: sentencepiece would merge them, HF does not")


def _unknown_score(pieces: list[str], scores: list[float], types: list[int], reasons: list[str]) -> None:
    """HF's unknown score is the lowest of all scores less 10, sentencepiece's the lowest NORMAL score's: where
    they differ, it matters only if an unknown character can compete with a piece holding it."""
    normal = [s for s, t in zip(scores, types, strict=True) if t == NORMAL]
    if not normal or min(scores) >= min(normal):
        return
    singles = {p for p, t in zip(pieces, types, strict=True) if t == NORMAL and len(p) == 1}
    lone = sorted({c for p in pieces for c in p} - singles)
    if lone:
        reasons.append(f"unknown-token: a non-NORMAL piece scores below every NORMAL one, so HF's unknown score "
                       f"(lowest of all, less 10) differs from sentencepiece's, and {_sample(lone)} can be unknown "
                       "inside a piece")


def _unigram(model: Mapping[str, Any], reasons: list[str]) -> tuple[list[str], list[float], bool, int | None]:
    entries = model.get("vocab") or []
    pieces, scores = [], []
    for i, entry in enumerate(entries):
        if not isinstance(entry, (list, tuple)) or len(entry) != 2 or not isinstance(entry[0], str) or \
                not isinstance(entry[1], (int, float)):
            reasons.append(f"Unigram vocab[{i}] is not [piece, score]")
            return [], [], False, None
        pieces.append(entry[0])
        scores.append(float(entry[1]))
    unk = model.get("unk_id")
    return pieces, scores, bool(model.get("byte_fallback")), unk if isinstance(unk, int) else None


def _pieces_by_id(vocab: Any, reasons: list[str]) -> list[str]:
    if not isinstance(vocab, dict):
        reasons.append("BPE vocab is not an object")
        return []
    by_id = {i: p for p, i in vocab.items() if isinstance(i, int)}
    if sorted(by_id) != list(range(len(vocab))):
        reasons.append("the BPE vocabulary's ids are not 0..n-1 without gaps")
        return []
    return [by_id[i] for i in range(len(vocab))]


def _types(document: Mapping[str, Any], pieces: list[str], unk: int | None, byte_fallback: bool,
           reasons: list[str], notes: list[str]) -> list[int]:
    types = [NORMAL] * len(pieces)
    special: list[str] = []
    plain: list[str] = []
    for token in document.get("added_tokens") or []:
        index, content = token.get("id"), token.get("content")
        if not isinstance(index, int) or not isinstance(content, str):
            reasons.append(f"added token {token!r} has no id or content")
            continue
        if index == len(pieces):
            pieces.append(content)
            types.append(NORMAL)
        if not 0 <= index < len(pieces) or pieces[index] != content:
            reasons.append(f"added token {content!r} (id {index}) is outside the vocabulary or redefines id "
                           f"{index}: a .model's pieces are numbered 0..n-1")
            continue
        if not token.get("special"):
            if index != unk:
                plain.append(content)
            continue
        if index != unk:
            types[index] = CONTROL
        special.append(content)
    if unk is None or not 0 <= unk < len(pieces):
        if not byte_fallback:
            reasons.append("unknown-token: no unknown token, which sentencepiece requires without byte fallback")
    else:
        types[unk] = UNKNOWN
    if byte_fallback:
        found = [i for i, p in enumerate(pieces) if _BYTE_PIECE.fullmatch(p) and types[i] == NORMAL]
        if len(found) != 256:
            reasons.append(f"byte fallback with {len(found)} of the 256 <0xHH> pieces: sentencepiece needs all")
        for i in found:
            types[i] = BYTE
    if plain:
        reasons.append(f"user-defined symbols vs added tokens: {_sample(plain)} are non-special added tokens; HF "
                       "cuts them out of the text before normalization (or, normalized, matches the normalizer's "
                       "output of their text), sentencepiece (as user-defined symbols) matches them inside the "
                       "normalized text, so the '▁' around them differ")
    if special:
        notes.append(f"marker-parsed-one-side: the special tokens {_sample(special)} are CONTROL (or UNKNOWN) "
                     "pieces: sentencepiece's encode reads their spellings in a text as text, HF cuts them out")
    return types


def _sample(items: list[str], n: int = 5) -> str:
    shown = ", ".join(repr(x) for x in items[:n])
    return f"[{shown}{', …' if len(items) > n else ''}] ({len(items)})"

