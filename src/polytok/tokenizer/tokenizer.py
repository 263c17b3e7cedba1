"""`Tokenizer`: runs the five stages, for every format.

    text ─► special-token split ─► normalize ─► pre-tokenize ─► model ─► post-process ─► ids
    ids  ─► decode (pieces ─► text, or a stream of text deltas)

Glossary, used everywhere in polytok:
- ``id``: an int, a row of the embedding matrix;
- ``piece``: a vocabulary entry as stored, e.g. ``"Ġthe"``, ``"▁the"``, ``"<0x0A>"``;
- ``token_bytes``: the raw bytes a piece stands for;
- ``rank``: BPE merge priority, lower merges first (BPE / tiktoken);
- ``score``: a log-probability or priority, higher is better (SentencePiece / Unigram);
- ``special``: an entry of the special/added-token table (`polytok.special`);
- ``control``, ``user_defined``, ``byte``: the GGUF token types, as llama.cpp names them.

The order of the stages and how they meet follows HF tokenizers 0.23.3
``tokenizers/src/tokenizer/mod.rs`` (``encode_single_sequence``,
``post_process``, ``decode``) and ``pre_tokenizer.rs`` (``into_encoding``:
word ids are split indices). `encode` is the fast path: plain strings and id
lists, no offsets (this module). `encode_full` keeps a `NormalizedString` per
piece to report HF's `Encoding` (`offsets`); both end in `post_process`.

Both run with Python's cyclic garbage collector paused (`gc_pause`): the stages build no
reference cycles, only many short-lived tuples and lists, and the collections they set
off were pure cost (bench/README.md has the measurements). The collector is switched
back on when the call returns, if it was on when the call started.
"""

from __future__ import annotations

import gc
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol

from ..decoders import IdsDecoder
from ..decoders.chain_decoder import ChainDecoder
from ..errors import EmptyMatchError, LoneSurrogateError, lone_surrogate_in
from ..facts import FormatFacts
from ..gc_pause import collect_young, gc_paused
from ..kernels import kernel
from ..models import Model
from ..normalizers import Normalizer
from ..post_processors import PostProcessor
from ..pre_tokenizers import PreTokenizer
from ..regex import guard
from ..regex.guard import budget
from ..special import AddedToken, AddedVocabulary, SpecialTokens, with_empty_texts
from ..token_ids import as_id, as_ids
from ..truncation import Padding, Truncation
from .inputs import TextInput, n_chars, parses_special
from .offsets import OffsetsPath
from .post_process import PostProcess
from .special_controls import SpecialArg, is_plain, resolve

if TYPE_CHECKING:
    from ..decoders.stream import DecodeStream


__all__ = ["Tokenizer", "SpecialSplit"]

ONE_CALL_CHARS = 500  # `encode` of a text this long goes through `batch_pipeline` where it applies


class SpecialSplit(Protocol):
    """Cuts text around special tokens: HF's `AddedVocabulary` or llama.cpp's `LongestFirstPartition`."""

    @property
    def has_normalized(self) -> bool: ...

    def split_raw(self, text: str, parse_special: bool) -> list[tuple[int, int, int | None]]: ...

    def split_normalized(self, text: str, parse_special: bool) -> list[tuple[int, int, int | None]]: ...

    def cuts_text(self, parse_special: bool) -> bool: ...


