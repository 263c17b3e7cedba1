"""A trained tokenizer: a pipeline (normalizer, pre-tokenizer, post-processor, decoder)
with a model trained on a corpus, as ``tokenizer.json``.

`train` takes the pipeline in full, as a ``tokenizer.json``-shaped dict (its ``model``
may be absent or hold only options such as ``unk_token``), or a loaded tokenizer that
came from a ``tokenizer.json``. `train_new` is transformers'
``PreTrainedTokenizerFast.train_new_from_iterator``
(transformers/tokenization_utils_tokenizers.py): the source's pipeline and special
tokens, a new model of the same kind. Every component other than the model keeps the
JSON it had; the post-processor's special-token ids are renumbered from the new
vocabulary, and the special tokens become the added tokens, as HF's ``Tokenizer.train``
adds them.
"""

from __future__ import annotations

import copy
import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import PolytokError
from ..formats.hf_json import parse_tokenizer_json, read_json
from ..models.unigram import VocabColumns
from ..text.byte_alphabet import BYTES_TO_CHARS
from ..tokenizer import Tokenizer
from .bpe_trainer import BpeResult, BpeTrainer
from .corpus_counts import count_corpus
from .unigram_trainer import UnigramResult, UnigramTrainer
from .word_counts import WordSplitter
from .wordpiece_trainer import WordLevelTrainer, WordPieceTrainer

if TYPE_CHECKING:
    from .outputs import SaveResult

__all__ = ["texts_and_files", "Trainer", "TrainedTokenizer", "train", "train_new", "source_json", "words_of",
           "BYTE_LEVEL_ALPHABET"]

Trainer = BpeTrainer | WordPieceTrainer | WordLevelTrainer | UnigramTrainer

#: the characters HF's ``ByteLevel.alphabet()`` gives: one per byte
BYTE_LEVEL_ALPHABET: list[str] = sorted(BYTES_TO_CHARS)

_TRAINER_OF_MODEL: dict[str, type[Trainer]] = {
    "BPE": BpeTrainer, "WordPiece": WordPieceTrainer, "WordLevel": WordLevelTrainer, "Unigram": UnigramTrainer,
}
_MODEL_DEFAULTS: dict[str, dict[str, Any]] = {
    "BPE": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
            "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False, "ignore_merges": False},
    "WordPiece": {"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##",
                  "max_input_chars_per_word": 100},
    "WordLevel": {"type": "WordLevel", "unk_token": "<unk>"},
    "Unigram": {"type": "Unigram"},
}


class TrainedTokenizer(Tokenizer):
    """A `Tokenizer` made by training, which can write itself as ``tokenizer.json``."""

    def __init__(self, data: dict[str, Any]) -> None:
        self.__dict__.update(parse_tokenizer_json(data).__dict__)
        #: the ``tokenizer.json`` object, as HF writes it
        self.data = data

    def to_str(self, pretty: bool = False) -> str:
        """The ``tokenizer.json`` text (HF's ``to_str``: compact, or indented by 2 with `pretty`)."""
        if pretty:
            return json.dumps(self.data, ensure_ascii=False, indent=2)
        return json.dumps(self.data, ensure_ascii=False, separators=(",", ":"))

    def save(self, path: str | Path, pretty: bool = True) -> None:
        """Write ``tokenizer.json`` (UTF-8) to `path`."""
        Path(path).write_text(self.to_str(pretty), encoding="utf-8")

    def save_as(self, path: str | os.PathLike[str], format: str | None = None, *,
                corpus: Iterable[tuple[str, str]] = (), force: bool = False) -> SaveResult:
        """Write this tokenizer at `path` as `format` (else the one the name says: ``.json``, a folder,
        ``.model``, ``.gguf``, ``.tiktoken``), checked by that format's reference engine on convert's proof
        texts and `corpus` ((name, text) pairs): `polytok.train.outputs.save_trained`.

        Raises:
            OutputCheckError, ConversionProofError: the written file gives other ids (nothing is at `path`,
                unless `force`).
        """
        from .outputs import save_trained

        return save_trained(self, path, format, corpus=corpus, force=force)


def words_of(tok: Tokenizer) -> WordSplitter:
    """What a trainer counts in one text: its words after `tok`'s normalizer and pre-tokenizer
    (HF's ``Tokenizer.train`` feeds the trainer these, without splitting added tokens)."""
    def split(text: str) -> list[str]:
        return tok.pre_tokens(tok.normalize(text), True)
    return split


