"""SPM model: spm = SentencePiece-style score-merge BPE, llama.cpp's ``LLAMA_VOCAB_TYPE_SPM`` (GGUF model ``llama``).

Stage: model. No ``tokenizer.json`` type (HF spells SentencePiece BPE as its rank-merge
``BPE``); the GGUF reader builds it from the tokens and scores of the vocabulary.

Reproduces llama.cpp (llama-cpp-python 0.3.36 sdist, vendor/llama.cpp/src/llama-vocab.cpp):
``llm_tokenizer_spm_session::tokenize`` / ``try_add_bigram`` / ``resegment``
(lines 97-239) and ``llama_vocab::byte_to_token`` (SPM case, line 4001);
reference/llama_vocab.md §6.1.

* Symbols start as the characters of the piece (llama.cpp splits its bytes by
  UTF-8 lead-byte length, which is the same thing for the valid UTF-8 a ``str``
  encodes to).
* Every adjacent pair whose concatenation is a vocabulary entry, *whatever its
  type* (control, user_defined, byte and unused included), is queued with that
  entry's score. The queue pops the highest score first; ties go to the
  leftmost pair. A popped pair is stale (skipped) if either side was emptied or
  their combined length no longer equals the length queued. A merge appends the
  right symbol to the left one and queues the new neighbour pairs.
* No merge table is read; scores alone decide, so a unigram vocabulary stored
  as ``llama`` is still merged this way.
* Output: each surviving symbol that is an entry gives its id. Any other symbol
  is a single character (merged symbols always are entries, so llama.cpp's
  ``rev_merge`` resegmentation never fires and is not reproduced), spelt byte by
  byte as ``<0xHH>`` (upper-case hex), else as the one-byte string itself; if
  neither exists llama.cpp throws ``std::out_of_range``, here `EncodeError`.
  SPM never emits the unknown token.
* A piece listed twice: lookups give its *last* id and that id's score, as
  llama.cpp's ``token_to_id`` map would, though llama.cpp itself refuses such a
  vocabulary at load (llama-vocab.cpp:2544, ``id_to_token.size() == token_to_id.size()``).

The whitespace handling of llama.cpp's SPM driver (``impl::tokenize``,
lines 3433-3483: a ``" "`` before every raw fragment when ``add_space_prefix``,
then every ``" "`` replaced by ``"▁"``) is not part of this model: it is the
normalizers ``Prepend(" ")`` (per fragment, as HF runs normalizers between
added tokens) followed by ``Replace(" ", "▁")``.

sentencepiece 0.2.3 (``bpe_model.cc``, ``Model::SampleEncode`` with alpha 0, and
``model_interface.cc``, ``InitializePieces``) runs the same queue with these
differences, each an option (the sentencepiece reader sets them all):

* `mergeable`: only ``NORMAL``, ``USER_DEFINED`` and ``UNUSED`` pieces may be a
  merge result or an output (``IsReservedId``); a symbol whose text is another
  piece (``CONTROL``, ``UNKNOWN``, ``BYTE``) or no piece is *unknown*.
* `whole_symbols` (user-defined pieces): the text is first cut into the longest
  such symbol at each position (``PrefixMatcher::PrefixMatch``) or one
  character; a symbol so cut is frozen and never merged.
* `unused`: a surviving symbol that is an ``UNUSED`` piece is split back into the
  two symbols last queued as its pair (``rev_merge``: each queued pair whose
  result is unused records its halves, the last record wins), recursively (at
  most 100 deep, then kept as it is); without a record it is unknown.
* ``unknown="unk"``: an unknown symbol is `unk_id`, and a run of them is one
  `unk_id` (``SentencePieceProcessor::EncodeOptimized`` merges the run);
  ``unknown="byte_fallback"``: each UTF-8 byte of an unknown symbol is its
  ``<0xHH>`` piece. llama.cpp's way is ``unknown="spell"`` (the default).
  Either way the token string (`Encoding.tokens`) of an unknown run is its
  normalized text and a byte piece's is ``<0xHH>``, and a byte piece's offsets
  are sentencepiece's (`PieceListLookup` and `spell_bytes` in ``_vocab``).
* Scores are float32; sentencepiece compares them by their bit patterns, which
  orders ``-0.0`` below ``0.0`` (the reader passes ``-0.0`` as the tiniest
  negative double, which keeps that order and no other).

Performance: the queue is a `MinTree` of score ranks (distinct scores, highest
first) at each live pair's left position, over arrays of lengths and links; the
tokens of a piece are made one at a time as they are read. A heap of
``(-score, left, right, length)`` tuples over lists had taken ~260 bytes a
character on a long piece (one letter, 1 MB: +260 MB; llama.cpp's and
sentencepiece's SPM models see a whole text as one piece), now ~25. Results of
short pieces are cached.

Compiled: where ``polytok._kernels.spm_merge`` is built, `tokenize` and `tokenize_all`
run the same queue in C over a piece table built at load (`_compiled`), word cache
included; a word it leaves out (a surviving unused piece, a byte without a piece) runs
the code here, and so does every offset (`tokenize_spans`). sentencepiece's reader builds that
table straight from the ``.model`` bytes (`from_kernel`), and the lookups here wait for their
first use (`DeferredTables`).
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Iterable, Iterator, Sequence
from heapq import heapify, heappop, heappush
from itertools import islice
from typing import Any, Literal

from .. import kernels
from ..errors import EncodeError, FormatError
from ._cache import CACHE_SIZE, CACHED_WORD_CHARS, WordCache
from ._deferred_tables import DeferredTables
from ._min_tree import MinTree
from ._vocab import BYTE_PIECES, Node, PieceListLookup, collapse_runs, spell_bytes

_NO_RANK = (1 << 31) - 1  # a pair that does not merge (`_merge`)
_TREE_FROM = 64  # characters: shorter plain pieces merge in `_merge_short`


class SPM(DeferredTables, PieceListLookup):
    """Score-merge BPE over characters, as llama.cpp's ``llm_tokenizer_spm_session``.

    Args:
        vocab: ``(piece, score)`` pairs; a piece's id is its index. Scores are
            compared as given (GGUF stores them as float32, exact in a Python float).
        mergeable: per id, whether the piece may be a merge result or an output.
            llama.cpp: all (None); sentencepiece: normal, user-defined and unused.
        unused: per id, sentencepiece's ``UNUSED`` pieces (resegmented); None: none.
        whole_symbols: sentencepiece's user-defined pieces, cut out first and frozen.
        unknown: ``"spell"`` (llama.cpp), ``"unk"`` or ``"byte_fallback"``
            (sentencepiece), see the module notes.
        unk_id: the id ``unknown="unk"`` emits.

    Raises:
        FormatError: `vocab` is empty, or `unknown` is ``"unk"`` without `unk_id`.
    """

    _DEFERRED = frozenset({"_ids", "_merge_score", "_outputs", "_unused", "_symbols", "_symbol_starts", "_byte_ids"})

    def __init__(self, vocab: Sequence[tuple[str, float]], *, mergeable: Sequence[bool] | None = None,
                 unused: Sequence[bool] | None = None, whole_symbols: Iterable[str] = (),
                 unknown: Literal["spell", "unk", "byte_fallback"] = "spell", unk_id: int | None = None) -> None:
        if not vocab:
            raise FormatError("the SPM vocabulary is empty", key="tokens")
        if unknown not in ("spell", "unk", "byte_fallback") or (unknown == "unk" and unk_id is None):
            raise FormatError(f"unknown must be 'spell', 'unk' (with unk_id) or 'byte_fallback', not {unknown!r}",
                              key="unknown")
        self._build_tables(vocab, mergeable, unused, whole_symbols)
        self._setup(unknown, unk_id)

    @classmethod
    def from_columns(cls, pieces: list[str], ids: dict[str, int], scores: Iterable[float]) -> SPM:
        """``SPM(list(zip(pieces, scores)))`` (llama.cpp's options) without the pairs: `ids` is
        ``{piece: its last index}``, which the model keeps and does not change."""
        if not pieces:
            raise FormatError("the SPM vocabulary is empty", key="tokens")
        self = cls.__new__(cls)
        self._set_tables(pieces, ids, scores, None, None, ())
        self._setup("spell", None)
        return self

    def _setup(self, unknown: Literal["spell", "unk", "byte_fallback"], unk_id: int | None) -> None:
        self._unknown = unknown
        self._byte_fallback = unknown != "unk"
        self._unk_id = unk_id
        self._cache = WordCache()
        self._ranks: dict[str, int] | None = None  # `_merge_rank`
        self._kernel = self._compiled()

    def _build_tables(self, vocab: Sequence[tuple[str, float]], mergeable: Sequence[bool] | None,
                      unused: Sequence[bool] | None, whole_symbols: Iterable[str]) -> None:
        """The lookups of the pure path (and of `_compiled` from them): see the class's Args."""
        pieces = [piece for piece, _ in vocab]
        self._set_tables(pieces, dict(zip(pieces, range(len(pieces)))), (score for _, score in vocab), mergeable,
                         unused, whole_symbols)

    def _set_tables(self, pieces: list[str], ids: dict[str, int], scores: Iterable[float],
                    mergeable: Sequence[bool] | None, unused: Sequence[bool] | None,
                    whole_symbols: Iterable[str]) -> None:
        self._pieces = pieces
        self._ids = ids
        # The score each piece merges with: the one of the id its text looks up (the last).
        self._merge_score = dict(zip(self._pieces, map(float, scores)))
        self._outputs = self._ids
        if mergeable is not None and not all(mergeable):
            self._outputs = dict(self._ids)
            for index in [i for i, ok in enumerate(mergeable) if not ok]:
                piece = self._pieces[index]
                if self._ids[piece] == index:
                    del self._merge_score[piece], self._outputs[piece]
        self._unused = frozenset(p for p, i in self._ids.items() if unused is not None and unused[i]) \
            if unused is not None and any(unused) else frozenset()
        self._symbols = frozenset(s for s in whole_symbols if s)
        self._symbol_starts = frozenset(s[0] for s in self._symbols)
        self._byte_ids: list[int | None] = []
        for byte in range(256):
            found = self._ids.get(f"<0x{byte:02X}>")
            if found is None and byte < 0x80:
                found = self._ids.get(chr(byte) if byte else "")
            self._byte_ids.append(found)

    def _compiled(self) -> Any:
        """The compiled merge of this vocabulary (``polytok._kernels.spm_merge.Merger``), or None:
        the pure path, or a score that is NaN (the pure queue's order is the reference there)."""
        module = kernels.kernel("spm_merge")
        if module is None:
            return None
        spell = self._unknown == "spell"
        byte_ids = self._byte_ids if spell else [self._ids.get(p) for p in BYTE_PIECES]
        try:
            return module.Merger(self._ids if spell else self._outputs, self._merge_score,
                                 () if spell else self._unused, () if spell else self._symbols, byte_ids,
                                 ("spell", "unk", "byte_fallback").index(self._unknown),
                                 -1 if self._unk_id is None else self._unk_id, CACHE_SIZE, CACHED_WORD_CHARS)
        except (ValueError, OverflowError):
            return None

    @classmethod
    def from_kernel(cls, merger: Any, pieces: Sequence[str], tables: Callable[[], dict[str, Any]],
                    find: Callable[[str], int], *, unknown: Literal["unk", "byte_fallback"],
                    unk_id: int | None) -> SPM:
        """An SPM whose compiled merge is built already (`merger`: sentencepiece's reader builds it
        from the file's bytes, ``Merger.from_vocab``); `pieces` answers `id_to_token` and `find`
        `token_to_id`. The pure path's lookups are built on first use (`DeferredTables`) from the
        `__init__` arguments ``tables()`` returns (``vocab``, ``mergeable``, ``unused``,
        ``whole_symbols``)."""
        self = cls.__new__(cls)
        self._pieces = pieces  # type: ignore[assignment]  # a Sequence until the tables are built
        self.defer(tables, find)
        self._unknown = unknown
        self._byte_fallback = unknown != "unk"
        self._unk_id = unk_id
        self._cache = WordCache()
        self._ranks = None
        self._kernel = merger
        return self

    def __getstate__(self) -> dict[str, Any]:
        """Pickled without the merge ranks, which are rebuilt on first use (`_merge_rank`), and
        without the compiled merge, rebuilt on unpickling (deferred tables are built first)."""
        self.build_deferred()
        return {**self.__dict__, "_ranks": None, "_kernel": None}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._kernel = self._compiled()

    # -- the Model protocol -------------------------------------------------

    def tokenize(self, piece: str) -> list[int]:
        if self._kernel is not None:
            return self._kernel.tokenize(piece, self._cache, self._fresh_ids)  # type: ignore[no-any-return]
        return self._cache.ids(piece, self._tokens)

    def batch_kernel(self) -> Any:
        return self._kernel

    def tokenize_all(self, words: list[str]) -> list[int]:
        if self._kernel is not None:
            return self._kernel.tokenize_all(words, self._cache, self._fresh_ids)  # type: ignore[no-any-return]
        return super().tokenize_all(words)

    def _fresh_ids(self, piece: str) -> list[int]:
        """The ids of `piece` on the pure path (the compiled merge's fallback for what it leaves out)."""
        return [token for token, _, _ in self._tokens(piece)]

    def tokenize_spans(self, piece: str) -> list[tuple[int, int, int]]:
        return list(self._tokens(piece))

    def _tokens(self, piece: str) -> Iterator[Node]:
        """``(id, start, end)`` of each token, made as they are read (no list of them for a long piece)."""
        if self._unknown != "spell":
            return self._sentencepiece_tokens(piece)
        return self._llama_tokens(piece)

    def _llama_tokens(self, piece: str) -> Iterator[Node]:
        ids = self._ids
        for start, end in self._merge(piece):
            text = piece[start:end]
            found = ids.get(text)
            if found is not None:
                yield found, start, end
                continue
            for byte in text.encode("utf-8", "surrogatepass"):
                byte_id = self._byte_ids[byte]
                if byte_id is None:
                    raise EncodeError(f"SPM: no token for byte 0x{byte:02X} of {text!r}"
                                      f" (neither '<0x{byte:02X}>' nor the byte itself is in the vocabulary)")
                yield byte_id, start, end

    # -- sentencepiece's output rules -----------------------------------------

    def _sentencepiece_tokens(self, piece: str) -> Iterator[Node]:
        rev: dict[str, tuple[int, int]] | None = {} if self._unused else None
        frozen = self._cut_symbols(piece) if self._symbols else None
        tokens = self._emit_all(piece, self._merge(piece, frozen, rev), rev)
        if self._unknown == "unk":
            return collapse_runs(tokens, -1 if self._unk_id is None else self._unk_id)
        return tokens

    def _cut_symbols(self, piece: str) -> list[int] | None:
        """Initial symbol lengths (per start position, 0 inside a symbol), negative for a frozen one."""
        starts = self._symbol_starts
        if not any(ch in starts for ch in piece):
            return None
        symbols = self._symbols
        longest = max(map(len, symbols))
        lengths = [0] * len(piece)
        at = 0
        while at < len(piece):
            match = 0
            if piece[at] in starts:
                match = max((k for k in range(1, min(longest, len(piece) - at) + 1) if piece[at:at + k] in symbols),
                            default=0)
            lengths[at] = -match if match else 1
            at += match or 1
        return lengths

    def _emit_all(self, piece: str, spans: Iterable[tuple[int, int]],
                  rev: dict[str, tuple[int, int]] | None) -> Iterator[Node]:
        outputs, unused = self._outputs, self._unused
        for start, end in spans:
            found = outputs.get(piece[start:end])
            if found is not None and piece[start:end] not in unused:
                yield found, start, end
            else:
                yield from self._emit(piece, start, end, rev, 0)

    def _emit(self, piece: str, start: int, end: int, rev: dict[str, tuple[int, int]] | None,
              depth: int) -> Iterator[Node]:
        """bpe_model.cc ``resegment``, then the processor's unknown rules (a run of unk ids is
        collapsed by the caller, `collapse_runs`)."""
        text = piece[start:end]
        found = self._outputs.get(text)
        if found is not None and text in self._unused and depth <= 100:
            halves = rev.get(text) if rev is not None else None
            if halves is not None:
                cut = start + halves[0]
                yield from self._emit(piece, start, cut, rev, depth + 1)
                yield from self._emit(piece, cut, end, rev, depth + 1)
                return
            found = None
        if found is not None:
            yield found, start, end
        elif self._unknown == "unk":
            yield -1 if self._unk_id is None else self._unk_id, start, end
        else:
            yield from spell_bytes(piece, start, end, self._ids)

    # -- the merge loop -------------------------------------------------------

    def _merge_rank(self) -> dict[str, int]:
        """``piece -> rank`` of the merge scores, highest score first (built on first use).

        The queue orders by score, then left position; ranks of the distinct scores keep
        that order in the `MinTree`'s ``array("i")`` (equal floats, ``0.0`` and ``-0.0``
        among them, share a rank, as they tie in the heap)."""
        if self._ranks is None:
            order = {score: rank for rank, score in enumerate(sorted(set(self._merge_score.values()), reverse=True))}
            self._ranks = dict(zip(self._merge_score, map(order.__getitem__, self._merge_score.values())))
        return self._ranks

    def _merge(self, piece: str, frozen: list[int] | None = None,
               rev: dict[str, tuple[int, int]] | None = None) -> Iterator[tuple[int, int]]:
        """``(start, end)`` character spans of the symbols left when no queued pair applies.

        Symbol ``i`` starts at character ``i``; ``length[i]`` is 0 once merged away;
        ``nxt``/``prev`` link the live symbols (-1 at the ends), all in arrays. llama.cpp's
        queue pops the best (score, left position) among queued pairs and skips one whose
        symbols changed since; each live pair's score rank sits instead at its left
        position in a `MinTree`, which gives the same pair (a changed pair's entry is always
        skipped: its combined length differs). `frozen` gives other initial lengths
        (negative: never merged); `rev` collects sentencepiece's ``rev_merge`` for unused
        results, in the order the pairs are queued.
        """
        size = len(piece)
        if frozen is None and size < _TREE_FROM:
            return _merge_short(piece, self._merge_score.get, self._unused, rev)
        length = array("i", [1]) * size if frozen is None else array("i", map(abs, frozen))
        starts = range(size) if frozen is None else [i for i in range(size) if frozen[i]]
        fixed = bytearray(size)
        if frozen is not None:
            for i in starts:
                fixed[i] = frozen[i] < 0
        nxt, prev = array("i", [-1]) * size, array("i", [-1]) * size
        for a, b in zip(starts, islice(starts, 1, None)):
            nxt[a], prev[b] = b, a
        rank_of, unused = self._merge_rank().get, self._unused

        def offer(left: int, right: int) -> int:
            if right < 0 or fixed[left] or fixed[right]:
                return _NO_RANK
            text = piece[left:right + length[right]]
            if rev is not None and text in unused and text in self._merge_score:
                rev[text] = (right - left, length[right])
            return rank_of(text, _NO_RANK)

        tree = MinTree(array("i", map(offer, range(size - 1), nxt)), _NO_RANK)
        while True:
            _, left = tree.lowest()
            if left < 0:
                return _spans(length, nxt, size)
            right = nxt[left]
            length[left] += length[right]
            length[right] = 0
            after = nxt[left] = nxt[right]
            if after >= 0:
                prev[after] = left
                tree.put(right, _NO_RANK)
            before = prev[left]
            if before >= 0:  # this pair first: the last `rev` record wins
                tree.put(before, offer(before, left))
            tree.put(left, offer(left, after))


def _merge_short(piece: str, score_of: Any, unused: frozenset[str],
                 rev: dict[str, tuple[int, int]] | None) -> Iterator[tuple[int, int]]:
    """`SPM._merge` of a short piece without frozen symbols: llama.cpp's queue as written, a heap
    of ``(-score, left, right, length)`` tuples over lists, the offers inlined (a third faster
    than the tree on words of English; the tuples cost no more than a few kB here)."""
    size = len(piece)
    length = [1] * size
    nxt = list(range(1, size)) + [-1]
    prev = list(range(-1, size - 1))
    queue = []
    for left in range(size - 1):
        score = score_of(piece[left:left + 2])
        if score is not None:
            queue.append((-score, left, left + 1, 2))
            if rev is not None and piece[left:left + 2] in unused:
                rev[piece[left:left + 2]] = (1, 1)
    heapify(queue)
    while queue:
        _, left, right, joint = heappop(queue)
        if length[left] == 0 or length[right] == 0 or length[left] + length[right] != joint:
            continue
        length[left] = joint
        length[right] = 0
        after = nxt[left] = nxt[right]
        if after >= 0:
            prev[after] = left
        before = prev[left]
        if before >= 0:
            score = score_of(piece[before:left + joint])
            if score is not None:
                heappush(queue, (-score, before, left, left - before + joint))
                if rev is not None and piece[before:left + joint] in unused:
                    rev[piece[before:left + joint]] = (left - before, joint)
        if after >= 0:
            score = score_of(piece[left:after + length[after]])
            if score is not None:
                heappush(queue, (-score, left, after, joint + length[after]))
                if rev is not None and piece[left:after + length[after]] in unused:
                    rev[piece[left:after + length[after]]] = (joint, length[after])
    return _spans(length, nxt, size)


def _spans(length: Sequence[int], nxt: Sequence[int], size: int) -> Iterator[tuple[int, int]]:
    """The live symbols, first to last, as character spans."""
    index = 0 if size else -1
    while index >= 0:
        yield index, index + length[index]
        index = nxt[index]
