"""BPE model (rank merges): the ``"BPE"`` model of ``tokenizer.json``.

Reproduces HF tokenizers 0.23.3, tokenizers/src/models/bpe/model.rs
(``BPE::merge_word``, ``BPE::tokenize_with_cache``, ``Model::tokenize``); the
merge loops (word.rs) are in `_bpe_word`, the reading of ``merges``
(serialization.rs, ``BpeBuilder::build``) in `_bpe_merges`.

Tokenizing a word (one pre-token):

* ``ignore_merges``: a word that is itself a vocabulary entry is that one token.
* One symbol per character; ``continuing_subword_prefix`` is put before every
  character but the first, ``end_of_word_suffix`` after the last.
* A character (with its affixes) missing from the vocabulary becomes, with
  ``byte_fallback``, one ``<0xHH>`` token per UTF-8 byte of it *and its
  affixes* if all exist; else an ``unk_token`` symbol (consecutive ones fused
  with ``fuse_unk``); with ``unk_token`` null it is silently dropped.
  subtle: HF appends byte-fallback tokens *before* a still-pending unk symbol,
  so ``"éx"`` (é unknown, x byte-fallback) comes out as ``<0x78>, <unk>``.
  That is ``unknown_chars="drop"``; llama.cpp keeps the character (below).
* Symbols merge by rank, lowest first, leftmost first among equals (see
  `_bpe_word` for the exact rule).
* ``dropout`` p: each merge candidate is skipped with probability p; the
  result is then random, in HF as here (``random.random``). ``dropout`` 0 or
  null is none. With p > 0 HF bypasses both its cache and ``ignore_merges``;
  so does polytok.

Offsets: `tokenize_spans` keeps HF's per-symbol byte lengths and turns the byte
ranges into the characters of the word that hold them (a dropped character
takes no bytes, so later tokens shift left, as in HF). Known divergence: with
``byte_fallback`` *and* an affix, HF counts the affix bytes too and its offsets
run past the word (into neighbouring text); polytok clamps them to the word.
The ids are the same.

Performance:

* The word loop runs compiled (`polytok._kernels.bpe_merge`, when built): `tokenize_all` is
  one C call over the words -- the cache lookup, the cut below, the initial symbols with the
  unknown-character rules, the merge loops (with tiktoken's ranks looked up without building
  the concatenation) and the cache's bound, all as the pure code here does them, into the same
  cache. Dropout and affixes keep the pure loop; so does a word the pure loop raises on (it
  raises there). The compiled tables are built on first use, like the pair dict, and dropped
  when pickling. A ``byte_level`` model's compiled loop is its own (below).
* A per-model dict caches word -> ids (up to ``CACHE_SIZE`` words under
  ``CACHED_WORD_CHARS`` characters (`models._cache`); cleared when full). HF caches 10k words
  under 256 bytes; the cache never changes results.
* Long words are cut into chunks that merge independently, so each chunk is
  cached on its own. SentencePiece-style models (Llama-2, Mistral, Gemma) have
  no pre-tokenizer: the model sees a whole text as one word, which HF merges
  from scratch every time. The cut goes before each occurrence of the mark
  (the most common first character of multi-character tokens, ``▁`` there),
  unless the character before it occurs right before the mark inside some
  vocabulary token (``▁`` does: ``▁▁``); both characters must be tokens by
  themselves. No merge result then spells across the cut, so no merge crosses
  it and each side merges exactly as it would inside the whole word. It
  needs one id per token (merges are keyed by ids) and is off with affixes,
  ``ignore_merges`` (a chunk could be a whole-word hit) and dropout.
* The pair -> rank dict is built on first use (a third of the load time).
* A word over 4096 symbols merges in `_bpe_word.merge_tree` wherever the list
  scan is exact: memory ~25 bytes per symbol, where a heap of tuples took ~200 (a
  megabyte of one letter, one word for GPT-2's pattern, peaked at +200 MB), at
  1.4-2.2x the time per symbol. Shorter words take the packed heap (~70 bytes per
  symbol, the fastest loop above 48). Words of 256 characters or more are not
  cached, so a long word keeps no ids alive.

``unknown_chars`` -- when a character missing from the vocabulary leaves the word:

* ``"drop"`` (HF tokenizers, ``BPE::merge_word``; ``tokenizer.json``): before
  merging, as above, so its neighbours may merge across it.
* ``"block"`` (llama.cpp, llama-cpp-python 0.3.36 src/llama-vocab.cpp
  ``llm_tokenizer_bpe_session::tokenize``; GGUF): it stays a symbol that no
  merge takes in or crosses; only the writing of the ids drops it, or spells
  its bytes (`_bpe_word`'s notes). Merges ``a b``, ``ab c`` and no ``x``:
  ``"axbc"`` is ``abc`` by "drop", ``a``, ``b``, ``c`` by "block".

``merge_priority`` -- which pairs merge, and in what order:

* ``"merges"`` (HF tokenizers, llama.cpp): only the pairs listed in ``merges``
  merge; a pair's rank is its line.
* ``"token_id"`` (tiktoken 0.14.0, src/lib.rs ``_byte_pair_merge`` and
  ``_byte_pair_merge_large``; mistral-common's Tekkenizer runs the same code):
  there is no merges list. Any two adjacent symbols whose concatenation is a
  vocabulary entry may merge, and that entry's id is the pair's rank (tiktoken's
  ids are its ranks), lowest first, leftmost among equals. tiktoken looks the
  concatenated *bytes* up; here symbols are ids, so the pair's rank is the id of
  ``piece(left) + piece(right)``. Both of tiktoken's loops (the list scan under
  100 bytes, the heap above) give the same result, and so do `merge_scan` and
  `merge_heap` here: a merged symbol only grows, so a stale heap entry never
  spells its old concatenation again. Performance: the lookup is a Python
  function (two dict lookups, one concatenation), several times the cost of a
  tuple-keyed ``get``; it only runs for words that are not vocabulary entries
  themselves (with ``ignore_merges``, as tiktoken). Rejected: precomputing the
  pair dict from every split of every entry (measured far slower than tiktoken's
  whole load; bench/README.md, 'Measurements behind design choices'). An empty
  word is the entry of no text when there is one (tiktoken's
  ``encoder.get(piece)`` comes first, lib.rs ``encode_ordinary``; only a Split
  keeping empty matches passes one), else no token; HF returns none for an empty
  word before any lookup.

``byte_level`` -- what a word is:

* False (HF tokenizers, llama.cpp): a word arrives spelt as the vocabulary is; for a
  byte-level vocabulary HF's ByteLevel pre-tokenizer has written its bytes in the GPT-2
  alphabet.
* True (tiktoken 0.14.0, src/lib.rs ``CoreBPE::encode_ordinary``, ``byte_pair_encode``:
  a piece's UTF-8 bytes merge; with ``merge_priority="token_id"`` only): a word is text.
  The pure loops run on its byte form (`_bpe_bytes`), the cache holds it as text, and
  `tokenize_spans` gives spans over its characters (a token covers each character it holds
  a byte of, as HF's offsets through ByteLevel's alignments). The pipeline then has no
  byte-mapping stage, and the compiled loop (when every byte is an entry and no two
  entries share an id) reads the bytes from the text itself: entries keyed by their bytes
  (one and two bytes by direct index, 3 to 8 bytes packed in an integer in one table per
  length, longer ones by hash, checked byte for byte), the list scan up to 64 bytes and the
  heap above (the same result, as above), and a word cache of its own in C, keyed by the
  word's code units and kind, with `WordCache`'s bounds. That cache replaced a dict probe
  of a fresh str per word (a str hash and a compare of two objects), the larger share of a
  warm encode; the Python `WordCache` then only holds what the pure loop ran.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from itertools import accumulate, chain, repeat
from typing import Any, Literal

from .._config import join, optional, required
from ..bounded_cache import BoundedCache
from ..errors import EncodeError, FormatError, not_utf8
from ..gc_pause import gc_paused
from ..kernels import kernel
from ..text.byte_alphabet import BYTES_TO_CHARS
from ._bpe_bytes import batch_merger, byte_form, char_spans
from ._bpe_cut import cut_mark
from ._bpe_merges import UnknownMergeToken, as_f32, json_merge_ids, merge_ids, pair_lists, read_merges
from ._bpe_word import BLOCKED, merge_heap, merge_scan, merge_tree, write_blocked, write_blocked_spans
from ._cache import CACHE_SIZE, CACHED_WORD_CHARS, WordCache
from ._vocab import VocabLookup, byte_spans_to_chars, invert, read_vocab, utf8_len

__all__ = ["BPE", "UnknownMergeToken"]

_SCAN_UP_TO = 48  # symbols; the list scan is faster up to about this length
_CUT_FROM = 8  # characters; longer words are cut where no merge can cross
_TREE_FROM = 4096  # symbols; `merge_tree` above, wherever `merge_scan` is exact (it saves memory, not time)
_BYTE_CHARS = frozenset(BYTES_TO_CHARS)


class BPE(VocabLookup):
    """Byte-pair encoding with ranked merges, as HF ``models::bpe::BPE``.

    Args:
        vocab: ``{token: id}``.
        merges: ``(left, right)`` token pairs, lowest rank first.
        dropout: merge-skip probability in ``[0, 1]``; 0 or None is none (HF default None).
        unk_token: token for characters missing from the vocabulary; None drops them.
        continuing_subword_prefix: put before every character but a word's first.
        end_of_word_suffix: put after a word's last character.
        fuse_unk: fuse consecutive unknown characters into one unk token.
        byte_fallback: spell unknown characters as ``<0xHH>`` byte tokens when all exist.
        ignore_merges: a word that is a vocabulary entry is returned whole.
        merge_priority: ``"merges"`` (HF, default): the listed pairs merge, by line;
            ``"token_id"`` (tiktoken): a pair whose concatenation is an entry merges,
            that entry's id is its rank; `merges` must then be empty (see the module notes).
        unknown_chars: ``"drop"`` (HF, default): a character missing from the vocabulary
            leaves the word before merging; ``"block"`` (llama.cpp): it stays a symbol no
            merge crosses until the ids are written (see the module notes).
        byte_level: words are text whose UTF-8 bytes merge, the vocabulary spelling bytes in the
            GPT-2 byte alphabet (tiktoken; with ``merge_priority="token_id"``); False (HF,
            default): words arrive spelt as the vocabulary is (HF's ByteLevel pre-tokenizer
            writes them in that alphabet).

    Raises:
        FormatError: a merge token is missing from the vocabulary (`UnknownMergeToken`),
            or dropout is outside ``[0, 1]``.
    """

    _empty_word: tuple[int, ...] = ()  # an empty word's ids (merge_priority="token_id", see the module notes)
    _byte_level = False  # words are text whose UTF-8 bytes merge (see the module notes)

    def __init__(self, vocab: dict[str, int], merges: Sequence[tuple[str, str]], *,
                 dropout: float | None = None, unk_token: str | None = None,
                 continuing_subword_prefix: str | None = None, end_of_word_suffix: str | None = None,
                 fuse_unk: bool = False, byte_fallback: bool = False, ignore_merges: bool = False,
                 merge_priority: Literal["merges", "token_id"] = "merges",
                 unknown_chars: Literal["drop", "block"] = "drop", byte_level: bool = False) -> None:
        if merge_priority not in ("merges", "token_id"):
            raise ValueError(f"merge_priority must be 'merges' or 'token_id', not {merge_priority!r}")
        if merge_priority == "token_id" and merges:
            raise ValueError("merge_priority='token_id' takes no merges list (the vocabulary ranks the pairs)")
        if unknown_chars not in ("drop", "block"):
            raise ValueError(f"unknown_chars must be 'drop' or 'block', not {unknown_chars!r}")
        if byte_level and merge_priority != "token_id":
            raise ValueError("byte_level=True (tiktoken's model) takes merge_priority='token_id'")
        self._byte_level = byte_level  # before `_setup`: it chooses the kernel
        if unknown_chars == "block" and (unk_token is not None or fuse_unk or continuing_subword_prefix
                                         or end_of_word_suffix or merge_priority != "merges"):
            raise ValueError("unknown_chars='block' (llama.cpp's rule) takes no unk_token, fuse_unk, affix or"
                             " merge_priority='token_id'")
        self._setup(vocab, [a for a, _ in merges], [b for _, b in merges], dropout=dropout,
                    unk_token=unk_token, continuing_subword_prefix=continuing_subword_prefix,
                    end_of_word_suffix=end_of_word_suffix, fuse_unk=fuse_unk,
                    byte_fallback=byte_fallback, ignore_merges=ignore_merges)
        self._block = unknown_chars == "block"
        if merge_priority == "token_id":
            self._rank_by_token_id()
        if byte_level:
            self._can_cut = False  # the cache holds words as text; chunks would be byte forms

    @classmethod
    def from_columns(cls, vocab: dict[str, int], lefts: list[str], rights: list[str], *, ignore_merges: bool,
                     byte_fallback: bool, pieces: list[str] | None = None) -> BPE:
        """``BPE(vocab, list(zip(lefts, rights)), ignore_merges=..., byte_fallback=..., unknown_chars="block")``
        (llama.cpp's model) without the pairs, and keeping `vocab` itself: the caller gives it up. `pieces`:
        every id's token when `vocab` is ``{pieces[i]: i}``, each piece once; the model keeps it as its
        id -> token table (a fifth of the memory of the ``{id: token}`` dict)."""
        self = cls.__new__(cls)
        self._setup(vocab, lefts, rights, dropout=None, unk_token=None, continuing_subword_prefix=None,
                    end_of_word_suffix=None, fuse_unk=False, byte_fallback=byte_fallback, ignore_merges=ignore_merges,
                    copy_vocab=False, pieces=pieces)
        self._block = True
        return self

    def _setup(self, vocab: dict[str, int], lefts: list[str], rights: list[str], *, dropout: float | None,
               unk_token: str | None, continuing_subword_prefix: str | None, end_of_word_suffix: str | None,
               fuse_unk: bool, byte_fallback: bool, ignore_merges: bool,
               ids: tuple[list[int], list[int], list[int], bool] | None = None, copy_vocab: bool = True,
               pieces: list[str] | None = None) -> None:
        """`ids`: ``merge_ids(vocab, lefts, rights, prefix)`` when the reader has it (then `lefts` and
        `rights` are unused); `copy_vocab` False: the model keeps `vocab` itself."""
        if dropout is not None and not 0.0 <= dropout <= 1.0:
            raise FormatError("Dropout should be between 0 and 1, inclusive", key="dropout")
        self._vocab = dict(vocab) if copy_vocab else vocab
        self._vocab_r: dict[int, str] | list[str] = invert(self._vocab) if pieces is None else pieces
        self._dropout = dropout or None
        self._unk_token = unk_token
        self._prefix = continuing_subword_prefix or ""
        self._suffix = end_of_word_suffix or ""
        self._fuse_unk = fuse_unk
        self._ignore_merges = ignore_merges
        self._byte_ids = ([self._vocab.get(f"<0x{b:02X}>") for b in range(256)] if byte_fallback else None)
        left_ids, right_ids, self._results, growing = ids or merge_ids(self._vocab, lefts, rights, self._prefix)
        # The pair -> rank dict is built on first use: it is a third of the load time.
        self._pair_ids: tuple[list[int], list[int]] | None = (left_ids, right_ids)
        self._ranks: dict[tuple[int, int], int] | None = None
        self._no_rank = max((1 << 30) - 1, len(left_ids))
        injective = len(self._vocab_r) == len(self._vocab)
        self._scan_limit = _SCAN_UP_TO if growing and injective else 0
        self._cache = WordCache()
        self._plain = not self._prefix and not self._suffix and injective
        self._can_cut = self._plain and not ignore_merges and not self._dropout
        self._cut_mark: str | None = None  # found on first use
        self._cut_after: frozenset[str] = frozenset()
        self._token_rank_of: Any = None  # merge_priority="token_id" (`_rank_by_token_id`)
        self._block = False  # unknown_chars="block"
        self._choose_kernel()

    def _choose_kernel(self) -> None:
        """The compiled word loop, where it covers the model: no dropout, no affixes, ids that fit
        its tables (`_merger` is then built on first use, as the pair ranks are)."""
        ids = self._vocab_r
        self._top: int | None = None  # the largest id, read on first ask (`_top_id`)
        plain = not self._dropout and not self._prefix and not self._suffix
        if self._byte_level:  # the kernel merges bytes only for tiktoken's rule, every byte a token
            vocab = self._vocab
            plain = plain and len(ids) == len(vocab) and not self._block \
                and self._unk_token is None and self._byte_ids is None and vocab.keys() >= _BYTE_CHARS
        module = kernel("bpe_merge") if plain else None  # (None on the pure path: no pass over the ids)
        fits = module is not None and (isinstance(ids, list) or not ids
                                       or (min(ids) >= 0 and self._top_id() < 4 * len(ids) + (1 << 16)))
        self._kernel: Any = module if fits else None
        self._merger: Any = None

    @classmethod
    def from_config(cls, d: dict[str, Any], path: str) -> BPE:
        vocab = read_vocab(d, path)
        merges_path = join(path, "merges")
        raw = required(d, "merges", list, path)
        ids = json_merge_ids(vocab, raw, d.get("continuing_subword_prefix"))
        lefts, rights, positions = read_merges(raw, merges_path) if ids is None else ([], [], None)
        dropout = optional(d, "dropout", float, path)
        if dropout is not None:
            dropout = as_f32(dropout, join(path, "dropout"))
            if not 0.0 <= dropout <= 1.0:
                raise FormatError("Dropout should be between 0 and 1, inclusive", key=join(path, "dropout"))
        model = cls.__new__(cls)
        try:
            model._setup(vocab, lefts, rights, dropout=dropout,
                         unk_token=optional(d, "unk_token", str, path),
                         continuing_subword_prefix=optional(d, "continuing_subword_prefix", str, path),
                         end_of_word_suffix=optional(d, "end_of_word_suffix", str, path),
                         fuse_unk=optional(d, "fuse_unk", bool, path, False),
                         byte_fallback=optional(d, "byte_fallback", bool, path, False),
                         ignore_merges=optional(d, "ignore_merges", bool, path, False), ids=ids)
        except UnknownMergeToken as error:
            index = positions[error.rank] if positions else error.rank
            raise FormatError(error.reason, key=join(merges_path, index)) from None
        return model

    def _rank_by_token_id(self) -> None:
        """tiktoken's rule: a pair's rank is the id of its concatenation (see the module notes)."""
        top = self._top_id()
        self._ranks = None
        self._pair_ids = None
        # a partial of a module function pickles (a closure would not) and runs as fast
        self._token_rank_of = partial(_token_id_rank, self._vocab.get, self._vocab_r)
        self._results = range(top + 1)  # type: ignore[assignment]  # a merge makes the id it is ranked by
        self._no_rank = max(self._no_rank, top + 1)
        self._scan_limit = _SCAN_UP_TO if len(self._vocab_r) == len(self._vocab) else 0
        self._empty_word = (self._vocab[""],) if "" in self._vocab and self._ignore_merges else ()
        self._merger = None  # built again on first use, ranked by token id

    def __getstate__(self) -> dict[str, Any]:
        """Pickled without what is rebuilt on first use: the word cache pickles empty, and a
        built pair -> rank dict goes back to the id lists it is built from."""
        state = self.__dict__.copy()
        if self._ranks is not None:
            state["_ranks"], state["_pair_ids"] = None, pair_lists(self._ranks)
        state.pop("_kernel", None)  # compiled objects are chosen and built again (`_choose_kernel`)
        state.pop("_merger", None)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._choose_kernel()

    # -- the Model protocol -------------------------------------------------

    def tokenize(self, piece: str) -> list[int]:
        if self._kernel is not None:
            return self._compiled().tokenize_all([piece], self._cache, self._tokenize)  # type: ignore[no-any-return]
        return self._tokenize(piece)

    def _tokenize(self, piece: str) -> list[int]:
        """`tokenize` in pure Python (the compiled loop calls it for the words it leaves)."""
        ids = self._cache.get(piece)
        if ids is not None:
            return ids[:]
        if not piece:
            return list(self._empty_word)
        if self._byte_level:
            return self._byte_level_ids(piece)
        if self._dropout:
            symbols, lengths = self._symbols(piece)
            ids = merge_heap(symbols, lengths, self._rank_of(), self._results, self._dropout)[0]
            return write_blocked(ids, piece, self._vocab, self._byte_ids) if self._block else ids
        chunks = self._cut(piece) if len(piece) > _CUT_FROM and self._can_cut else None
        if chunks is not None and len(chunks) > 1:
            ids = []
            for chunk in chunks:
                ids += self._cached_ids(chunk)
        else:
            ids = self._word_ids(piece)
        self._cache.remember(piece, ids)
        return ids[:]

    def _byte_level_ids(self, piece: str) -> list[int]:
        """`_tokenize` of a word of a ``byte_level`` model (not cached yet): its byte form merges."""
        ids = self._compiled().word(piece) if self._kernel is not None else None
        if ids is None:
            word = byte_form(piece)
            if self._dropout:
                symbols, lengths = self._symbols(word)
                ids = merge_heap(symbols, lengths, self._rank_of(), self._results, self._dropout)[0]
                return write_blocked(ids, word, self._vocab, self._byte_ids) if self._block else ids
            ids = self._word_ids(word)
        self._cache.remember(piece, ids)
        return ids[:]

    def tokenize_all(self, words: list[str]) -> list[int]:
        """`tokenize` of each word, concatenated: one call of the compiled loop, or, in pure Python,
        cached words looked up in one pass in C (``map`` over the cache, ``chain`` of the
        results), only the others running the merge loop.
        Warm, measured on cl100k over bench_en (420k words, 2 busy cores): a call per word
        0.27-0.38 s, this 0.12-0.21 s."""
        if self._kernel is not None:
            return self._compiled().tokenize_all(words, self._cache, self._tokenize)  # type: ignore[no-any-return]
        return list(chain.from_iterable(self.tokenize_each(words)))

    def tokenize_each(self, words: list[str]) -> list[list[int]]:
        """The ids of each word (lists the caller must not change: they may be the cache's)."""
        if self._dropout:
            return [self.tokenize(word) for word in words]
        return self._cache.each(words, self.tokenize)

    def tokenize_spans(self, piece: str) -> list[tuple[int, int, int]]:
        if not piece:
            return [(id_, 0, 0) for id_ in self._empty_word]
        if self._byte_level:
            return char_spans(piece, self._spans(byte_form(piece), cached=False))
        return self._spans(piece, cached=True)

    def _spans(self, piece: str, cached: bool) -> list[tuple[int, int, int]]:
        """`tokenize_spans` of a word spelt as the vocabulary is (`cached`: through the word cache)."""
        if self._ignore_merges and not self._dropout:
            whole = self._vocab.get(piece)
            if whole is not None:
                return [(whole, 0, len(piece))]
        spans: list[tuple[int, int, int]] = []
        offset = 0
        for chunk in self._cut(piece) if len(piece) > _CUT_FROM and self._can_cut else [piece]:
            if self._plain and not self._dropout and None not in map(self._vocab.get, chunk):
                # Every symbol is its character: a token spans as many characters as it spells.
                ids = self._cached_ids(chunk) if cached else self._word_ids(chunk)
                ends = list(accumulate(map(len, map(self._vocab_r.__getitem__, ids)), initial=offset))
                spans += zip(ids, ends, ends[1:])
            else:
                ids, lengths = self._symbols(chunk)
                ids, lengths = merge_heap(ids, lengths, self._rank_of(), self._results, self._dropout)
                found = byte_spans_to_chars(chunk, ids, lengths)
                if self._block:
                    found = write_blocked_spans(found, chunk, self._byte_ids)
                spans += [(i, start + offset, end + offset) for i, start, end in found]
            offset += len(chunk)
        return spans

    def token_value(self, id: int, piece: str, start: int, end: int) -> str:
        """HF's token string: the word itself for an ``ignore_merges`` hit, else ``id_to_token``."""
        if self._byte_level and self._ignore_merges and end - start == len(piece):
            piece = byte_form(piece)
            start, end = 0, len(piece)
        if self._ignore_merges and end - start == len(piece) and self._vocab.get(piece) == id:
            return piece
        return self.id_to_token(id) or ""

    def caches(self) -> list[BoundedCache[Any]]:
        return [self._cache]

    def batch_kernel(self) -> Any:
        return batch_merger(self._byte_level, self._kernel, self._compiled)

    # -- internals ----------------------------------------------------------

    def _compiled(self) -> Any:
        """The compiled `Merger` of this model, built on first use."""
        merger = self._merger
        if merger is None:
            if self._token_rank_of is not None:
                lefts: list[int] = []
                rights: list[int] = []
                results: list[int] = []
            else:
                lefts, rights = self._pair_ids if self._pair_ids is not None else pair_lists(self._ranks or {})
                results = list(self._results)
            mark, unsafe = "", frozenset[str]()
            if self._can_cut:
                if self._cut_mark is None:
                    self._cut_mark, self._cut_after = cut_mark(self._vocab)
                mark, unsafe = self._cut_mark, self._cut_after
            merger = self._merger = self._kernel.Merger(
                self._vocab, self._id_tokens(), self._top_id(), lefts, rights, results,
                self._token_rank_of is not None, self._ignore_merges, self._scan_limit, mark, sorted(unsafe),
                _CUT_FROM, CACHE_SIZE, CACHED_WORD_CHARS, self._byte_ids,
                -1 if self._unk_token is None else self._vocab.get(self._unk_token, -2), self._fuse_unk, self._block,
                self._byte_level)
        return merger

    def _top_id(self) -> int:
        """The largest id, read once (the ranks by token id and the Merger ask for it)."""
        top = self._top
        if top is None:
            ids = self._vocab_r
            top = self._top = len(ids) - 1 if isinstance(ids, list) else max(ids, default=-1)
        return top

    def _id_tokens(self) -> dict[int, str]:
        """``{id: token}`` (made for the call when the model holds a list of pieces)."""
        return invert(self._vocab) if isinstance(self._vocab_r, list) else self._vocab_r

    def _rank_of(self) -> Any:
        """``get`` of the ``{(left_id, right_id): rank}`` dict; a pair listed twice keeps its last rank."""
        if self._token_rank_of is not None:
            return self._token_rank_of
        ranks = self._ranks
        if ranks is None:
            left_ids, right_ids = self._pair_ids  # type: ignore[misc]
            with gc_paused():  # the key tuples all stay alive: collecting is pure cost here (bench/README.md)
                ranks = self._ranks = dict(zip(zip(left_ids, right_ids), range(len(left_ids))))
            self._pair_ids = None
        return ranks.get

    def _cached_ids(self, word: str) -> list[int]:
        """The ids of `word` without cutting it, through the cache (the list must not be changed)."""
        ids = self._cache.get(word)
        if ids is None:
            ids = self._word_ids(word)
            self._cache.remember(word, ids)
        return ids

    def _cut(self, word: str) -> list[str]:
        """`word` cut before each mark that no merge can cross (see the module notes)."""
        if self._cut_mark is None:
            self._cut_mark, self._cut_after = cut_mark(self._vocab)
        mark, unsafe, vocab = self._cut_mark, self._cut_after, self._vocab
        parts = word.split(mark) if mark else [word]
        chunks = []
        current = parts[0]
        for part in parts[1:]:
            before = current[-1:]
            if before and before not in unsafe and before in vocab:
                chunks.append(current)
                current = mark + part
            else:
                current += mark + part
        chunks.append(current)
        return chunks

    def _word_ids(self, word: str) -> list[int]:
        """The ids of `word`, spelt as the vocabulary is (no cut, no cache)."""
        if self._kernel is not None and not self._byte_level:  # (a byte_level kernel takes the text)
            merged = self._compiled().word(word)
            if merged is not None:
                return merged  # type: ignore[no-any-return]
        get = self._vocab.get
        if self._ignore_merges:
            whole = get(word)
            if whole is not None:
                return [whole]
        ids: list[int] | None = None
        if not self._prefix and not self._suffix:
            found = list(map(get, word))
            if None not in found:
                ids = found  # type: ignore[assignment]  # no None left
        if ids is None:
            ids = self._symbols(word)[0]
        if 2 <= len(ids) <= self._scan_limit:
            ids = merge_scan(ids, self._rank_of(), self._results, self._no_rank)
        elif len(ids) > _TREE_FROM and self._scan_limit:
            ids = merge_tree(ids, self._rank_of(), self._results, self._no_rank)
        elif len(ids) >= 2:
            ids = merge_heap(ids, [1] * len(ids), self._rank_of(), self._results, None)[0]
        return write_blocked(ids, word, self._vocab, self._byte_ids) if self._block else ids

    def _symbols(self, word: str) -> tuple[list[int], list[int]]:
        """The initial symbols of `word` as ids and HF byte lengths (``BPE::merge_word``)."""
        get, prefix, suffix, byte_ids = self._vocab.get, self._prefix, self._suffix, self._byte_ids
        if self._block:  # llama.cpp: every character is a symbol, an unknown one `BLOCKED` (no affixes)
            return [BLOCKED if i is None else i for i in map(get, word)], list(map(utf8_len, word))
        ids: list[int] = []
        lengths: list[int] = []
        unk: list[int] | None = None  # pending [id, byte length]
        last = len(word) - 1
        for index, ch in enumerate(word):
            text = prefix + ch if index else ch
            if index == last:
                text += suffix
            size = utf8_len(ch)
            found = get(text)
            if found is not None:
                if unk is not None:
                    ids.append(unk[0])
                    lengths.append(unk[1])
                    unk = None
                ids.append(found)
                lengths.append(size)
                continue
            if byte_ids is not None:
                try:
                    spelled = [byte_ids[b] for b in text.encode()]
                except UnicodeEncodeError as exc:
                    raise not_utf8(exc) from None
                if None not in spelled:
                    # subtle: a pending unk is not flushed first (HF order).
                    ids.extend(spelled)  # type: ignore[arg-type]
                    lengths.extend(repeat(1, len(spelled)))
                    continue
            if self._unk_token is None:
                continue
            if unk is not None and self._fuse_unk:
                unk[1] += size
                continue
            if unk is not None:
                ids.append(unk[0])
                lengths.append(unk[1])
            unk = [self._unk_id(), size]
        if unk is not None:
            ids.append(unk[0])
            lengths.append(unk[1])
        return ids, lengths

    def _unk_id(self) -> int:
        found = self._vocab.get(self._unk_token)  # type: ignore[arg-type]
        if found is None:
            raise EncodeError(f"Unk token `{self._unk_token}` not found in the vocabulary")
        return found


def _token_id_rank(get: Any, pieces: dict[int, str] | list[str], pair: tuple[int, int],
                   default: int | None = None) -> int | None:
    """``merge_priority="token_id"``: the id of the pair's concatenation (bound by `BPE._rank_by_token_id`)."""
    return get(pieces[pair[0]] + pieces[pair[1]], default)  # type: ignore[no-any-return]
