"""Reader for a WordPiece ``vocab.txt`` (BERT's one token per line), built as transformers builds it.

Reference: transformers 5.24.0 ``models/bert/tokenization_bert.py``
(``BertTokenizer.__init__``; ``BertTokenizerFast`` is the same class), which
for ``BertTokenizerFast(vocab_file)`` hands the path to tokenizers 0.23.3's
``WordPiece`` (``tokenizers/src/models/wordpiece/mod.rs``, ``WordPiece::read_file``):

- a line is what ``BufRead::lines`` yields (split at LF, one trailing CR
  dropped, no empty last line after a final LF), with trailing White_Space
  trimmed (``trim_end``); its id is its line index. A text listed twice keeps
  its last index, and the earlier index has no token (as HF's reverse map).
- components: ``BertNormalizer(clean_text=True, handle_chinese_chars=
  tokenize_chinese_chars, strip_accents, lowercase=do_lower_case)``,
  ``BertPreTokenizer``, ``WordPiece(unk_token, "##", 100)``, the ``WordPiece``
  decoder (prefix ``##``, cleanup on), and
  ``TemplateProcessing("[CLS]:0 $A:0 [SEP]:0", pair "... $B:1 [SEP]:1")`` whose
  ids are the cls/sep tokens' ids after the special tokens were added.
- the named special tokens (``[UNK]``, ``[SEP]``, ``[PAD]``, ``[CLS]``,
  ``[MASK]``) are added tokens, special and not normalized; one missing from
  the file gets the next free id (`polytok.special.AddedVocabulary`).

A ``tokenizer_config.json`` (with ``special_tokens_map.json``,
``added_tokens.json``) beside the file is read as
``BertTokenizerFast.from_pretrained(folder)`` reads it (`_transformers_config`):
``do_lower_case``, ``strip_accents``, ``tokenize_chinese_chars``, the special
tokens and ``added_tokens_decoder``; ``split_special_tokens`` makes
`SpecialTokens.AS_TEXT` the default; ``clean_up_tokenization_spaces`` (off by
default in 5.x) adds transformers' ``clean_up_tokenization`` replacements on
the decoded text. ``tokenizer.json`` beside it is not consulted (`polytok.load`
of the folder reads that one instead).

Divergence on purpose: an empty ``vocab.txt`` raises `FormatError`; transformers
builds a tokenizer of the five special tokens alone.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from ..decoders.chain_decoder import ChainDecoder
from ..decoders.wordpiece import WordPiece as WordPieceDecoder
from ..errors import FormatError
from ..models.wordpiece import WordPiece
from ..normalizers.bert_normalizer import BertNormalizer
from ..post_processors.template import TemplateProcessing
from ..pre_tokenizers.bert_pre_tokenizer import BertPreTokenizer
from ..text.chars import WHITE_SPACE
from ..tokenizer import Tokenizer
from ._transformers_config import check_options, read_settings, with_clean_up
from .compressed import read_bytes

__all__ = ["read_wordpiece_vocab", "read_vocab_lines"]

_DEFAULT_TOKENS: dict[str, str | None] = {
    "unk_token": "[UNK]", "sep_token": "[SEP]", "pad_token": "[PAD]", "cls_token": "[CLS]", "mask_token": "[MASK]"}
_OPTIONS = {"lowercase", "do_lower_case", "strip_accents", "tokenize_chinese_chars", "split_special_tokens",
            "clean_up_tokenization_spaces", *_DEFAULT_TOKENS}
_TRAILING_SPACE = "".join(sorted(WHITE_SPACE))


def read_vocab_lines(path: Path) -> dict[str, int]:
    """``{token: line index}`` as tokenizers' ``WordPiece::read_file`` reads it."""
    raw = read_bytes(path)
    lines = raw.split(b"\n")
    if lines[-1] == b"":
        lines.pop()
    if not lines:
        raise FormatError("empty vocabulary (no line)", file=str(path), line=1)
    vocab: dict[str, int] = {}
    for index, line in enumerate(lines):
        try:
            text = line.removesuffix(b"\r").decode("utf-8")
        except UnicodeDecodeError as exc:
            raise FormatError(f"not UTF-8 text: {line[exc.start:exc.start + 4]!r}", file=str(path),
                              line=index + 1) from None
        vocab[text.rstrip(_TRAILING_SPACE)] = index
    return vocab


