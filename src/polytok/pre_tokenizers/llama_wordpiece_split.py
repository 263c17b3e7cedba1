"""llama.cpp's WordPiece (WPM, GGUF model ``bert``) pre-processing: normalize and cut a fragment into words.

Stage: pre-tokenizer (it also does the normalizing, as llama.cpp does both in one
pass). No ``tokenizer.json`` type: HF spells BERT's pre-processing as
``BertNormalizer`` + ``BertPreTokenizer``, which differ from this in the tables
and the rules below. The model after it is `WordPiece` with
``continuing_subword_prefix=""`` and no word-length limit, fed the words this
returns (each already carrying llama.cpp's ``"▁"`` word prefix).

Reproduces llama.cpp (llama-cpp-python 0.3.36, vendor/llama.cpp/src/llama-vocab.cpp):
``llm_tokenizer_wpm_session::preprocess`` and ``is_chinese_char`` (lines 834-891)
and the word prefix of ``::tokenize`` (line 797); unicode.cpp
``unicode_cpts_normalize_nfd``; reference/llama_vocab.md §6.3. Tables are llama.cpp's
own (Unicode 15.1): `llama_unicode_data` and `llama_nfd_data`.

Per code point, in order:

* with `strip_accents`, first replaced by the *first code point* of its NFD
  (one for one, not a real decomposition: ``é`` -> ``e``, and the accent is
  simply gone);
* whitespace (llama.cpp's set) ends the current word;
* U+0000, U+FFFD and the control categories (Cc, Cf, Co, Cs) are dropped, and
  with `strip_accents` so are marks (M);
* the rest is lower-cased (llama.cpp's 1:1 table) when `lowercase`; then a
  punctuation character, an ASCII symbol or a CJK ideograph (the ranges
  below, with BERT's 0x2B920 start) is a word of its own, anything else joins
  the current word. Non-ASCII symbols such as ``€`` or ``▁`` are not split off.

Every word gets `word_prefix` (llama.cpp: ``"▁"``) in front.
"""

from __future__ import annotations

from bisect import bisect_right
from typing import Any

from .. import kernels
from ..normalized import NormalizedString
from .base import PreTokenizerBase
from .llama_nfd_data import NFD_RANGES
from .llama_regex_split import category_flags, to_lower

_WHITESPACE, _CONTROL, _MARK, _PUNCTUATION, _SYMBOL = 0x100, 0x80, 0x10, 0x20, 0x40
_CJK = ((0x4E00, 0x9FFF), (0x3400, 0x4DBF), (0x20000, 0x2A6DF), (0x2A700, 0x2B73F), (0x2B740, 0x2B81F),
        (0x2B920, 0x2CEAF), (0xF900, 0xFAFF), (0x2F800, 0x2FA1F))
_NFD_FIRSTS = [first for first, _, _ in NFD_RANGES]

# What a code point becomes: dropped, ends a word, is a word alone, or joins the word.
_DROP, _BREAK, _ALONE, _JOIN = 0, 1, 2, 3


def first_of_nfd(cpt: int) -> int:
    """``unicode_cpts_normalize_nfd`` for one code point."""
    index = bisect_right(_NFD_FIRSTS, cpt) - 1
    first, last, nfd = NFD_RANGES[index]
    return nfd if first <= cpt <= last else cpt


def _split_prefixed() -> Any:
    """The wordpiece kernel's one-pass split at NUL with the word prefix, or None on the pure path."""
    module = kernels.kernel("wordpiece")
    return None if module is None else module.split_prefixed


def _is_cjk(cpt: int) -> bool:
    return any(low <= cpt <= high for low, high in _CJK)


class LlamaWordPieceSplit(PreTokenizerBase):
    """llama.cpp's WPM pre-processing.

    Args:
        lowercase: llama.cpp ``normalizer.lowercase`` (default true; GGUF key
            ``tokenizer.ggml.normalizer.lowercase``).
        strip_accents: llama.cpp ``normalizer.strip_accents`` (default true).
        word_prefix: put in front of every word (llama.cpp: ``"▁"``).
    """

    def __init__(self, *, lowercase: bool = True, strip_accents: bool = True, word_prefix: str = "\u2581") -> None:
        self.lowercase = lowercase
        self.strip_accents = strip_accents
        self.word_prefix = word_prefix
        self._chars: dict[str, tuple[int, str]] = {}
        self._table: dict[int, str] = {}  # `pre_tokenize`'s str.translate table, filled as characters are met
        self._split_prefixed = _split_prefixed()

    def __getstate__(self) -> dict[str, object]:
        """Pickled without the per-character tables (refilled as characters are met)."""
        return {**self.__dict__, "_chars": {}, "_table": {}, "_split_prefixed": None}

    def __setstate__(self, state: dict[str, object]) -> None:
        self.__dict__.update(state)
        self._split_prefixed = _split_prefixed()

    def _classify(self, ch: str) -> tuple[int, str]:
        found = self._chars.get(ch)
        if found is None:
            found = self._chars[ch] = self._classify_new(ord(ch))
        return found

    def _classify_new(self, cpt: int) -> tuple[int, str]:
        if self.strip_accents:
            cpt = first_of_nfd(cpt)
        flags = category_flags(cpt)
        if flags & _WHITESPACE:
            return _BREAK, ""
        if cpt == 0 or cpt == 0xFFFD or flags & _CONTROL or (self.strip_accents and flags & _MARK):
            return _DROP, ""
        out = chr(to_lower(cpt) if self.lowercase else cpt)
        if flags & _PUNCTUATION or (cpt < 0x7F and flags & _SYMBOL) or _is_cjk(cpt):
            return _ALONE, out
        return _JOIN, out

    def _words(self, text: str) -> list[list[tuple[str, int]]]:
        """Each word as ``(char, index in text)`` pairs."""
        words: list[list[tuple[str, int]]] = []
        current: list[tuple[str, int]] = []
        for index, ch in enumerate(text):
            kind, out = self._classify(ch)
            if kind == _JOIN:
                current.append((out, index))
            elif kind != _DROP:
                if current:
                    words.append(current)
                    current = []
                if kind == _ALONE:
                    words.append([(out, index)])
        if current:
            words.append(current)
        return words

    def pre_tokenize(self, text: str, at_origin: bool = True) -> list[str]:
        # One str.translate writes every character as what it becomes, with NUL (which
        # never survives: U+0000 is dropped) around the words, then one split: the
        # per-character work runs in C (measured several times faster, near llama.cpp's
        # speed; bench/README.md, 'Measurements behind design choices').
        table = self._table
        for ch in set(text):
            if ord(ch) not in table:
                kind, out = self._classify(ch)
                table[ord(ch)] = out if kind == _JOIN else "" if kind == _DROP else "\0" + out + "\0"
        prefix = self.word_prefix
        if self._split_prefixed is not None:
            return self._split_prefixed(text.translate(table), prefix)  # type: ignore[no-any-return]
        return [prefix + word for word in text.translate(table).split("\0") if word]

    def pre_tokenize_aligned(self, ns: NormalizedString) -> list[NormalizedString]:
        """Each word with its characters' alignments; the prefix takes the first character's."""
        pieces = []
        prefix = self.word_prefix
        for word in self._words(ns.text):
            align = [ns.align[index] for _, index in word]
            align = [align[0]] * len(prefix) + align
            pieces.append(NormalizedString(prefix + "".join(ch for ch, _ in word), align,
                                           ns.orig_start, ns.orig_end))
        return pieces
