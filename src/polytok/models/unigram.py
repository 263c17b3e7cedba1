"""Unigram model: the ``"Unigram"`` model of ``tokenizer.json`` (SentencePiece unigram, Viterbi).

Reproduces HF tokenizers 0.23.3, tokenizers/src/models/unigram/: ``model.rs``
(``Unigram::from``, ``Unigram::encode_optimized``, ``Model::tokenize``),
``trie.rs`` (``common_prefix_search``) and ``serialization.rs``
(``UnigramVisitor::visit_map``). HF's ``encode_optimized`` follows
sentencepiece's ``unigram_model.cc`` (``EncodeOptimized``).

* Ids are positions in ``vocab``; a piece listed twice maps to its *last* id
  (``token_to_id``), while ``id_to_token`` of the first id still names it.
* Viterbi over the characters of the word: from each reachable position, every
  vocabulary piece that starts there, shortest first, offers
  ``best[start] + score``; it replaces the best path ending where the piece
  ends only if that is unset or the offer is *strictly* greater (ties keep the
  first offer). If no one-character piece starts there, an unknown node of one
  character offers ``min_score - 10``; with ``unk_id`` null, taking it raises.
* Backtracking fuses every run of nodes whose id is ``unk_id`` (including a
  literal ``<unk>`` piece) into one string. A fused string that is not itself a
  piece becomes, with ``byte_fallback``, one ``<0xHH>`` token per UTF-8 byte if
  all exist, each spanning the whole string; else ``unk_id``.
* Empty pieces are never matched (the trie only reports non-empty prefixes).

llama.cpp's UGM (llama-cpp-python 0.3.36, vendor/llama.cpp/src/llama-vocab.cpp,
``llm_tokenizer_ugm`` and ``llm_tokenizer_ugm_session::tokenize``, lines
903-1070; reference/llama_vocab.md §6.4) runs the same Viterbi (positions in
order, pieces shortest first, strictly greater offers win, double sums) with
the differences given as the options `matchable`, `zero_score`, `unk_score`
and ``unknown_runs="collapse"``; its normalization is `Precompiled` with
``match="longest"``.

sentencepiece 0.2.3 (``unigram_model.cc``, ``Model::EncodeOptimized``) runs it
once over the whole normalized text, in *float32*, which is the option
``float32=True``: every path sum is rounded to float32 before it is compared,
and when the best score at a start position leaves [-100000, 100000] every
best score from there to the farthest end reached so far is shifted by it (in
float32, so later roundings follow sentencepiece's; `_unigram_float32`, which
also caches words where that provably gives the same result). Its other rules are
options too: only normal and user-defined pieces match (`matchable`), a
user-defined piece scores ``0.1 * (UTF-8 length - 1)`` (the reader passes that
score), the unknown score is the least *normal* score minus 10 (`unk_score`),
a run of unknown characters is one `unk_id` (``unknown_runs="collapse"``:
``SentencePieceProcessor::EncodeOptimized`` merges the run), or with
`byte_fallback` the ``<0xHH>`` pieces of its bytes, with sentencepiece's
offsets (`spell_bytes`). Token strings, HF's and sentencepiece's alike: an
unknown run shows its text, a byte token its piece (`PieceListLookup`).

Scores from ``tokenizer.json``: serde_json as HF builds it (without its
``float_roundtrip`` feature) parses decimals with two roundings
(``significand as f64`` then ``* or / 10^k``), so about a quarter of the
17-digit scores in real files land one ulp away from the correctly rounded
value Python's ``json`` gives. `from_config` re-derives HF's value from the
shortest repr of each float, which is the file's own text for every file
written by serde_json or Python (an exotic writer with more digits may
differ by an ulp). This can only change a result on near-ties.

Compiled: when the kernel ``polytok._kernels.unigram`` is built, a `Lattice` (a trie of
the matchable pieces over code points, and their path scores) runs `_best_path`'s loop
or, with `float32`, `Float32Viterbi._exact`'s over the whole word, and applies the
``"collapse"`` rules, and HF's ``"fuse"`` rewrite of unknown runs where its trie holds every
piece (``fuse``: it then answers `_unknown`'s lookup as `_ids`); `tokenize_all`'s loop over
the word cache runs there too (``Lattice.ids_all``). The spans, and a fused run of a lone
surrogate to spell as bytes (``str.encode`` raises), stay here.
It is built at load and again after unpickling (`_build_paths`); a word longer than its
int32 positions allow runs the pure loops, whose tables are then built (`_pure_tables`).
sentencepiece's reader builds the `Lattice` straight from the ``.model`` bytes (`from_kernel`),
and the per-piece lookups here wait for their first use (`DeferredTables`).

Performance of the pure path: pieces are found with one dict of all pieces plus, per two-character
prefix, the length of the longest piece that starts with it; words are cached.
Long words are not cut, unlike BPE: Viterbi sums depend on the score of
everything before them, so a cut could change a floating-point tie. Memory of a
long word (sentencepiece runs over the whole text): the Viterbi tables are
arrays, and the best path is two columns (ids, ends) whose ``(id, start, end)``
tuples are made one at a time as they are read, so ids cost no tuple each; lists
of floats, positions and tuples had taken ~230 bytes a character (1 MB of one
letter through botchan's .model: +230 MB), now ~30.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Iterable, Iterator, Sequence
from functools import cache
from itertools import chain
from math import fsum, inf, isfinite
from operator import itemgetter
from typing import Any, Literal

from .._config import join, optional, required
from ..errors import EncodeError, FormatError
from ..kernels import kernel
from ._cache import CACHE_SIZE, CACHED_WORD_CHARS, WordCache
from ._deferred_tables import DeferredTables
from ._unigram_float32 import Float32Viterbi, backtrack
from ._vocab import Node, PieceListLookup, collapse_runs, spell_bytes

_UNK_PENALTY = 10.0
_COMPILED_MAX_CHARS = 2**31 - 2  # the kernel's positions are int32; a longer word runs the pure loop
_FIND_SCANS = 16  # token_to_id scans the pieces this many times before it builds the lookups


@cache
def _pow10() -> tuple[float, ...]:
    """10**k, k < 309, each the nearest double (made on the first `serde_f64`, not at import)."""
    return tuple(float(f"1e{k}") for k in range(309))


_first, _second = itemgetter(0), itemgetter(1)


class VocabColumns:
    """A tokenizer.json Unigram vocab that a reader has read and checked already, as `from_config`
    reads ``[[piece, score], ...]``: the pieces, and each score as `serde_f64` reads it. (A plain
    class: a NamedTuple's annotations cost a compile each when the module is imported.)"""

    __slots__ = ("pieces", "scores")

    def __init__(self, pieces: list[str], scores: list[float]) -> None:
        self.pieces = pieces
        self.scores = scores


class Unigram(DeferredTables, PieceListLookup):
    """Unigram language-model tokenizer, as HF ``models::unigram::Unigram``.

    Args:
        vocab: ``(piece, score)`` pairs; a piece's id is its index.
        unk_id: id of the unknown token, or None (then unknown characters raise at encode).
        byte_fallback: spell unknown strings as ``<0xHH>`` byte tokens when all exist.
        matchable: per id, whether Viterbi may use the piece. HF: all (None);
            llama.cpp UGM: only ``normal``, ``user_defined`` and ``unused`` tokens
            (``llm_tokenizer_ugm``'s ``token_matcher``); a duplicated piece then
            matches as the last *matchable* id.
        zero_score: per id, whether the piece scores 0.0 on the path. HF: none
            (None); llama.cpp UGM: ``user_defined`` tokens.
        unk_score: score of an unknown character. HF (None): min of all scores
            minus 10; llama.cpp UGM: min over ``normal`` tokens minus 10, in
            float32 (the reader computes it).
        unknown_runs: ``"fuse"`` (HF): a run of unknown nodes becomes the piece
            it spells, its bytes (`byte_fallback`) or `unk_id`; ``"collapse"``
            (llama.cpp UGM backtrack): the run is one `unk_id`, never looked up
            or spelt, and with `unk_id` None it is -1 (``LLAMA_TOKEN_NULL``)
            instead of an error; with `byte_fallback` (sentencepiece) each unknown
            character of the run is its ``<0xHH>`` byte pieces instead.
        float32: sentencepiece's float32 Viterbi (module notes); False: float64 (HF, llama.cpp).

    Raises:
        FormatError: `unk_id` is not an index of `vocab`.
    """

    _DEFERRED = frozenset({"_scores", "_ids", "_match_ids", "_path_scores"})

    def __init__(self, vocab: Sequence[tuple[str, float]], unk_id: int | None = None,
                 byte_fallback: bool = False, *, matchable: Sequence[bool] | None = None,
                 zero_score: Sequence[bool] | None = None, unk_score: float | None = None,
                 unknown_runs: Literal["fuse", "collapse"] = "fuse", float32: bool = False) -> None:
        _check_unk_id(unk_id, len(vocab))
        if unknown_runs not in ("fuse", "collapse"):
            raise FormatError(f"unknown_runs must be 'fuse' or 'collapse', not {unknown_runs!r}", key="unknown_runs")
        self._build_tables(vocab, matchable, zero_score)
        self._setup(unk_id, byte_fallback, unk_score, unknown_runs, float32)

    @classmethod
    def _from_columns(cls, pieces: list[str], scores: list[float], unk_id: int | None,
                      byte_fallback: bool) -> Unigram:
        """``Unigram(list(zip(pieces, scores)), unk_id, byte_fallback)`` without the pairs (`scores` are floats);
        the piece-to-id lookups are built on first use (`DeferredTables`), every piece matchable."""
        _check_unk_id(unk_id, len(pieces))
        self = cls.__new__(cls)
        self._pieces = pieces
        self._scores = self._path_scores = scores

        scans = [_FIND_SCANS]

        def find(token: str) -> int:
            if scans[0] > 0:  # a load's few added tokens: a scan each costs less than the lookups
                scans[0] -= 1
                return _last_index(pieces, token)
            self.build_deferred()
            found: int = self._ids.get(token, -1)
            return found

        self.defer(lambda: {"vocab": list(zip(pieces, scores)), "matchable": None, "zero_score": None}, find)
        self._setup(unk_id, byte_fallback, None, "fuse", False)
        return self

    def _setup(self, unk_id: int | None, byte_fallback: bool, unk_score: float | None,
               unknown_runs: Literal["fuse", "collapse"], float32: bool) -> None:
        """Everything after the per-piece lookups (see the class's Args)."""
        self._unk_id = unk_id
        self._unk_score = (min(self._scores) if self._scores else inf) - _UNK_PENALTY
        if unk_score is not None:
            self._unk_score = unk_score
        self._byte_fallback = byte_fallback
        self._byte_ids = [self._ids.get(f"<0x{b:02X}>") for b in range(256)] if byte_fallback else None
        self._collapse = unknown_runs == "collapse"
        self._float32 = float32
        self._cache = WordCache()
        self._build_paths()

    def _build_tables(self, vocab: Sequence[tuple[str, float]], matchable: Sequence[bool] | None,
                      zero_score: Sequence[bool] | None) -> None:
        """The per-piece lookups (see the class's Args)."""
        self._set_columns(list(map(_first, vocab)), list(map(float, map(_second, vocab))), matchable, zero_score)

    def _set_columns(self, pieces: list[str], scores: list[float], matchable: Sequence[bool] | None,
                     zero_score: Sequence[bool] | None) -> None:
        self._pieces = pieces
        self._scores = scores
        self._ids = dict(zip(pieces, range(len(pieces))))
        self._match_ids = self._ids
        if matchable is not None:
            self._match_ids = {piece: i for i, piece in enumerate(self._pieces) if matchable[i]}
        self._path_scores = self._scores
        if zero_score is not None:
            self._path_scores = [0.0 if zero else score for zero, score in zip(zero_score, self._scores)]

    @classmethod
    def from_kernel(cls, lattice: Any, pieces: Sequence[str], tables: Callable[[], dict[str, Any]],
                    find: Callable[[str], int], *, unk_id: int | None, unk_score: float, byte_fallback: bool,
                    byte_ids: list[int | None] | None, unknown_runs: Literal["fuse", "collapse"],
                    float32: bool) -> Unigram:
        """A Unigram whose compiled `Lattice` is built already (sentencepiece's reader builds it from
        the file's bytes, ``Lattice.from_vocab``); `pieces` answers `id_to_token` and `find`
        `token_to_id`. The per-piece lookups are built on first use (`DeferredTables`) from the
        `__init__` arguments ``tables()`` returns (``vocab``, ``matchable``, ``zero_score``)."""
        self = cls.__new__(cls)
        self._pieces = pieces  # type: ignore[assignment]  # a Sequence until the tables are built
        self.defer(tables, find)
        self._unk_id = unk_id
        self._unk_score = unk_score
        self._byte_fallback = byte_fallback
        self._byte_ids = byte_ids
        self._collapse = unknown_runs == "collapse"
        self._float32 = float32
        self._cache = WordCache()
        self._lattice = lattice
        self._reach = None
        self._viterbi32 = None
        return self

    def _build_paths(self) -> None:
        """The Viterbi's tables: the compiled kernel's `Lattice`, or the pure loops' lookups."""
        module = kernel("unigram")
        self._lattice: Any = None
        self._reach: dict[str, int] | None = None
        self._viterbi32: Float32Viterbi | None = None
        if module is None:
            self._pure_tables()
            return
        raise_unknown = self._unk_id is None and not self._collapse and not self._float32
        every_piece = "_deferred" in self.__dict__ or self._match_ids is self._ids
        ids: list[int] | None = None  # None: each piece's index
        if every_piece and type(self._pieces) is list:
            # every piece (deferred lookups: `_from_columns`), in id order: the Lattice keeps a
            # repeated piece's last id, as `_ids` does
            pieces = self._pieces
        else:
            pieces, ids = list(self._match_ids), list(self._match_ids.values())
        # HF's rewrite of unknown runs in C too, where the trie answers `_unknown`'s lookup as `_ids`
        fuse = every_piece and not self._collapse and self._unk_id is not None
        self._lattice = module.Lattice(pieces, ids, self._path_scores, self._unknown_marker(), self._unk_score,
                                       self._float32, raise_unknown, self._collapse, self._byte_ids, fuse)

    def _pure_tables(self) -> dict[str, int]:
        """The pure loops' lookups, built on first use: at load on the pure path, else only for a
        word too long for the kernel."""
        if self._reach is not None:
            return self._reach
        reach: dict[str, int] = {}
        for piece in self._match_ids:
            if len(piece) > 1 and reach.get(piece[:2], 0) < len(piece):
                reach[piece[:2]] = len(piece)
        if self._float32:
            self._viterbi32 = Float32Viterbi(self._match_ids, self._path_scores, reach, self._unknown_marker(),
                                             self._unk_score)
        self._reach = reach
        return reach

    def _compiled(self, word: str) -> Any:
        """The `Lattice` that runs `word`, or None (the pure path, or a word past the kernel's int32 positions)."""
        return self._lattice if len(word) <= _COMPILED_MAX_CHARS else None

    def __getstate__(self) -> dict[str, Any]:
        """Pickled without the Viterbi's tables (`_build_paths` makes them again, compiled or not;
        deferred lookups are built first)."""
        self.build_deferred()
        state = self.__dict__.copy()
        for name in ("_lattice", "_reach", "_viterbi32"):
            state.pop(name, None)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._build_paths()

    @classmethod
    def from_config(cls, d: dict[str, Any], path: str) -> Unigram:
        raw = d.get("vocab")
        if type(raw) is VocabColumns:  # read from the file's bytes already (formats.hf_json)
            pieces, scores = raw.pieces, raw.scores
        else:
            pieces, scores = _read_vocab(required(d, "vocab", list, path), join(path, "vocab"))
        unk_id = optional(d, "unk_id", int, path)
        if unk_id is not None and unk_id < 0:
            raise FormatError(f"expected an unsigned integer, found {unk_id}", key=join(path, "unk_id"))
        byte_fallback = required(d, "byte_fallback", bool, path) if "byte_fallback" in d else False
        try:
            return cls._from_columns(pieces, scores, unk_id, byte_fallback)
        except FormatError as error:
            raise FormatError(error.reason, key=join(path, error.key or "")) from None

    # -- the Model protocol -------------------------------------------------

    def tokenize(self, piece: str) -> list[int]:
        ids = self._cache.get(piece)
        if ids is None:
            ids = self._word_ids(piece)
            self._cache.remember(piece, ids)
        return ids[:]

    def tokenize_all(self, words: list[str]) -> list[int]:
        lattice = self._lattice
        if lattice is not None and type(words) is list:  # `tokenize`'s loop in C, through the same cache
            return lattice.ids_all(words, self._cache, CACHE_SIZE, CACHED_WORD_CHARS,  # type: ignore[no-any-return]
                                   self._word_ids)
        return super().tokenize_all(words)

    def tokenize_spans(self, piece: str) -> list[tuple[int, int, int]]:
        return list(self._tokens(piece)) if piece else []

    def batch_kernel(self) -> Any:
        return self._lattice


    # -- internals ----------------------------------------------------------

    def _word_ids(self, word: str) -> list[int]:
        """The ids of `tokenize_spans`, without a tuple per token when no unknown node needs rewriting."""
        if not word:
            return []
        lattice = self._compiled(word)
        if lattice is not None:
            ids, found = lattice.nodes(word, False)
            if found is None:  # final: no unknown node, or unknown runs collapsed in C
                return ids  # type: ignore[no-any-return]
            ends: Sequence[int] = found
        else:
            ids, ends = self._nodes(word)
            if self._unknown_marker() not in ids:
                return ids
        return [token for token, _, _ in self._rewrite_unknown(word, ids, ends)]

    def _tokens(self, word: str) -> Iterator[Node]:
        """``(id, start, end)`` of the best segmentation, unknown runs fused (``Model::tokenize``)."""
        ids, ends = self._nodes(word)
        if self._unknown_marker() not in ids:
            return zip(ids, chain((0,), ends), ends)
        return self._rewrite_unknown(word, ids, ends)

    def _unknown_marker(self) -> int:
        """The id of an unknown node in `_nodes`.

        -1 when `unk_id` is None: none, or llama.cpp's ``LLAMA_TOKEN_NULL``.
        """
        return -1 if self._unk_id is None else self._unk_id

    def _nodes(self, word: str) -> tuple[list[int], Sequence[int]]:
        """The ids of the best path's nodes and where each ends (the next starts there)."""
        lattice = self._compiled(word)
        if lattice is not None:
            return lattice.nodes(word, True)  # type: ignore[no-any-return]
        self._pure_tables()
        if self._viterbi32 is not None:
            return self._viterbi32.nodes(word)
        start_of, id_of = self._best_path(word)
        return backtrack(start_of, id_of)

    def _rewrite_unknown(self, word: str, ids: list[int], ends: Sequence[int]) -> Iterator[Node]:
        """The nodes with each run of unknown ones rewritten as the options say (module notes)."""
        nodes = zip(ids, chain((0,), ends), ends)
        unk = self._unknown_marker()
        if self._collapse:
            if self._byte_ids is not None:
                return self._spell_unknown(word, nodes, unk)
            return collapse_runs(nodes, unk)
        return self._fuse_unknown(word, nodes, unk)

    def _fuse_unknown(self, word: str, nodes: Iterable[Node], unk: int) -> Iterator[Node]:
        """HF: each run of unknown nodes is one string, then `_unknown`'s rule."""
        for token, start, end in collapse_runs(nodes, unk):
            if token == unk:
                yield from self._unknown(word, start, end)
            else:
                yield token, start, end

    def _spell_unknown(self, word: str, nodes: Iterable[Node], unk: int) -> Iterator[Node]:
        """Each unknown node (one character) as its byte pieces (sentencepiece byte fallback, which
        spells each unknown piece the model gives, before any run is merged)."""
        for token, start, end in nodes:
            if token != unk:
                yield token, start, end
            else:
                yield from spell_bytes(word, start, end, self._ids)

    def _unknown(self, word: str, start: int, end: int) -> list[Node]:
        """A fused run of unknown nodes: the piece it spells, its bytes, or ``unk_id``."""
        text = word[start:end]
        known = self._ids.get(text)
        if known is not None:
            return [(known, start, end)]
        if self._byte_ids is not None:
            spelled = [self._byte_ids[b] for b in text.encode()]
            if None not in spelled:
                return [(b, start, end) for b in spelled]  # type: ignore[misc]
        return [(self._unk_id, start, end)]  # type: ignore[list-item]

    def _best_path(self, word: str) -> tuple[array[int], list[int]]:
        """For each end position, the start and id of the last piece of the best path there.

        Arrays of floats and positions (8 and 4 bytes a character), and a list of ids that
        holds the vocabulary's own int objects: a long word costs ~20 bytes a character.
        """
        size = len(word)
        get, scores, reach = self._match_ids.get, self._path_scores, self._pure_tables()
        unk_id, unk_score = self._unk_id, self._unk_score
        if self._collapse and unk_id is None:
            unk_id = -1
        best = array("d", bytes(8 * (size + 1)))
        start_of = array("i", [-1]) * (size + 1)
        id_of = [0] * (size + 1)
        for start in range(size):
            here = best[start]
            found = get(word[start])
            if found is not None:
                offer = here + scores[found]
                if start_of[start + 1] < 0 or offer > best[start + 1]:
                    best[start + 1], start_of[start + 1], id_of[start + 1] = offer, start, found
            for end in range(start + 2, min(start + reach.get(word[start:start + 2], 0), size) + 1):
                hit = get(word[start:end])
                if hit is not None:
                    offer = here + scores[hit]
                    if start_of[end] < 0 or offer > best[end]:
                        best[end], start_of[end], id_of[end] = offer, start, hit
            if found is None:
                offer = here + unk_score
                if start_of[start + 1] < 0 or offer > best[start + 1]:
                    if unk_id is None:
                        raise EncodeError("Encountered an unknown token but `unk_id` is missing"
                                          f" (character {word[start]!r} has no piece)")
                    best[start + 1], start_of[start + 1], id_of[start + 1] = offer, start, unk_id
        return start_of, id_of


def _last_index(pieces: list[str], token: str) -> int:
    """The last index of `token` in `pieces` (a repeated piece's id is its last), or -1."""
    wire = kernel("wire")
    compiled = wire.last_index(pieces, token) if wire is not None else None
    if compiled is not None:
        return compiled  # type: ignore[no-any-return]
    found = -1
    try:
        while True:
            found = pieces.index(token, found + 1)
    except ValueError:
        return found


def _check_unk_id(unk_id: int | None, size: int) -> None:
    if unk_id is not None:
        if not size:
            raise FormatError("The vocabulary is empty but at least <unk> is needed", key="vocab")
        if not 0 <= unk_id < size:
            raise FormatError("The `unk_id` is larger than vocabulary size", key="unk_id")


def _read_vocab(raw: list[Any], path: str) -> tuple[list[str], list[float]]:
    """The pieces and scores of ``[[piece, score], ...]``, checked, with each score read as serde_json reads it."""
    wire = kernel("wire")
    read = wire.unigram_vocab(raw) if wire is not None else None  # every entry well formed, in one pass
    if read is not None:
        return read  # type: ignore[no-any-return]
    if raw and not (set(map(type, raw)) == {list} and set(map(len, raw)) == {2}):
        index = next(i for i, entry in enumerate(raw) if type(entry) is not list or len(entry) != 2)
        raise FormatError(f"expected a [piece, score] pair, found {raw[index]!r:.60}", key=join(path, index))
    pieces = list(map(_first, raw))
    scores = list(map(_second, raw))
    if raw and set(map(type, pieces)) != {str}:
        index = next(i for i, piece in enumerate(pieces) if type(piece) is not str)
        raise FormatError(f"expected a string, found {pieces[index]!r:.60}", key=join(join(path, index), 0))
    values = wire.serde_f64s(scores) if wire is not None else None  # a list: every score an exact float or int
    if values is None and raw and not set(map(type, scores)) <= {float, int}:
        index = next(i for i, score in enumerate(scores) if type(score) not in (float, int))
        raise FormatError(f"expected a number, found {scores[index]!r:.60}", key=join(join(path, index), 1))
    if not _finite_sum(scores):  # HF's serde_json refuses NaN, Infinity and numbers beyond an f64
        at_fault = next((i for i, score in enumerate(scores) if not _finite_sum([score])), None)
        if at_fault is not None:  # (else each is finite and only their sum is not: HF reads them)
            raise FormatError(f"expected a finite number, found {scores[at_fault]!r:.60}",
                              key=join(join(path, at_fault), 1))
    return pieces, list(map(serde_f64, scores)) if values is None else values


def _finite_sum(scores: list[float | int]) -> bool:
    try:
        return isfinite(fsum(scores))  # one C pass; log-probabilities never sum past an f64
    except OverflowError:
        return False


def serde_f64(value: float | int) -> float:
    """The f64 HF's serde_json reads from the shortest text of `value` (see the module notes).

    serde_json's default decimal path: all digits into a u64 significand (not
    reached by a shortest repr, which has at most 17 digits), then
    ``significand as f64`` multiplied or divided by ``10^|exp|``, walking down
    by ``1e308`` when the power is out of the table. Integers convert directly.
    """
    if type(value) is int:
        return float(value)
    text = repr(value)
    negative = text.startswith("-")
    mantissa, _, exponent = text.lstrip("-").partition("e")
    whole, _, fraction = mantissa.partition(".")
    result = float(int(whole + fraction))
    power = (int(exponent) if exponent else 0) - len(fraction)
    pow10 = _pow10()
    while True:
        if abs(power) < len(pow10):
            result = result * pow10[power] if power >= 0 else result / pow10[-power]
            break
        if result == 0.0:
            break
        result /= 1e308
        power += 308
    return -result if negative else result