def source_json(tok: Tokenizer) -> dict[str, Any]:
    """The ``tokenizer.json`` object `tok` was loaded from."""
    if isinstance(tok, TrainedTokenizer):
        return copy.deepcopy(tok.data)
    if tok.facts.format == "tokenizer.json":
        for name in tok.facts.files:
            if name.endswith((".json", ".json.gz")) and not name.endswith("config.json"):
                data = read_json(Path(name))
                if isinstance(data, dict) and "model" in data:
                    return data
    raise PolytokError(f"training a new model needs the tokenizer.json the tokenizer came from; "
                       f"this one was read from {tok.facts.format} ({tok.facts.source})")


def train(texts: Iterable[str] | None, pipeline: dict[str, Any] | Tokenizer, trainer: Trainer | None = None, *,
          files: list[str] | None = None, workers: int = 1, engine: str = "local", field: str = "text",
          column: str = "text", special_token_flags: dict[str, dict[str, Any]] | None = None) -> TrainedTokenizer:
    """Train `trainer`'s model on `texts` (and/or `files`, read by the corpus readers) through `pipeline`.

    `pipeline`: a ``tokenizer.json``-shaped dict or a tokenizer loaded from one; its model's
    vocabulary is replaced, its other options kept. `trainer` defaults to the model kind's
    trainer with HF's defaults. `workers`, `engine` (``local`` or ``ray``), `field` (JSONL) and
    `column` (Parquet) say how `files` are counted (`corpus_counts.count_splits`).
    `special_token_flags` gives a special token's added-token flags (``lstrip``,
    ``normalized``, …) by content.
    """
    data = source_json(pipeline) if isinstance(pipeline, Tokenizer) else copy.deepcopy(pipeline)
    model = dict(data.get("model") or {})
    kind = model.get("type") or _kind_of(trainer)
    if trainer is None:
        trainer = _TRAINER_OF_MODEL[kind]()
    if kind != _kind_of(trainer):
        raise PolytokError(f"a {type(trainer).__name__} trains a {_kind_of(trainer)} model, not the pipeline's {kind}")
    data["model"] = {**_MODEL_DEFAULTS[kind], **model, **{"vocab": {}}}
    if kind == "Unigram":
        data["model"] = {"type": "Unigram", "unk_id": 0, "vocab": [["<unk>", 0.0]]}
    if kind == "BPE":
        data["model"]["merges"] = []
    data["added_tokens"] = []
    post_processor = data.pop("post_processor", None)
    data.setdefault("version", "1.0")
    template = parse_tokenizer_json({**data, "post_processor": None})
    counts = count_corpus(texts, files, words_of(template), workers=workers, engine=engine, field=field,
                          column=column)
    return assemble(data, trainer, trainer.train(counts), post_processor, special_token_flags or {})


def assemble(data: dict[str, Any], trainer: Trainer, result: Any, post_processor: Any,
             flags: dict[str, dict[str, Any]]) -> TrainedTokenizer:
    """The ``tokenizer.json`` of `data`'s pipeline with `trainer`'s `result` as its model."""
    model = data["model"]
    if isinstance(result, BpeResult):
        model["vocab"] = result.vocab
        model["merges"] = [list(m) for m in result.merges]
        if result.continuing_subword_prefix is not None:
            model["continuing_subword_prefix"] = result.continuing_subword_prefix
        if result.end_of_word_suffix is not None:
            model["end_of_word_suffix"] = result.end_of_word_suffix
    elif isinstance(result, UnigramResult):
        # HF's trainer replaces the model whole: the source's other Unigram options are not kept
        model = {"type": "Unigram", "unk_id": result.unk_id, "vocab": [[p, s] for p, s in result.pieces],
                 "byte_fallback": False}
    else:
        model["vocab"] = dict(sorted(result.items(), key=lambda item: item[1]))
    vocab = result.ids if isinstance(result, UnigramResult) else model["vocab"]
    added: list[dict[str, Any]] = []
    seen: set[str] = set()
    for content in trainer.special_tokens:
        if content in seen:
            continue
        seen.add(content)
        f = flags.get(content, {})
        added.append({"id": vocab[content], "content": content, "single_word": bool(f.get("single_word", False)),
                      "lstrip": bool(f.get("lstrip", False)), "rstrip": bool(f.get("rstrip", False)),
                      "normalized": bool(f.get("normalized", False)), "special": True})
    out = {"version": data.get("version", "1.0"), "truncation": data.get("truncation"),
           "padding": data.get("padding"), "added_tokens": added, "normalizer": data.get("normalizer"),
           "pre_tokenizer": data.get("pre_tokenizer"),
           "post_processor": _renumbered(post_processor, vocab) if post_processor is not None else None,
           "decoder": data.get("decoder"), "model": model}
    return TrainedTokenizer(out)


