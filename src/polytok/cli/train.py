"""The ``train`` subcommand: a new tokenizer trained on files (`polytok.train`)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from .main import RAW, about, examples

__all__ = ["add_parser"]

_MODELS = ("bpe", "wordpiece", "wordlevel", "unigram", "spm-bpe", "spm-unigram")

_DESCRIPTION = about(
    "Train a tokenizer on FILES (text: a document per line; .jsonl: --field; .parquet: --column) and write it. "
    "bpe, wordpiece, wordlevel and unigram train as HF tokenizers' trainers do and write tokenizer.json; with "
    "--from MODEL the new model keeps MODEL's normalizer, pre-tokenizer, post-processor, decoder and special "
    "tokens (as transformers' train_new_from_iterator), without it a default pipeline: byte-level for bpe, BERT's "
    "pre-tokenizer for wordpiece, whitespace for wordlevel, NFKC and Metaspace for unigram (unknown token "
    "<unk>). spm-bpe and spm-unigram train as spm_train does "
    "and write a SentencePiece .model.",
    "Words are counted one split of the input at a time (--workers processes, or Ray with --engine ray), so "
    "memory holds the word table, not the corpus, and any number of workers writes the same file.",
    "--out's name says the format: *.json a tokenizer.json; a folder (ending in /, or no suffix) tokenizer.json "
    "and tokenizer_config.json as transformers' save_pretrained writes them; *.model SentencePiece (a "
    "tokenizer.json model through convert's tokenizer.json to .model writer); *.gguf through convert from a "
    "folder whose config.json names the architecture (GPT2LMHeadModel for byte-level BPE, LlamaForCausalLM for "
    "other BPE and SentencePiece, BertModel for WordPiece); *.tiktoken a byte-level BPE's ranks. Each file is "
    "loaded by its reference engine (HF tokenizers, transformers, sentencepiece, tiktoken, llama.cpp; polytok's "
    "reader when one is not installed) and must give the trained tokenizer's ids on convert's proof texts and "
    "the first --check-lines documents of FILES; otherwise the command fails (exit 1), names the first "
    "differing text and leaves nothing at --out, unless --force.")


def add_parser(sub: Any) -> dict[str, Any]:
    """Add ``train`` to `sub`; returns its handler by name."""
    p = sub.add_parser("train", help="train a new tokenizer on files", description=_DESCRIPTION,
                       formatter_class=RAW,
                       epilog=examples("polytok train corpus.txt --model bpe --vocab-size 32000 --out tokenizer.json",
                                       "polytok train data.jsonl --from gpt2 --vocab-size 8000 --out tokenizer.json",
                                       "polytok train a.txt b.txt --model wordpiece --vocab-size 30000 "
                                       "--special-token [UNK] --special-token [CLS] --workers 4 --out wp.json",
                                       "polytok train corpus.txt --model spm-unigram --vocab-size 8000 --out x.model",
                                       "polytok train corpus.txt --model bpe --vocab-size 8000 --out out/",
                                       "polytok train corpus.txt --model bpe --vocab-size 8000 --out x.gguf",
                                       "polytok train corpus.txt --model bpe --vocab-size 8000 --out x.tiktoken"))
    p.add_argument("files", nargs="+", metavar="FILE", help="the corpus files")
    p.add_argument("--out", required=True, metavar="PATH",
                   help="where to write the tokenizer: .json, a folder, .model, .gguf or .tiktoken")
    p.add_argument("--force", action="store_true",
                   help="write --out even when its reference engine gives other ids than the trained tokenizer")
    p.add_argument("--check-lines", type=int, default=200, metavar="N",
                   help="check the written file on the first N documents of FILES too (default: 200)")
    p.add_argument("--model", default="bpe", choices=_MODELS, help="the model to train (default: bpe)")
    p.add_argument("--vocab-size", type=int, required=True, metavar="N", help="the vocabulary size")
    p.add_argument("--from", dest="source", default=None, metavar="MODEL",
                   help="train a new model for this tokenizer's pipeline (a tokenizer.json or model folder)")
    p.add_argument("--min-frequency", type=int, default=0, metavar="N",
                   help="the fewest occurrences a merge (or word) needs")
    p.add_argument("--special-token", action="append", default=[], metavar="TOKEN",
                   help="a special token, first in the vocabulary (repeat for more)")
    p.add_argument("--limit-alphabet", type=int, default=None, metavar="N",
                   help="keep at most N characters of the alphabet (bpe, wordpiece)")
    p.add_argument("--workers", type=int, default=1, metavar="N", help="processes (or Ray tasks) counting words")
    p.add_argument("--engine", choices=("local", "ray"), default="local", help="where the workers run")
    p.add_argument("--field", default="text", help="the JSONL field holding a document (default: text)")
    p.add_argument("--column", default="text", help="the Parquet column holding a document (default: text)")
    return {"train": _train}


def _pipeline(model: str) -> dict[str, Any]:
    """The default pipeline of a model kind, as a ``tokenizer.json`` object without vocabulary."""
    if model == "bpe":
        byte_level = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True}
        return {"pre_tokenizer": byte_level, "decoder": byte_level,
                "post_processor": {**byte_level, "trim_offsets": False}, "model": {"type": "BPE"}}
    if model == "wordpiece":
        return {"normalizer": {"type": "BertNormalizer", "clean_text": True, "handle_chinese_chars": True,
                               "strip_accents": None, "lowercase": False},
                "pre_tokenizer": {"type": "BertPreTokenizer"},
                "decoder": {"type": "WordPiece", "prefix": "##", "cleanup": True}, "model": {"type": "WordPiece"}}
    if model == "unigram":
        metaspace = {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "always", "split": True}
        return {"normalizer": {"type": "NFKC"}, "pre_tokenizer": metaspace, "decoder": metaspace,
                "model": {"type": "Unigram"}}
    return {"pre_tokenizer": {"type": "Whitespace"}, "model": {"type": "WordLevel"}}


def _train(args: argparse.Namespace) -> int:
    if args.model.startswith("spm-"):
        return _train_sentencepiece(args)
    from ..train.bpe_trainer import BpeTrainer
    from ..train.pipeline import BYTE_LEVEL_ALPHABET, train, train_new
    from ..train.unigram_trainer import UnigramTrainer
    from ..train.wordpiece_trainer import WordLevelTrainer, WordPieceTrainer
    from .main import load_model

    common: dict[str, Any] = {"min_frequency": args.min_frequency}
    if args.limit_alphabet is not None and args.model != "wordlevel":
        common["limit_alphabet"] = args.limit_alphabet
    if args.source is not None:
        tok = load_model(args.source, [])
        trained = train_new(tok, None, args.vocab_size, files=args.files, new_special_tokens=args.special_token,
                            workers=args.workers, engine=args.engine, field=args.field, column=args.column,
                            **common)
    else:
        trainer: Any
        if args.model == "bpe":
            trainer = BpeTrainer(vocab_size=args.vocab_size, special_tokens=args.special_token,
                                 initial_alphabet=list(BYTE_LEVEL_ALPHABET), **common)
        elif args.model == "wordpiece":
            trainer = WordPieceTrainer(vocab_size=args.vocab_size, special_tokens=args.special_token, **common)
        elif args.model == "unigram":
            trainer = UnigramTrainer(vocab_size=args.vocab_size, special_tokens=args.special_token, unk_token="<unk>")
        else:
            trainer = WordLevelTrainer(vocab_size=args.vocab_size, special_tokens=args.special_token, **common)
        trained = train(None, _pipeline(args.model), trainer, files=args.files, workers=args.workers,
                        engine=args.engine, field=args.field, column=args.column)
    from ..train.outputs import save_trained

    print(f"trained: {len(trained.data['model']['vocab'])} pieces", file=sys.stderr)
    return _written(lambda corpus: save_trained(trained, args.out, corpus=corpus, force=args.force), args)


def _written(save: Any, args: argparse.Namespace) -> int:
    """Run `save` (`polytok.train.outputs`) with the sample of FILES; print its report, or why it failed (exit 1)."""
    from ..convert.proof import ConversionProofError
    from ..train.outputs import OutputCheckError, sample_corpus

    if args.check_lines < 0:
        print(f"polytok train: --check-lines must be 0 or more, not {args.check_lines}", file=sys.stderr)
        return 2
    corpus = sample_corpus(args.files, args.field, args.column, limit=args.check_lines)
    try:
        result = save(corpus)
    except (OutputCheckError, ConversionProofError) as exc:
        print("\n".join(exc.result.lines()), file=sys.stderr)
        print(f"polytok: error: {exc}", file=sys.stderr)
        return 1
    print("\n".join(result.lines()), file=sys.stderr)
    return 0


def _train_sentencepiece(args: argparse.Namespace) -> int:
    try:
        from ..train.sentencepiece_trainer import train_sentencepiece
    except ImportError:
        print("polytok train: the SentencePiece trainers are not available in this build", file=sys.stderr)
        return 2
    from ..corpus.readers import read_split
    from ..train.corpus_counts import plan_splits

    def texts() -> Any:
        for split in plan_splits(args.files, column=args.column):
            docs, _, _ = read_split(split, args.field, args.column)
            yield from docs

    options: dict[str, Any] = {"model_type": args.model.removeprefix("spm-"), "vocab_size": args.vocab_size}
    if args.special_token:
        options["user_defined_symbols"] = args.special_token
    try:
        data = train_sentencepiece(texts(), **options)
    except ValueError as exc:
        print(f"polytok train: {exc}", file=sys.stderr)
        return 2
    from ..train.outputs import save_sentencepiece

    return _written(lambda corpus: save_sentencepiece(data, args.out, corpus=corpus, force=args.force), args)
