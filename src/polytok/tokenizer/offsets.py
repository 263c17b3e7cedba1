"""`encode_full`: the pipeline with alignments, for HF's `Encoding` (ids, tokens, offsets, words).

The same stages as `encode`, through the aligned seams: `aligned_splits` (HF
``added_vocabulary.rs`` ``extract_and_normalize``: the special split and the
normalizer on `NormalizedString`s), `pre_tokens_aligned` (``do_pre_tokenize``),
`model_tokens` (``do_tokenize`` with the token strings), then truncation, the
post-processor and padding on `Encoding`s (``mod.rs`` ``post_process``;
``pre_tokenizer.rs`` ``into_encoding``: word ids are split indices).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

from ..encoding import Encoding, concat, merge_with, pad, truncate, with_sequence
from ..errors import LoneSurrogateError, lone_surrogate_in
from ..gc_pause import gc_paused
from ..normalized import NormalizedString
from ..regex.guard import budget
from ..special import SpecialTokens
from ..truncation import Padding, Truncation
from .inputs import TextInput, n_chars, parses_special
from .special_controls import SpecialArg, is_plain, resolve

if TYPE_CHECKING:
    from ..models import Model
    from ..normalizers import Normalizer
    from ..post_processors import PostProcessor
    from ..pre_tokenizers import PreTokenizer
    from .tokenizer import SpecialSplit

__all__ = ["AlignedSplit", "OffsetsPath"]


class AlignedSplit(NamedTuple):
    """One span of the special-token stage, normalized with its alignments to the input."""

    start: int
    end: int
    token_id: int | None  # the special token the span is, or None for text
    normalized: NormalizedString | None  # the text after the normalizer (None for a token)
    parts: list[tuple[NormalizedString, int | None]]  # for the pre-tokenizer: text, or an added token in it


class OffsetsPath:
    """`Tokenizer`'s offsets path (a part of the class, in its own module)."""

    model: Model
    normalizer: Normalizer | None
    pre_tokenizer: PreTokenizer | None
    post_processor: PostProcessor | None
    special_split: SpecialSplit
    truncation: Truncation | None
    padding: Padding | None
    _empty_texts: bool

    if TYPE_CHECKING:
        @property
        def default_special(self) -> SpecialTokens: ...

        def split_special(self, text: str, parse_special: bool) -> list[tuple[int, int, int | None]]: ...

        def _reserved(self, is_pair: bool, add_special: bool) -> int: ...

    def encode_full(self, text: TextInput, *, pair: TextInput | None = None, add_special: bool = True,
                    special: SpecialArg = None,
                    truncation: Truncation | None | bool = True,
                    padding: Padding | None | bool = True) -> Encoding:
        """HF's `Encoding` of `text` (and `pair`): ids, tokens, offsets, word ids, masks, overflows.

        Args:
            text, pair, add_special, special: as for `encode`.
            truncation: a `Truncation` for this call, False for none, True (default)
                for the tokenizer's own (from the file, or `self.truncation`).
            padding: likewise with `Padding`.

        Returns:
            The `Encoding`; offsets are character offsets into the input, as HF's
            Python binding reports them.
        """
        if special is not None and not is_plain(special):  # RAISE, or some markers (`special_controls`)
            tok, mode = resolve(self, special, (text, pair))  # type: ignore[arg-type]
            return tok.encode_full(text, pair=pair, add_special=add_special, special=mode, truncation=truncation,
                                   padding=padding)
        parse_special = parses_special(self.default_special if special is None else special)
        trunc = self.truncation if truncation is True else (truncation or None)
        padding_ = self.padding if padding is True else (padding or None)
        try:
            with gc_paused(), budget(n_chars(text, pair)):  # see the module notes; regex.guard.budget
                enc_a = self._sequence_encoding(text, parse_special, 0)
                enc_b = self._sequence_encoding(pair, parse_special, 1) if pair is not None else None
        except LoneSurrogateError as exc:  # met inside one piece: name its place in the input
            raise lone_surrogate_in([text, pair]) or exc from None
        if trunc is not None:
            la, lb = trunc.lengths(len(enc_a), None if enc_b is None else len(enc_b),
                                   self._reserved(enc_b is not None, add_special))
            enc_a = truncate(enc_a, la, trunc.stride, trunc.direction)
            if enc_b is not None and lb is not None:
                enc_b = truncate(enc_b, lb, trunc.stride, trunc.direction)
        if self.post_processor is not None:
            final = self.post_processor.process(enc_a, enc_b, add_special)
        elif enc_b is not None:
            final = merge_with(with_sequence(enc_a, 0, 0), with_sequence(enc_b, 1, 1))
        else:
            final = enc_a
        if padding_ is not None:
            final = pad(final, padding_.target([len(final)]), padding_.pad_id, padding_.pad_type_id,
                        padding_.pad_token, padding_.direction)
        return final

    def _sequence_encoding(self, text: TextInput, parse_special: bool, type_id: int) -> Encoding:
        if isinstance(text, str):
            return self._text_encoding(text, parse_special, type_id, None)
        if isinstance(text, list) and all(isinstance(word, str) for word in text):
            return concat([self._text_encoding(word, parse_special, type_id, i) for i, word in enumerate(text)])
        raise TypeError(f"expected a str or a list of str (pre-split words), not {type(text).__name__}")

    def aligned_splits(self, text: str, parse_special: bool) -> list[AlignedSplit]:
        """`split_special` and the normalizer, keeping alignments (HF ``extract_and_normalize``):
        one `AlignedSplit` per span, with what the pre-tokenizer takes from it."""
        added, normalizer = self.special_split, self.normalizer
        out: list[AlignedSplit] = []
        for start, end, token_id in self.split_special(text, parse_special):
            ns = NormalizedString.from_original(text[start:end], start)
            if token_id is not None:
                out.append(AlignedSplit(start, end, token_id, None, [(ns, token_id)]))
                continue
            if normalizer is not None:
                normalizer.normalize_aligned(ns)
            if not ns.text and not self._empty_texts:
                parts: list[tuple[NormalizedString, int | None]] = []
            elif not added.has_normalized:
                parts = [(ns, None)]
            else:
                found = added.split_normalized(ns.text, parse_special)
                parts = [(ns.slice(s2, e2), id2) for s2, e2, id2 in found if e2 > s2]
            out.append(AlignedSplit(start, end, None, ns, parts))
        return out

    def pre_tokens_aligned(self, piece: NormalizedString) -> list[NormalizedString]:
        """`pre_tokens`, keeping each word's alignment to the input."""
        if self.pre_tokenizer is None:
            return [piece]
        return self.pre_tokenizer.pre_tokenize_aligned(piece)

    def model_tokens(self, word: str) -> list[tuple[int, str, int, int]]:
        """The model stage on one word, with HF's token strings: ``(id, token, start, end)``,
        `start`/`end` character offsets into `word`."""
        model = self.model
        return [(id_, model.token_value(id_, word, a, b), a, b) for id_, a, b in model.tokenize_spans(word)]

    def _text_encoding(self, text: str, parse_special: bool, type_id: int, word_index: int | None) -> Encoding:
        pieces: list[tuple[NormalizedString, int | None]] = []
        for split in self.aligned_splits(text, parse_special):
            for ns, token_id in split.parts:
                if token_id is not None:
                    pieces.append((ns, token_id))
                else:
                    pieces.extend((p, None) for p in self.pre_tokens_aligned(ns))
        ids: list[int] = []
        tokens: list[str] = []
        offsets: list[tuple[int, int]] = []
        words: list[int | None] = []
        for index, (ns, token_id) in enumerate(pieces):
            word = index if word_index is None else word_index
            found = [(token_id, ns.text, 0, len(ns.text))] if token_id is not None else self.model_tokens(ns.text)
            for id_, token, a, b in found:
                ids.append(id_)
                tokens.append(token)
                offsets.append(ns.offsets(a, b) if b > a else ns.position(a))
                words.append(word)
        n = len(ids)
        return Encoding(ids, tokens, offsets, words, [type_id] * n, [0] * n, [1] * n)