def _renumbered(post: dict[str, Any], vocab: dict[str, int]) -> dict[str, Any]:
    """`post` with its special tokens' ids looked up in `vocab` (as transformers renumbers them)."""
    post = copy.deepcopy(post)
    for name, entry in (post.get("special_tokens") or {}).items():
        entry["ids"] = [_id_of(token, vocab, f"post_processor.special_tokens.{name}") for token in entry["tokens"]]
    for key in ("cls", "sep"):
        if key in post:
            token = post[key][0]
            post[key] = [token, _id_of(token, vocab, f"post_processor.{key}")]
    for i, item in enumerate(post.get("processors") or []):
        post["processors"][i] = _renumbered(item, vocab)
    return post


def _id_of(token: str, vocab: dict[str, int], key: str) -> int:
    found = vocab.get(token)
    if found is None:
        raise PolytokError(f"{key}: the token {token!r} is not in the trained vocabulary")
    return found


def _kind_of(trainer: Trainer | None) -> str:
    if isinstance(trainer, UnigramTrainer):
        return "Unigram"
    if isinstance(trainer, WordPieceTrainer):
        return "WordPiece"
    if isinstance(trainer, WordLevelTrainer):
        return "WordLevel"
    return "BPE"


def texts_and_files(texts_or_files: Any) -> tuple[Iterable[Any] | None, list[str]]:
    """`texts_or_files` parted: paths (`os.PathLike`) are files, strings and lists of them texts."""
    if isinstance(texts_or_files, os.PathLike):
        return None, [os.fspath(texts_or_files)]
    if isinstance(texts_or_files, (list, tuple)) and texts_or_files \
            and all(isinstance(t, os.PathLike) for t in texts_or_files):
        return None, [os.fspath(t) for t in texts_or_files]
    return texts_or_files, []


def train_new(tok: Tokenizer, texts_or_files: Any, vocab_size: int, *, files: list[str] | None = None,
              new_special_tokens: list[str] | None = None, workers: int = 1, engine: str = "local",
              field: str = "text", column: str = "text", **trainer_args: Any) -> TrainedTokenizer:
    """transformers' ``train_new_from_iterator`` on `tok`: the same pipeline and special
    tokens, a model of the same kind trained on `texts_or_files` (texts, batches of texts,
    or paths, read by the corpus readers) and `files`."""
    texts, more = texts_and_files(texts_or_files)
    files = [*more, *(files or [])]
    data = source_json(tok)
    model = data.get("model") or {}
    kind = model.get("type") or _implied_kind(model)
    if kind not in _TRAINER_OF_MODEL:
        raise PolytokError(f"training a new {kind} model is not supported (BPE, WordPiece, WordLevel, Unigram are)")
    flags: dict[str, dict[str, Any]] = {}
    special: list[str] = []
    for token in data.get("added_tokens") or []:
        if token.get("special") or kind == "Unigram":
            special.append(token["content"])
            flags[token["content"]] = token
    special.extend(new_special_tokens or [])
    args = dict(trainer_args)
    if kind == "Unigram" and model.get("unk_id") is not None:
        vocab = model["vocab"]
        unk_id = model["unk_id"]
        args.setdefault("unk_token", vocab.pieces[unk_id] if isinstance(vocab, VocabColumns) else vocab[unk_id][0])
    if kind == "Unigram":
        for key in ("min_frequency", "limit_alphabet"):  # options HF's UnigramTrainer ignores
            args.pop(key, None)
    if kind == "BPE":
        for key in ("continuing_subword_prefix", "end_of_word_suffix"):
            if key not in args and model.get(key) is not None:
                args[key] = model[key]
    if _has_byte_level(data.get("pre_tokenizer")):
        args["initial_alphabet"] = list(BYTE_LEVEL_ALPHABET)
    trainer = _TRAINER_OF_MODEL[kind](vocab_size=vocab_size, special_tokens=special, **args)
    data["model"] = {"type": kind, **{k: v for k, v in model.items() if k not in ("vocab", "merges")}}
    return train(texts, data, trainer, files=files, workers=workers, engine=engine, field=field, column=column,
                 special_token_flags=flags)


def _implied_kind(model: dict[str, Any]) -> str:
    """The model kind of a ``model`` object without ``type``, as HF's untagged reading finds it."""
    if "merges" in model:
        return "BPE"
    if isinstance(model.get("vocab"), list):
        return "Unigram"
    return "WordPiece" if "max_input_chars_per_word" in model else "WordLevel"


def _has_byte_level(pre: Any) -> bool:
    if not isinstance(pre, dict):
        return False
    if pre.get("type") == "ByteLevel":
        return True
    return pre.get("type") == "Sequence" and any(isinstance(p, dict) and p.get("type") == "ByteLevel"
                                                 for p in pre.get("pretokenizers") or [])