class Tokenizer(PostProcess, OffsetsPath):
    """A loaded tokenizer. Build one with `polytok.load`."""

    def __init__(
        self,
        model: Model,
        *,
        normalizer: Normalizer | None = None,
        pre_tokenizer: PreTokenizer | None = None,
        post_processor: PostProcessor | None = None,
        decoder: IdsDecoder | None = None,
        added_tokens: list[AddedToken] | None = None,
        truncation: Truncation | None = None,
        padding: Padding | None = None,
        special_split: SpecialSplit | None = None,
        facts: FormatFacts | None = None,
    ) -> None:
        self.model = model
        self.normalizer = normalizer
        self.pre_tokenizer = pre_tokenizer
        self.post_processor = post_processor
        self.truncation = truncation
        self.padding = padding
        #: what the reader learnt besides the pipeline: format, files, named tokens, chat facts
        self.facts = facts if facts is not None else FormatFacts()
        self.added = AddedVocabulary()
        if added_tokens:
            self.added.add_tokens(added_tokens, model, normalizer)
        # HF's added vocabulary splits the text unless a format brings its own rule (llama.cpp's partition)
        self.special_split: SpecialSplit = special_split if special_split is not None else self.added
        #: the decode stage; without one, HF's: the pieces, joined with spaces
        self.decoder: IdsDecoder = decoder if decoder is not None else ChainDecoder(None, model, self.added)
        self._refresh_fast_path()

    @property
    def default_special(self) -> SpecialTokens:
        """What ``special=None`` means: the format's reference engine's plain call
        (PARSE for tokenizer.json and GGUF; AS_TEXT for .model, tiktoken, tekken)."""
        return self.facts.default_special

    @property
    def special_ids(self) -> Mapping[str, int]:
        """The named special ids the format declares ("bos", "eos", "eot", "sep", "pad", "fim_pre", …)."""
        return self.facts.special_ids

    @property
    def eog_ids(self) -> frozenset[int]:
        """The ids that end a generation (llama.cpp's EOG set; elsewhere the EOS)."""
        return self.facts.eog_ids

    @property
    def special_token_ids(self) -> frozenset[int]:
        """Every control/special id of the format (`polytok.vocab_bytes.special_token_ids` has the rule per format)."""
        from ..vocab_bytes import special_token_ids

        return special_token_ids(self)

    def vocab_bytes(self) -> list[bytes | None]:
        """`token_bytes` of every id below `n_vocab`, None where no token has the id (`polytok.vocab_bytes`)."""
        from ..vocab_bytes import vocab_bytes

        return vocab_bytes(self)

    def _refresh_fast_path(self) -> None:
        pt = self.pre_tokenizer
        exact = pt is None or pt.exact_without_alignment
        # subtle: a piece cut by a normalized added token starts where the alignment says,
        # which the fast path does not track; only Metaspace("first") cares.
        if pt is not None and self.special_split.has_normalized and self.normalizer is not None \
                and pt.reads_origin:
            exact = False
        self._fast_exact = exact
        # tiktoken's split of a pattern that matches the empty text: each empty text between
        # special tokens is pre-tokenized too (`special.with_empty_texts`)
        self._empty_texts = pt is not None and pt.splits_empty_text
        self.__dict__.pop("_cuts_known", None)  # (`_special_stops` asks again)

    def with_special_split(self, split: SpecialSplit) -> Tokenizer:
        """A copy that cuts texts around special tokens with `split`, sharing every other stage
        (`special_controls` makes its splits that parse only some markers)."""
        made: Tokenizer = Tokenizer.__new__(Tokenizer)
        made.__dict__.update(self.__getstate__())  # without the compiled pipeline and the split's facts
        made.special_split = split
        made._refresh_fast_path()
        return made

    @property
    def fast_path(self) -> bool:
        """Whether `encode` takes the fast path (plain strings, no alignments; `segments` and
        `piece_ids`) rather than `encode_full`'s ids: false only where a piece's original
        offset matters and the fast path cannot know it."""
        return self._fast_exact

    def add_tokens(self, tokens: list[AddedToken]) -> None:
        """Add entries to the added vocabulary in one call (HF ``add_tokens`` id rules)."""
        self.added.add_tokens(tokens, self.model, self.normalizer)
        self._refresh_fast_path()

    # -- vocabulary -------------------------------------------------------------------

    def __len__(self) -> int:
        """How many distinct tokens the vocabulary holds, added tokens included: HF
        ``get_vocab_size(with_added_tokens=True)``.

        This is not the largest id + 1 where the ids have gaps: cl100k_base has 100,261
        tokens but ids up to 100,276 (``<|endofprompt|>``). Use `n_vocab` for the size of an
        id table (an embedding matrix, a ``uint16``/``uint32`` choice).
        """
        overlap = sum(1 for c in self.added.content_to_id if self.model.token_to_id(c) is not None)
        return self.model.vocab_size() + len(self.added) - overlap

    @property
    def n_vocab(self) -> int:
        """The largest id + 1 (tiktoken ``Encoding.n_vocab``): every id is below it.

        Equal to ``len(tok)`` when the ids run from 0 without gaps; larger where they
        do not (tiktoken's cl100k_base: ``len`` 100,261, ``n_vocab`` 100,277).
        """
        top = max(self.model.get_vocab().values(), default=-1)
        return max(top, max(self.added.id_to_entry, default=-1)) + 1

    def token_to_id(self, token: str) -> int | None:
        found = self.added.token_to_id(token)
        return found if found is not None else self.model.token_to_id(token)

    def id_to_token(self, id: int) -> str | None:
        """The token of `id` (any integer type, as HF's ``id_to_token``); None when no token has it.

        Raises:
            DecodeError: `id` is not an integer (a float, a string …).
        """
        id = as_id(id)
        found = self.added.decode_string(id)
        return found if found is not None else self.model.id_to_token(id)

    def get_vocab(self) -> dict[str, int]:
        vocab = dict(self.model.get_vocab())
        vocab.update(self.added.content_to_id)
        return vocab

    # -- encode: fast path ------------------------------------------------------------

    def encode(self, text: TextInput, *, pair: TextInput | None = None, add_special: bool = True,
               special: SpecialArg = None) -> list[int]:
        """Token ids of `text` (and `pair`).

        Args:
            text: the input; a list of strings is taken as pre-split words.
            pair: an optional second sequence.
            add_special: add the post-processor's special tokens (HF ``add_special_tokens``).
            special: `SpecialTokens.PARSE` parses special-token markers in the text
                (HF's default); `SpecialTokens.AS_TEXT` reads them as plain text
                (HF ``encode_special_tokens=True``); `SpecialTokens.RAISE` refuses them
                (tiktoken's default); a collection of markers parses those and reads the
                others as text (tiktoken's ``allowed_special``), `polytok.AllowedSpecial`
                can refuse the others instead; None (default) is the format's reference
                default, `default_special`.

        Returns:
            The ids, as the format's reference engine gives them.

        Raises:
            EncodeError: where the reference engine raises too (e.g. a missing unk token), and
                for a marker `special` refuses.
        """
        if special is not None and not is_plain(special):  # RAISE, or some markers (`special_controls`)
            tok, mode = resolve(self, special, (text, pair))
            return tok.encode(text, pair=pair, add_special=add_special, special=mode)
        if not self._fast_exact:
            return self.encode_full(text, pair=pair, add_special=add_special, special=special).ids
        parse_special = parses_special(self.default_special if special is None else special)
        if type(text) is str and len(text) >= ONE_CALL_CHARS and pair is None:
            # a long text no special token can cut: every stage in one compiled call
            pipeline = self.batch_pipeline(parse_special)
            if pipeline is not None:
                found = pipeline.encode([text], 0, 1)[0]
                if found is not None:
                    return self._finish_ids(found, None, add_special)
        # the collector paused (see the module notes), as `gc_paused` does, without a context object per call
        collecting = gc.isenabled()
        gc.disable()
        try:
            if guard.bounded_in_use():  # one deadline for every bounded match (regex.guard.budget)
                size = len(text) if pair is None and type(text) is str else n_chars(text, pair)
                with budget(size):
                    return self._ids(text, pair, parse_special, add_special)
            return self._ids(text, pair, parse_special, add_special)
        except LoneSurrogateError as exc:  # met inside one piece: name its place in the input
            raise lone_surrogate_in([text, pair]) or exc from None
        except EmptyMatchError:  # placed within one piece: the aligned path names its place in the input
            return self.encode_full(text, pair=pair, add_special=add_special, special=special).ids
        finally:
            if collecting:
                gc.enable()

    def _ids(self, text: TextInput, pair: TextInput | None, parse_special: bool, add_special: bool) -> list[int]:
        ids_a = self._sequence_ids(text, parse_special)
        ids_b = self._sequence_ids(pair, parse_special) if pair is not None else None
        return self._finish_ids(ids_a, ids_b, add_special)

    def encode_batch(self, texts: list[TextInput], *, add_special: bool = True,
                     special: SpecialArg = None, workers: int | None = None) -> list[list[int]]:
        """`encode` of each text; padding (if configured) goes to the longest of the batch.

        Args:
            texts: the inputs.
            add_special: as for `encode`.
            special: as for `encode`.
            workers: processes to share the work (`polytok.parallel`), or threads where
                every stage has a compiled form (`batch_pipeline`); None (default) uses
                every core for batches of at least `parallel.MIN_CHARS` characters
                (`parallel.threads.THREAD_MIN_CHARS` on threads), 1 encodes in this
                thread. The ids are the same either way.
        """
        from .. import parallel

        if workers is not None and workers < 1:
            raise ValueError(f"workers must be >= 1, not {workers}")
        if special is not None and not is_plain(special):  # RAISE, or some markers (`special_controls`)
            tok, mode = resolve(self, special, texts, batch=True)
            return tok.encode_batch(texts, add_special=add_special, special=mode, workers=workers)
        pipeline = self.batch_pipeline(parses_special(self.default_special if special is None else special))
        if pipeline is not None and all(type(t) is str for t in texts):
            return self._encode_compiled(pipeline, texts, workers, add_special, special)  # type: ignore[arg-type]
        if workers is None:
            big = len(texts) > 1 and sum(len(t) for t in texts) >= parallel.MIN_CHARS
            workers = parallel.available_workers() if big else 1
        if workers < 1:
            raise ValueError(f"workers must be >= 1, not {workers}")
        if workers > 1 and len(texts) > 1 and parallel.can_fork():
            out = parallel.encode_in_pool(self, texts, add_special=add_special, special=special,
                                          workers=min(workers, len(texts)))
        else:
            with gc_paused():  # the collector held off between texts too, not only within each (module notes)
                out = [self.encode(t, add_special=add_special, special=special) for t in texts]
            collect_young()  # the batch's own young objects, not in the caller's next call
        if self.padding is not None:
            target = self.padding.target([len(ids) for ids in out])
            out = [self._pad_ids(ids, target) for ids in out]
        return out

    def batch_pipeline(self, parse_special: bool) -> Any:
        """Every stage chained in compiled code (``polytok._kernels.batch.Pipeline``), or None
        where a stage has no compiled form or a text could hold a special token in this mode.

        The pipeline runs the fast path's stages for a text with no special token (the
        normalizer on the whole text, the pre-tokenizer, the model on each word) with the
        GIL released, so `encode_batch` shares a batch over threads; what it leaves
        undecided for a text goes to `encode`.
        """
        module = kernel("batch")
        model = self.model.batch_kernel() if module is not None else None  # the cheap test first: most models have none
        stops = self._special_stops(parse_special) if model is not None else None
        if stops is None or not self._fast_exact or self._empty_texts:
            return None
        normalizer: tuple[Any, str, bool, bool, bool] = (None, "", False, False, False)
        if self.normalizer is not None:
            form = self.normalizer.batch_kernel()
            if form is None:
                return None
            normalizer = form
        split: str | int = ""
        if self.pre_tokenizer is not None:
            found = self.pre_tokenizer.batch_split()
            if found is None and not _cuts_nothing_after(self.pre_tokenizer, normalizer[0]):
                return None
            split = "" if found is None else found
        # the same stages keep the same pipeline, and with it the word cache it keeps across calls
        stages = (*normalizer, split, model, stops)
        kept = self.__dict__.get("_batch_kept")
        if kept is not None and kept[0] == stages:  # (the kernels' objects compare by identity)
            return kept[1]
        pipeline = module.Pipeline(*stages)
        self._batch_kept = (stages, pipeline)
        return pipeline

    def _special_stops(self, parse_special: bool) -> str | None:
        """The characters a text must not hold for `batch_pipeline` to take it in this mode: ""
        where no special token can cut a text; the first character of every added token where
        each is matched in the raw text (a text holding none of them holds no token); else
        None. Remembered while the split and the added vocabulary's size stay the same (asked
        on every long `encode`; a scan of every entry)."""
        split, size = self.special_split, len(self.added)
        known = self.__dict__.setdefault("_cuts_known", {})
        found = known.get(parse_special)
        if found is None or found[0] is not split or found[1] != size:
            stops: str | None = ""
            if split.cuts_text(parse_special):
                contents = [token.content for token in self.added.id_to_entry.values()]
                stops = None
                if split is self.added and not split.has_normalized and all(contents):
                    stops = "".join(sorted({content[0] for content in contents}))
            found = known[parse_special] = (split, size, stops)
        return found[2]  # type: ignore[no-any-return]

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state.pop("_batch_kept", None)  # compiled, not picklable: made again on first use
        state.pop("_cuts_known", None)
        return state

    def _encode_compiled(self, pipeline: Any, texts: list[str], workers: int | None, add_special: bool,
                         special: SpecialTokens | str | None) -> list[list[int]]:
        """`encode_batch` through `batch_pipeline` on threads, `encode` for what it leaves undecided."""
        from ..parallel.fork import available_workers
        from ..parallel.threads import THREAD_MIN_CHARS, encode_on_threads

        if workers is None:
            big = len(texts) > 1 and sum(map(len, texts)) >= THREAD_MIN_CHARS
            workers = available_workers() if big else 1
        with gc_paused():  # many small lists, no cycles (module notes)
            found = encode_on_threads(pipeline, texts if type(texts) is list else list(texts), workers)
            finish = self.truncation is not None or self.padding is not None or self.post_processor is not None
            out: list[list[int]] = []
            for text, ids in zip(texts, found):
                if ids is None:
                    out.append(self.encode(text, add_special=add_special, special=special))
                else:
                    out.append(self._finish_ids(ids, None, add_special) if finish else ids)
        if self.padding is not None:
            target = self.padding.target([len(ids) for ids in out])
            out = [self._pad_ids(ids, target) for ids in out]
        return out

    def _sequence_ids(self, text: TextInput, parse_special: bool) -> list[int]:
        if isinstance(text, str):
            return self._text_ids(text, parse_special)
        if isinstance(text, list) and all(isinstance(word, str) for word in text):
            out: list[int] = []
            for word in text:
                out.extend(self._text_ids(word, parse_special))
            return out
        raise TypeError(f"expected a str or a list of str (pre-split words), not {type(text).__name__}")

    def _text_ids(self, text: str, parse_special: bool) -> list[int]:
        out: list[int] = []
        splits = self.split_special(text, parse_special)
        if len(splits) == 1 and splits[0][2] is None and not self.special_split.has_normalized:
            # the usual text: one span and no token, so the span is the whole text (anything outside
            # it would be a token's span); `segments` would give its one normalized piece
            self.piece_ids(text if self.normalizer is None else self.normalizer.normalize(text), True, out)
            return out
        for piece, at_origin, token_id in self._segments(text, splits, parse_special):
            if token_id is not None:
                out.append(token_id)
            else:
                self.piece_ids(piece, at_origin, out)
        return out

    # -- the stages, one seam each ------------------------------------------------------
    # Every consumer (encode, encode_full, explain, the long-text counter, chat marking)
    # walks the pipeline through these, in HF's order: ``extract_and_normalize`` (special
    # split, normalizer, added tokens found in the normalized text), ``do_pre_tokenize``,
    # ``do_tokenize``, then ``post_process``.

    def split_special(self, text: str, parse_special: bool) -> list[tuple[int, int, int | None]]:
        """The special-token stage: ``(start, end, token id or None)`` spans of `text`, in order.

        A span with an id is that token; the others are the text between tokens. Empty
        spans are left out, except where the pre-tokenizer splits the empty text (a
        tiktoken pattern that matches it: each empty text between tokens is pre-tokenized
        too, `special.with_empty_texts`). `parse_special`: special markers are parsed
        (`SpecialTokens.PARSE`), else only the entries the format always matches.
        """
        splits = self.special_split.split_raw(text, parse_special)
        if self._empty_texts:
            return with_empty_texts(splits, len(text))
        if len(splits) == 1 and splits[0][1] > splits[0][0]:  # the usual text: one span, kept whole
            return splits
        return [s for s in splits if s[2] is not None or s[1] > s[0]]

    def normalize(self, text: str) -> str:
        """The normalizer stage on `text` (the text itself when there is none)."""
        return text if self.normalizer is None else self.normalizer.normalize(text)

    def segments(self, text: str, parse_special: bool) -> list[tuple[str, bool, int | None]]:
        """The special-token stage, then the normalizer: ``(piece, at_origin, token id or None)``.

        A segment with an id is that token (`piece` is its text); the others are normalized
        text between tokens, for `piece_ids`. `at_origin`: the piece starts the input
        (Metaspace ``first`` reads it). Added tokens with ``normalized=True`` are found in
        the normalized text, as HF's ``extract_and_normalize`` finds them.
        """
        return self._segments(text, self.split_special(text, parse_special), parse_special)

    def _segments(self, text: str, splits: list[tuple[int, int, int | None]],
                  parse_special: bool) -> list[tuple[str, bool, int | None]]:
        """`segments` of `text` from its `split_special` spans (`_text_ids` has them already)."""
        added, normalize = self.special_split, self.normalizer
        in_normalized = added.has_normalized
        out: list[tuple[str, bool, int | None]] = []
        for start, end, token_id in splits:
            piece = text[start:end]
            if token_id is not None:
                out.append((piece, start == 0, token_id))
                continue
            if normalize is not None:
                piece = normalize.normalize(piece)
            if not in_normalized:
                out.append((piece, start == 0, None))
                continue
            for s2, e2, id2 in added.split_normalized(piece, parse_special):
                if id2 is not None or e2 > s2:
                    out.append((piece[s2:e2], start == 0 and s2 == 0, id2))
        return out

    def pre_tokens(self, piece: str, at_origin: bool = True) -> list[str]:
        """The pre-tokenizer stage on one normalized piece: its words (``[piece]`` without one)."""
        if self.pre_tokenizer is None:
            return [piece]
        return self.pre_tokenizer.pre_tokenize(piece, at_origin)

    def piece_ids(self, piece: str, at_origin: bool, out: list[int]) -> None:
        """Append the ids of one normalized piece between added tokens: pre-tokenizer, then model."""
        if not piece and not self._empty_texts:
            return
        if self.pre_tokenizer is None:
            out.extend(self.model.tokenize(piece))
            return
        out.extend(self.model.tokenize_all(self.pre_tokenizer.pre_tokenize(piece, at_origin)))

    # -- decode -------------------------------------------------------------------------

    def decode(self, ids: Any, skip_special: bool = False) -> str:
        """The text of `ids`, as the format's reference decodes them.

        Args:
            ids: token ids, of any integer type (``int``, ``numpy.int64`` …, ``bool``),
                as HF tokenizers and tiktoken take them (`polytok.token_ids`); or a 1-d
                numpy array or torch tensor (`polytok.tokenizer.id_arrays`).
            skip_special: leave out special tokens. Default False, as transformers
                and llama.cpp; HF tokenizers' Python binding defaults to True.

        Raises:
            DecodeError: an id that is not an integer or is negative (naming its
                position), or one the format's reference refuses (HF drops ids it
                does not know; llama.cpp, sentencepiece, tiktoken, tekken and rwkv refuse them).
        """
        if type(ids) is not list:
            from .id_arrays import sequence_ids

            ids = sequence_ids(ids)
        return self.decoder.decode(as_ids(ids), skip_special=skip_special)

    def decode_batch(self, sequences: Any, skip_special: bool = False) -> list[str]:
        """`decode` of each sequence: a list of id sequences, or a 2-d numpy array or torch
        tensor (transformers ``batch_decode``). An error names the sequence and position."""
        from .id_arrays import decode_batch

        return decode_batch(self.decode, sequences, skip_special)

    def __call__(self, text: str | list[str], pair: str | list[str] | None = None,
                 **options: Any) -> Mapping[str, Any]:
        """Encode a text or a batch as transformers' tokenizer call does: a `BatchEncoding`
        (a dict, also read by attribute) of ``input_ids``, ``attention_mask`` and, where the
        model takes them, ``token_type_ids``; padded, truncated, as arrays on request.

        Options (keyword-only; `polytok.tokenizer.batch_encoding` has the rules):
        ``add_special``, ``padding`` (False, True, "longest", "max_length"), ``truncation``
        (True, "longest_first", "only_first", "only_second"), ``max_length``, ``stride``,
        ``pad_to_multiple_of``, ``padding_side``, ``return_tensors`` (None, "np", "pt"),
        ``return_attention_mask``, ``return_token_type_ids``, ``return_offsets``,
        ``return_special_tokens_mask``, ``return_length``, ``special``; transformers'
        names ``text_pair``, ``add_special_tokens`` and ``return_offsets_mapping`` too.
        """
        from .batch_encoding import encode_call

        return encode_call(self, text, pair, **options)

    def train_new(self, texts_or_files: Any, vocab_size: int, **trainer_args: Any) -> Tokenizer:
        """This pipeline and its special tokens with a new model of the same kind trained on
        `texts_or_files` (texts, or `os.PathLike` paths read as a corpus), as transformers'
        ``train_new_from_iterator``. The result's ``save(path)`` writes its ``tokenizer.json``;
        `trainer_args` are the trainer's options (`polytok.train.pipeline.train_new`)."""
        from ..train.pipeline import train_new

        return train_new(self, texts_or_files, vocab_size, **trainer_args)

    def as_transformers(self) -> Tokenizer:
        """This tokenizer with the pipeline transformers 5.24.0 builds for it: for a ``tokenizer.json``
        folder whose tokenizer class rebuilds the normalizer, pre-tokenizer, decoder and model options
        in its ``__init__`` (``LlamaTokenizer``, ``GPT2Tokenizer``, ``T5Tokenizer`` …), a tokenizer with
        that pipeline, sharing this one's model where it can; otherwise this tokenizer itself.
        `__call__` encodes with it; `encode` stays HF tokenizers' reading of ``tokenizer.json``.
        Built once (`polytok.tokenizer.transformers_classes` lists the classes and the gaps)."""
        from .transformers_classes import as_transformers

        return as_transformers(self)

    def token_bytes(self, id: int) -> bytes:
        """The bytes token `id` stands for (tiktoken ``decode_single_token_bytes``).

        What decoding writes for the token in the middle of a sequence, special tokens
        written out, before the bytes are read as UTF-8: a token that holds part of a
        character gives its raw bytes. llama.cpp: ``token_to_piece(id, lstrip=0,
        special=true)``; tiktoken and tekken: the token's bytes; sentencepiece: the
        piece with ``▁`` as a space, a byte piece its byte; HF: see
        `polytok.decoders.chain_decoder`.

        Raises:
            DecodeError: `id` is not an integer, or no token has it.
        """
        return self.decoder.token_bytes(as_id(id))

    def decode_stream(self, skip_special: bool = False) -> DecodeStream:
        """An incremental decoder: ``.step(id)`` returns the newly completed text (maybe "")."""
        from ..decoders.stream import DecodeStream

        return DecodeStream(self, skip_special)

    # -- chat ------------------------------------------------------------------------

    def apply_chat_template(self, messages: Any, *, add_generation_prompt: bool = False, tools: Any = None,
                            documents: Any = None, continue_final_message: bool | str = False,
                            tokenize: bool = False, template: str | None = None,
                            content_special: SpecialTokens | str = SpecialTokens.AS_TEXT,
                            state_tokens: int | None = None,
                            state_markers: tuple[str | int, str | int, str | int] = ("<user>", "<assistant>", "<eot>"),
                            return_dict: bool = False, return_assistant_tokens_mask: bool = False,
                            return_role_masks: bool = False,
                            **variables: Any) -> Any:
        """Render `messages` with the model's chat template (transformers 5.x ``apply_chat_template``).

        Args:
            messages: the conversation, a list of ``{"role": …, "content": …}`` dicts.
            add_generation_prompt: end with the header of an assistant turn.
            tools: JSON-schema dicts of the tools the model may call.
            documents: dicts (``title``, ``text``) for retrieval-augmented templates.
            continue_final_message: leave the last message open (True: its ``content``;
                a string: that field), for the model to continue.
            tokenize: return ids instead of text (no BOS/EOS beyond what the template writes).
            template: Jinja source, or the name of one of the file's named templates;
                None picks ``default`` (``tool_use`` when tools are given and it exists).
            content_special: with ``tokenize``, how special-token markers inside
                messages, tools, documents and `variables` are read: ``AS_TEXT``
                (default; transformers' ``sanitize_control_tokens=True``) or
                ``PARSE`` (transformers' default: the rendered text is tokenized as is).
            state_tokens: with ``tokenize``, the k of `polytok.insert_state_tokens`;
                None reads GGUF ``paperkiln.state_tokens.k`` (0 when absent: none).
            state_markers: the (user, assistant, eot) tokens of the state-token rule.
            return_dict: with ``tokenize``, a `BatchEncoding` (``input_ids``, and
                ``attention_mask`` / ``token_type_ids`` where the model takes them) instead of the ids.
            return_assistant_tokens_mask: add ``assistant_masks``: 1 for each id that overlaps
                a ``{% generation %}`` block (transformers' rule; all 0, with a warning,
                when the template has none). Needs ``tokenize`` and ``return_dict``.
            return_role_masks: add ``role_masks``: for each role, 1 for each id that overlaps
                the content (or reasoning) of one of that role's messages; any template
                (`polytok.chat.masks`). Needs ``tokenize`` and ``return_dict``.
            **variables: template variables; they override the tokenizer's own
                (``bos_token=``, ``date_string=`` …).

        Returns:
            The rendered text (a str), its ids with ``tokenize=True`` (a list of int), or
            with ``return_dict=True`` too a `BatchEncoding` (a dict of lists).

        Raises:
            ChatTemplateError: no template, an unknown template name, a syntax
                error (with its line), the template raised (``raise_exception``), or
                masks asked without ``tokenize`` and ``return_dict``.
            StateTokenError: ids that break the state-token rules.
        """
        from ..chat.render import apply_chat_template

        return apply_chat_template(self.as_transformers(), messages, add_generation_prompt=add_generation_prompt,
                                   tools=tools, documents=documents, continue_final_message=continue_final_message,
                                   tokenize=tokenize, template=template, content_special=content_special,
                                   state_tokens=state_tokens, state_markers=state_markers, return_dict=return_dict,
                                   return_assistant_tokens_mask=return_assistant_tokens_mask,
                                   return_role_masks=return_role_masks, **variables)

    def __repr__(self) -> str:
        return f"<polytok.Tokenizer {self.facts.format} {self.facts.source} vocab={len(self)}>"


def _cuts_nothing_after(pre_tokenizer: Any, replace: Any) -> bool:
    """Whether `pre_tokenizer` leaves every text the normalizer's batch form gives as one word,
    where that form is a literal ``Replace`` (``(pattern, content)``, see
    `normalizers.replace.Replace.batch_kernel`): of one character, by a content without it,
    it leaves no text holding that character, and a literal ``Split`` whose pattern holds it
    matches nowhere (gemma3's ``Replace(" ", "▁")`` then ``Split(" ")``)."""
    if not isinstance(replace, tuple):
        return False
    pattern, content = replace
    if pattern in content:
        return False
    from ..pre_tokenizers.split import Split

    return isinstance(pre_tokenizer, Split) and pre_tokenizer.never_cuts_without(pattern)
