"""Reader for GPT-2's ``vocab.json`` + ``merges.txt``, built as transformers builds it.

Reference: transformers 5.24.0 ``models/gpt2/tokenization_gpt2.py``
(``GPT2Tokenizer.__init__``; ``GPT2TokenizerFast`` is the same class) and
``tokenization_utils_tokenizers.py`` (``TokenizersBackend.__init__`` and
``update_post_processor``), which for ``GPT2TokenizerFast(vocab_file,
merges_file)`` hand both paths to tokenizers 0.23.3's ``BPE``
(``tokenizers/src/models/bpe/model.rs``: ``BPE::read_file`` and
``convert_merges_to_hashmap``; ``BpeBuilder::build``):

- ``vocab.json`` is a JSON object; entries whose value is not a JSON number
  are skipped, a number must be a non-negative integer (below 2**32 here).
- ``merges.txt`` lines (split at LF, one trailing CR dropped, no empty last
  line after a final LF): every line starting with ``#version`` is skipped
  (anywhere in the file) and takes no rank; any other line must be exactly two
  tokens split by one space (an empty line is an error, as in HF). Each part
  and their concatenation must be in the vocabulary.
- components: no normalizer; ``ByteLevel(add_prefix_space=False)``
  pre-tokenizer; ``BPE`` (no unk token, no affixes, no fuse); the
  ``ByteLevel`` decoder; ``TemplateProcessing("$A:0", pair "$A:0 $B:1")`` —
  there is no ByteLevel post-processor in 5.x, and ``add_special`` adds
  nothing unless ``add_bos_token`` / ``add_eos_token`` are set (then
  ``bos:0 $A:0 eos:0`` / ``... bos:1 $B:1 eos:1``);
- ``<|endoftext|>`` is the unk, bos and eos token: one special, not normalized
  added token (id 50256 in GPT-2's file).

A ``tokenizer_config.json`` (with ``special_tokens_map.json``,
``added_tokens.json``) beside the file is read as
``GPT2TokenizerFast.from_pretrained(folder)`` reads it (`_transformers_config`):
``add_prefix_space``, ``add_bos_token``, ``add_eos_token``, the special tokens,
``added_tokens_decoder`` and ``split_special_tokens`` (`SpecialTokens.AS_TEXT`
by default). ``clean_up_tokenization_spaces`` is ignored for BPE, as
transformers 5.x ignores it (unless
``clean_up_tokenization_spaces_for_bpe_even_though_it_will_corrupt_output``).

Errors: a merges line that is not two tokens, or that names a token missing
from the vocabulary, raises `FormatError` naming the merges file and its line
number (counting every line, ``#version`` included; HF's message counts only
the merge lines). HF raises on both too.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from ..decoders.byte_level import ByteLevel as ByteLevelDecoder
from ..decoders.chain_decoder import ChainDecoder
from ..errors import FormatError
from ..facts import eos_ends
from ..models.bpe import BPE, UnknownMergeToken
from ..post_processors.template import TemplateProcessing
from ..pre_tokenizers.byte_level import ByteLevel
from ..tokenizer import Tokenizer
from . import folder as folder_files
from ._transformers_config import Settings, check_options, read_settings, with_clean_up
from .compressed import read_bytes

__all__ = ["read_gpt2_vocab", "read_bpe_files"]

_DEFAULT_TOKENS: dict[str, str | None] = {
    "unk_token": "<|endoftext|>", "bos_token": "<|endoftext|>", "eos_token": "<|endoftext|>", "pad_token": None}
_OPTIONS = {"add_prefix_space", "add_bos_token", "add_eos_token", "split_special_tokens", "merges_file",
            *_DEFAULT_TOKENS}
_U32 = 1 << 32


def _read_vocab(path: Path) -> dict[str, int]:
    data = folder_files.parse_json_bytes(read_bytes(path), str(path))
    if not isinstance(data, dict):
        raise FormatError("expected a JSON object of token: id", file=str(path), line=1)
    vocab: dict[str, int] = {}
    for token, id_ in data.items():
        if isinstance(id_, bool) or not isinstance(id_, (int, float)):
            continue  # tokenizers skips entries that are not JSON numbers
        if not isinstance(id_, int) or not 0 <= id_ < _U32:
            raise FormatError(f"expected an id in [0, 2**32), found {id_!r}", file=str(path), key=token)
        vocab[token] = id_
    return vocab


def _read_merges(path: Path) -> tuple[list[tuple[str, str]], list[int]]:
    """The merges by rank, and each one's line number in the file."""
    raw = read_bytes(path)
    lines = raw.split(b"\n")
    if lines[-1] == b"":
        lines.pop()
    merges: list[tuple[str, str]] = []
    line_numbers: list[int] = []
    for number, line in enumerate(lines, 1):
        try:
            text = line.removesuffix(b"\r").decode("utf-8")
        except UnicodeDecodeError as exc:
            raise FormatError(f"not UTF-8 text: {line[exc.start:exc.start + 4]!r}", file=str(path),
                              line=number) from None
        if text.startswith("#version"):
            continue
        parts = text.split(" ")
        if len(parts) != 2:
            raise FormatError(f"expected two tokens separated by one space, found {text!r:.60}",
                              file=str(path), line=number)
        merges.append((parts[0], parts[1]))
        line_numbers.append(number)
    return merges, line_numbers


