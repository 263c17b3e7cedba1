"""SentencePiece's trainers in pure Python: a ``.model`` as ``spm_train`` writes it.

`train_sentencepiece(texts, **options)` takes spm_train's options by their flag
names (`sentencepiece_options`) and returns the serialized ``ModelProto``.
``model_type="bpe"`` runs `sentencepiece_bpe`, ``"unigram"`` runs
`sentencepiece_unigram`; both start from `sentencepiece_corpus` (meta pieces,
normalization, required characters).

The model is put together as sentencepiece 0.2.3's ``TrainerInterface::Serialize``
(src/trainer_interface.cc) does: ids 0 .. vocab_size-1 take the meta piece at
that id, else the next trained piece; meta pieces score 0. With
``hard_vocab_limit`` (the default) the vocabulary must fill vocab_size exactly,
otherwise vocab_size is recorded as the size reached. The ``trainer_spec`` holds
the options given (as spm_train records them), the ``normalizer_spec`` the rule's
name and charsmap and the normalizer options given.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..formats.sentencepiece_writer import model_bytes
from .sentencepiece_bpe import train_bpe
from .sentencepiece_corpus import NORMAL, load_corpus, meta_pieces
from .sentencepiece_normalize import charsmap
from .sentencepiece_options import parse_options
from .sentencepiece_pieces import PieceRules
from .sentencepiece_unigram import train_unigram

__all__ = ["train_sentencepiece", "train_pieces"]


def train_pieces(texts: Iterable[str], **options: Any) -> tuple[list[tuple[str, float, int]], dict[str, Any],
                                                                 dict[str, Any]]:
    """The model's ``(piece, score, type)`` per id and its trainer and normalizer specs.

    Raises:
        ValueError: as `train_sentencepiece`.
    """
    if isinstance(texts, (str, bytes)):
        raise ValueError("texts: expected an iterable of sentences, got a single "
                         f"{type(texts).__name__} (wrap it in a list)")
    parsed = parse_options(options)
    metas = meta_pieces(parsed)
    unigram = parsed["model_type"] == "unigram"
    corpus = load_corpus(texts, parsed, metas, split=not unigram)
    rules = PieceRules(
        max_sentencepiece_length=parsed["max_sentencepiece_length"],
        split_by_unicode_script=parsed["split_by_unicode_script"], split_by_number=parsed["split_by_number"],
        split_by_whitespace=parsed["split_by_whitespace"], split_digits=parsed["split_digits"],
        treat_whitespace_as_suffix=parsed["treat_whitespace_as_suffix"],
        allow_whitespace_only_pieces=parsed["allow_whitespace_only_pieces"])
    vocab_size = parsed["vocab_size"]
    if unigram:
        trained = train_unigram(corpus, rules, parsed, metas)
    else:
        trained = train_bpe(corpus, rules, len(metas), vocab_size)
    pieces: list[tuple[str, float, int]] = []
    seen: set[str] = set()
    next_trained = 0
    for index in range(vocab_size):
        if index in metas:
            if len(pieces) != index:
                raise ValueError(f"option vocab_size: too few pieces were trained to reach the meta piece at id "
                                 f"{index} ({metas[index].piece!r})")
            entry = (metas[index].piece, 0.0, metas[index].type)
        elif next_trained < len(trained):
            piece, score = trained[next_trained]
            next_trained += 1
            entry = (piece, score, NORMAL)
        else:
            continue
        if entry[0] in seen:
            raise ValueError(f"piece {entry[0]!r} is already defined (id {index})")
        seen.add(entry[0])
        pieces.append(entry)
    trainer_spec = dict(parsed.trainer_spec)
    if not parsed["hard_vocab_limit"]:
        trainer_spec["vocab_size"] = len(pieces)
    elif len(pieces) != vocab_size:
        raise ValueError(f"option vocab_size: too high ({vocab_size}); this corpus gives at most {len(pieces)} "
                         "pieces (or pass hard_vocab_limit=False)")
    normalizer_spec = dict(parsed.normalizer_spec)
    normalizer_spec["precompiled_charsmap"] = charsmap(parsed["normalization_rule_name"])
    return pieces, trainer_spec, normalizer_spec


def train_sentencepiece(texts: Iterable[str], **options: Any) -> bytes:
    """A SentencePiece model trained on `texts`: the ``.model`` bytes ``spm_train`` would write.

    Args:
        texts: the sentences (one string each; spm_train's input lines).
        options: spm_train's flags by name (``model_type``, ``vocab_size``,
            ``character_coverage``, ``user_defined_symbols``, ...; `sentencepiece_options`).

    Raises:
        ValueError: an unknown or unsupported option (named), a value sentencepiece would
            refuse, or a corpus that cannot give the vocabulary asked for.
    """
    pieces, trainer_spec, normalizer_spec = train_pieces(texts, **options)
    return model_bytes(pieces, trainer_spec=trainer_spec, normalizer_spec=normalizer_spec)
