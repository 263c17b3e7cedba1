"""What sentencepiece's trainers share before training: meta pieces, sentences, required characters.

Reproduces sentencepiece 0.2.3 src/trainer_interface.cc: ``InitMetaPieces``
(unknown, bos, eos and pad at their ids; control, user-defined and byte pieces
in the first free ids, in that order), ``LoadSentences`` and
``SplitSentencesByWhitespace``:

* a sentence is skipped when empty, longer than ``max_sentence_length`` UTF-8
  bytes, or holding ``"▅"``; ``input_sentence_size`` keeps the first N (with
  ``shuffle_input_sentence`` sentencepiece samples with its own random
  generator, which is not reproduced: more than N sentences then raise);
* each is normalized, then every meta piece in it (longest match), and then
  every ``pretokenization_delimiter``, becomes the boundary U+001F; the
  sentences left empty are dropped by moving the last sentence into their place;
* characters are counted; in descending order of (required, count), then code
  point, characters are taken while the share counted so far, as a float32, is
  below ``character_coverage`` as a float32: those are the required characters,
  every other character becomes ``"▅"`` (the boundary too; it is never required);
* with ``split_by_whitespace`` the sentences become their words (for BPE at
  once, for Unigram after the seed pieces)
  (`split_into_words`) with summed counts, sorted by count descending, then
  bytes (`split_sentences`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from .sentencepiece_f32 import f32
from .sentencepiece_normalize import charsmap, trainer_normalizer
from .sentencepiece_options import TrainOptions
from .sentencepiece_pieces import BOUNDARY, UNK_CHAR, split_into_words

__all__ = ["MetaPiece", "meta_pieces", "Corpus", "load_corpus", "split_sentences", "UNKNOWN", "CONTROL",
           "USER_DEFINED", "BYTE", "NORMAL"]

NORMAL, UNKNOWN, CONTROL, USER_DEFINED, BYTE = 1, 2, 3, 4, 6

@dataclass(frozen=True)
class MetaPiece:
    piece: str
    type: int


def meta_pieces(options: TrainOptions) -> dict[int, MetaPiece]:
    """``InitMetaPieces``: id -> piece for every non-NORMAL piece.

    Raises:
        ValueError: an id out of range or taken twice, no unknown piece without
            byte_fallback, a duplicated symbol, the unknown piece among the symbols.
    """
    metas: dict[int, MetaPiece] = {}
    vocab_size = options["vocab_size"]
    unk_piece = options["unk_piece"]
    has_unk = False
    for name in ("unk", "bos", "eos", "pad"):
        index, piece = options[f"{name}_id"], options[f"{name}_piece"]
        if index < 0:
            continue
        if index >= vocab_size or index in metas or (has_unk and piece == unk_piece):
            raise ValueError(f"option {name}_id: {index} is out of the vocabulary or already taken")
        has_unk = has_unk or piece == unk_piece
        metas[index] = MetaPiece(piece, UNKNOWN if piece == unk_piece else CONTROL)
    if not options["byte_fallback"] and not has_unk:
        raise ValueError(f"option unk_id: {unk_piece} must be defined (unless byte_fallback)")
    seen: set[str] = set()
    next_id = 0
    specials = {options[f"{name}_piece"]: options[f"{name}_id"] for name in ("bos", "eos", "pad")}

    def insert(piece: str, kind: int, option: str) -> None:
        nonlocal next_id
        if piece in seen:
            raise ValueError(f"option {option}: {piece!r} is already defined; duplicated symbols are not allowed")
        seen.add(piece)
        if piece == unk_piece:
            raise ValueError(f"option {option}: {unk_piece!r} must not be defined with "
                             "control_symbols and user_defined_symbols")
        if specials.get(piece, -1) >= 0:
            metas[specials[piece]] = MetaPiece(piece, kind)
            return
        while next_id in metas:
            next_id += 1
        metas[next_id] = MetaPiece(piece, kind)

    for piece in options["control_symbols"]:
        insert(piece, CONTROL, "control_symbols")
    for piece in options["user_defined_symbols"]:
        insert(piece, USER_DEFINED, "user_defined_symbols")
    if options["byte_fallback"]:
        for byte in range(256):
            insert(f"<0x{byte:02X}>", BYTE, "byte_fallback")
    return metas


@dataclass
class Corpus:
    """Normalized sentences (or words) with counts, and the required characters with theirs."""

    sentences: list[tuple[str, int]]
    required_chars: dict[str, int]

    def required_sorted(self) -> list[tuple[str, int]]:
        """``Sorted(required_chars_)``: count descending, then code point."""
        return sorted(self.required_chars.items(), key=lambda item: (-item[1], item[0]))


def _read(texts: Iterable[str], options: TrainOptions) -> list[str]:
    limit = options["input_sentence_size"]
    max_bytes = options["max_sentence_length"]
    kept: list[str] = []
    total = 0
    for index, text in enumerate(texts):
        if not isinstance(text, str):
            raise ValueError(f"texts[{index}]: expected str, got {type(text).__name__}")
        try:
            size = len(text.encode("utf-8"))
        except UnicodeEncodeError as exc:
            raise ValueError(f"texts[{index}]: a lone surrogate at offset {exc.start} is not UTF-8") from None
        if size == 0 or size > max_bytes or UNK_CHAR in text:
            continue
        total += 1
        if limit > 0 and options["shuffle_input_sentence"] and total > limit:
            raise ValueError(f"option input_sentence_size: more than {limit} sentences with "
                             "shuffle_input_sentence=true (sentencepiece samples them with its own random "
                             "generator, which is not reproduced); pass shuffle_input_sentence=False or "
                             "input_sentence_size=0")
        kept.append(text)
        if limit > 0 and not options["shuffle_input_sentence"] and len(kept) >= limit:
            break
    return kept


def _replace_meta(text: str, metas: list[str], first_chars: set[str]) -> str:
    """``PrefixMatcher::GlobalReplace(text, "\\x1f")`` over the meta pieces: longest match first."""
    if not metas or not first_chars.intersection(text):
        return text
    out: list[str] = []
    pos = 0
    while pos < len(text):
        best = 0
        if text[pos] in first_chars:
            for piece in metas:
                if len(piece) > best and text.startswith(piece, pos):
                    best = len(piece)
        if best:
            out.append(BOUNDARY)
            pos += best
        else:
            out.append(text[pos])
            pos += 1
    return "".join(out)


def load_corpus(texts: Iterable[str], options: TrainOptions, metas: dict[int, MetaPiece], *,
                split: bool = True) -> Corpus:
    """``LoadSentences``, then ``SplitSentencesByWhitespace`` with `split` and split_by_whitespace.

    Raises:
        ValueError: no sentence left, a normalized space, or fewer vocabulary slots than
            required characters and meta pieces.
    """
    normalizer = trainer_normalizer(
        charsmap(options["normalization_rule_name"]), add_dummy_prefix=options["add_dummy_prefix"],
        remove_extra_whitespaces=options["remove_extra_whitespaces"],
        escape_whitespaces=options["escape_whitespaces"],
        treat_whitespace_as_suffix=options["treat_whitespace_as_suffix"])
    meta_texts = sorted({meta.piece for meta in metas.values()}, key=len, reverse=True)
    first_chars = {piece[0] for piece in meta_texts}
    delimiter = options["pretokenization_delimiter"]
    sentences = [(_replace_meta(normalizer.normalize(text), meta_texts, first_chars), 1)
                 for text in _read(texts, options)]
    if delimiter:
        sentences = [(text.replace(delimiter, BOUNDARY), freq) for text, freq in sentences]
    if not sentences:
        raise ValueError("texts: no sentence to train on")
    at = 0
    while at < len(sentences):
        if " " in sentences[at][0]:
            raise ValueError("texts: a normalized sentence holds a space")
        if not sentences[at][0]:
            sentences[at] = sentences[-1]
            sentences.pop()
        else:
            at += 1

    counts: dict[str, list[int]] = {}
    for char in options["required_chars"]:
        if char != "\0":
            counts.setdefault(char, [1, 0])[0] = 1
    all_count = 0
    for text, freq in sentences:
        for char in text:
            if char == "\0":
                continue
            entry = counts.get(char)
            if entry is None:
                counts[char] = [0, freq]
            else:
                entry[1] += freq
            all_count += freq
    if all_count <= 0:
        raise ValueError("texts: no character to train on")
    coverage_limit = f32(options["character_coverage"])
    required: dict[str, int] = {}
    accumulated = 0
    for char, (_, count) in sorted(counts.items(), key=lambda item: (-item[1][0], -item[1][1], item[0])):
        if f32(accumulated / all_count) >= coverage_limit:
            break
        accumulated += count
        if char == BOUNDARY:
            continue
        required[char] = count
    if UNK_CHAR in required:
        raise ValueError("texts: the unknown mark U+2585 is a required character")
    sentences = [(text if all(char in required for char in text)
                  else "".join(char if char in required else UNK_CHAR for char in text), freq)
                 for text, freq in sentences]
    if len(required) + len(metas) > options["vocab_size"]:
        raise ValueError(f"option vocab_size: {options['vocab_size']} is smaller than the required characters "
                         f"and meta pieces ({len(required) + len(metas)}); increase vocab_size or decrease "
                         "character_coverage")
    if split and options["split_by_whitespace"]:
        sentences = split_sentences(sentences, options)
    return Corpus(sentences, required)


def split_sentences(sentences: list[tuple[str, int]], options: TrainOptions) -> list[tuple[str, int]]:
    """``SplitSentencesByWhitespace``: the words with summed counts, count descending, then bytes."""
    words: dict[str, int] = {}
    for text, freq in sentences:
        for word in split_into_words(text, options["treat_whitespace_as_suffix"],
                                     options["allow_whitespace_only_pieces"]):
            words[word] = words.get(word, 0) + freq
    return sorted(words.items(), key=lambda item: (-item[1], item[0]))