def read_bpe_files(vocab_path: Path, merges_path: Path) -> BPE:
    """tokenizers' ``BPE::from_file(vocab, merges)`` with GPT-2's settings."""
    vocab = _read_vocab(vocab_path)
    merges, line_numbers = _read_merges(merges_path)
    try:
        return BPE(vocab, merges, continuing_subword_prefix="", end_of_word_suffix="", fuse_unk=False)
    except UnknownMergeToken as exc:
        raise FormatError(exc.reason, file=str(merges_path), line=line_numbers[exc.rank]) from None


def read_gpt2_vocab(path: Path, **options: Any) -> Tokenizer:
    """Load GPT-2's ``vocab.json`` and the ``merges.txt`` beside it, as transformers' ``GPT2TokenizerFast``.

    Args:
        path: the ``vocab.json``; ``merges.txt`` and a ``tokenizer_config.json``
            beside it are read.
        **options: ``GPT2TokenizerFast``'s keywords, overriding the config:
            ``add_prefix_space`` (default False), ``add_bos_token`` /
            ``add_eos_token`` (default False), ``unk_token``, ``bos_token``,
            ``eos_token``, ``pad_token``, ``split_special_tokens``; and
            ``merges_file`` (default ``merges.txt`` beside `path`).

    Returns:
        The `Tokenizer`; ``encode(t)`` is ``tokenizer(t)["input_ids"]``.

    Raises:
        FormatError: an unreadable file, bad JSON, a bad merges line or a merge
            naming a token missing from the vocabulary (with the line number),
            a bad config file, or an unknown option.
    """
    path = Path(path)
    check_options("gpt2_vocab", options, _OPTIONS)
    options = dict(options)
    merges_path = Path(options.pop("merges_file", folder_files.where(path.parent, "merges.txt")))
    settings = read_settings(path.parent, options, _DEFAULT_TOKENS)
    values = settings.values
    chain: Any = ByteLevelDecoder()
    if values.get("clean_up_tokenization_spaces") and values.get(
            "clean_up_tokenization_spaces_for_bpe_even_though_it_will_corrupt_output"):
        chain = with_clean_up(chain)
    tok = Tokenizer(read_bpe_files(path, merges_path),
                    pre_tokenizer=ByteLevel(add_prefix_space=bool(values.get("add_prefix_space", False))),
                    added_tokens=settings.added, facts=settings.facts("gpt2_vocab", path, merges_path))
    tok.decoder = ChainDecoder(chain, tok.model, tok.added)
    tok.post_processor = _bos_eos_template(tok, settings)
    named = settings.named_tokens(tok.token_to_id)
    tok.facts = replace(tok.facts, named_tokens=named, eog_ids=eos_ends(named))
    return tok


def _bos_eos_template(tok: Tokenizer, settings: Settings) -> TemplateProcessing:
    """transformers' ``update_post_processor``: ``[bos:0] $A:0 [eos:0]``, pair ``... [bos:1] $B:1 [eos:1]``."""
    single: list[tuple[str, Any, int]] = [("seq", 0, 0)]
    pair_tail: list[tuple[str, Any, int]] = [("seq", 1, 1)]
    specials: dict[str, tuple[list[int], list[str]]] = {}
    for name, at_start in (("bos_token", True), ("eos_token", False)):
        text = settings.token(name)
        if not settings.values.get(f"add_{name}") or text is None:
            continue
        id_ = tok.token_to_id(text)
        if id_ is None:
            raise FormatError(f"{name} {text!r} is not in the vocabulary", key=name)
        specials[text] = ([id_], [text])
        if at_start:
            single.insert(0, ("special", text, 0))
            pair_tail.insert(0, ("special", text, 1))
        else:
            single.append(("special", text, 0))
            pair_tail.append(("special", text, 1))
    return TemplateProcessing(single, single + pair_tail, specials)