def _keywords(options: dict[str, Any]) -> dict[str, Any]:
    check_options("wordpiece_vocab", options, _OPTIONS)
    keywords = dict(options)
    if "lowercase" in keywords:
        lowercase = keywords.pop("lowercase")
        if keywords.get("do_lower_case", lowercase) != lowercase:
            raise FormatError("lowercase and do_lower_case disagree")
        keywords["do_lower_case"] = lowercase
    return keywords


def read_wordpiece_vocab(path: Path, **options: Any) -> Tokenizer:
    """Load a BERT ``vocab.txt`` as transformers' ``BertTokenizerFast`` builds it.

    Args:
        path: the ``vocab.txt``; a ``tokenizer_config.json`` beside it is honoured.
        **options: ``BertTokenizerFast``'s keywords, overriding the config:
            ``lowercase`` (or ``do_lower_case``, default True), ``strip_accents``
            (default None: follows lowercase), ``tokenize_chinese_chars`` (default
            True), ``unk_token``, ``sep_token``, ``pad_token``, ``cls_token``,
            ``mask_token``, ``split_special_tokens``, ``clean_up_tokenization_spaces``.

    Returns:
        The `Tokenizer`; ``encode(t)`` is ``tokenizer(t)["input_ids"]``.

    Raises:
        FormatError: an unreadable or empty file, a line that is not UTF-8 (named
            by number), a bad config file, or an unknown option.
    """
    path = Path(path)
    settings = read_settings(path.parent, _keywords(options), _DEFAULT_TOKENS)
    values = settings.values
    lowercase = bool(values.get("do_lower_case", True))
    normalizer = BertNormalizer(clean_text=True, handle_chinese_chars=bool(values.get("tokenize_chinese_chars", True)),
                                strip_accents=values.get("strip_accents"), lowercase=lowercase)
    unk = settings.token("unk_token")
    model = WordPiece(read_vocab_lines(path), unk_token="None" if unk is None else unk)
    chain: Any = WordPieceDecoder(prefix="##", cleanup=True)
    if values.get("clean_up_tokenization_spaces"):
        chain = with_clean_up(chain)
    tok = Tokenizer(model, normalizer=normalizer, pre_tokenizer=BertPreTokenizer(),
                    added_tokens=settings.added, facts=settings.facts("wordpiece_vocab", path))
    tok.decoder = ChainDecoder(chain, tok.model, tok.added)
    tok.post_processor = _bert_template(tok, settings.token("cls_token"), settings.token("sep_token"))
    tok.facts = replace(tok.facts, named_tokens=settings.named_tokens(tok.token_to_id))
    return tok


def _bert_template(tok: Tokenizer, cls: str | None, sep: str | None) -> TemplateProcessing:
    """``[CLS]:0 $A:0 [SEP]:0`` / ``... $B:1 [SEP]:1``; ids 2 and 3 when the tokens are unknown (as transformers)."""
    cls_text, sep_text = str(cls), str(sep)
    found_cls, found_sep = tok.token_to_id(cls_text), tok.token_to_id(sep_text)
    cls_id = 2 if found_cls is None else found_cls
    sep_id = 3 if found_sep is None else found_sep
    single = [("special", cls_text, 0), ("seq", 0, 0), ("special", sep_text, 0)]
    pair = single + [("seq", 1, 1), ("special", sep_text, 1)]
    specials = {cls_text: ([cls_id], [cls_text]), sep_text: ([sep_id], [sep_text])}
    return TemplateProcessing(single, pair, specials)
