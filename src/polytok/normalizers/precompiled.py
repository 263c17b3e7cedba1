"""Precompiled normalizer: SentencePiece's compiled normalization rules (``precompiled_charsmap``).

Stage: normalizer. JSON: ``{"type": "Precompiled", "precompiled_charsmap":
str}``: standard base64 (padding optional) of the blob SentencePiece stores
in ``normalizer_spec.precompiled_charsmap``.

Reproduces HF tokenizers 0.23.3 ``tokenizers/src/normalizers/precompiled.rs``
(``Precompiled::normalize`` and its ``replace`` helper) over the
``spm_precompiled`` crate (``parse``, ``DoubleArray::common_prefix_search``,
``Precompiled::transform``); reference/hf_tokenizers.md §4.1.

Blob: little-endian u32 ``trie_size``, ``trie_size // 4`` u32 Darts-clone units,
then a pool of NUL-terminated UTF-8 replacements. A trie value is a byte index
into the pool. `Charsmap.transform(s)` is the replacement of the *shortest*
key that is a prefix of ``s`` (SentencePiece's and llama.cpp's longest match
is the option ``match="longest"``, see `_sentencepiece_normalize`).

Per extended grapheme cluster ``g`` of the piece: if ``g`` is shorter than 6
UTF-8 bytes and `transform(g)` exists, the whole cluster is replaced by it,
even when the key was only a prefix of ``g`` (the tail is dropped:
``"Ａ\u0301"`` -> ``"A"``); otherwise each character is transformed on its own.
Offsets follow HF's change list: a longer replacement inserts its extra
characters; a shorter one folds the deletion into the previously emitted
character. A deletion at the very start of a piece has no previous character,
so HF records nothing and every later character's offsets shift left
(``"\x01abc"`` with ``\x01`` -> ``""``: ``a`` maps to ``\x01``); reproduced.

A malformed trie makes HF panic on the first lookup that leaves the array; it
raises `EncodeError` here.

Performance: outside the zones around characters that can join a neighbour
into one cluster (marks, ZWJ, CR, Hangul jamo, ...), every character is its own
cluster, so those stretches (most of ASCII, CJK, Latin or Cyrillic text) go
through ``str.translate`` with a lazily filled per-character table; inside the
zones the clusters (`regex` ``\\X``) are mapped through a per-cluster cache.
Running ``\\X`` over the whole text was twice as slow on mixed-script text; a
single regex describing the zones (``[^J]?(?:J[^J]?)+``) was slower still,
as it backtracks at every character.

Compiled: when the kernel ``polytok._kernels.charsmap`` is built, `normalize` runs
there: HF's path outside the zones (each zone's clusters still come from the
code here), and sentencepiece's whole ``.model`` path (`LongestMatch.iter_fast_chunks`
and `sentencepiece_text` in one walk). The kernel answers None where it does not
decide (a blob the pure path would raise on, lone surrogates), and the pure path
runs. llama.cpp's rules (GGUF) and the aligned paths stay pure Python. The kernel reads the blob
as given; the pure path unpacks its units on first use (`Charsmap.units`).
"""

from __future__ import annotations

import base64
import binascii
import codecs
import struct
from collections.abc import Iterable, Iterator
from functools import cached_property
from typing import Any, Literal

import regex

from .._config import as_object, join, required
from ..errors import EncodeError, FormatError, not_utf8
from ..kernels import compiled_module, forced_pure
from ..normalized import NormalizedString
from ._sentencepiece_normalize import (
    LongestMatch,
    rewrite_spaces,
    sentencepiece_aligned,
    sentencepiece_text,
    space_changes,
    whole_characters,
)
from .base import NormalizerBase

_GRAPHEME = regex.compile(r"\X")
# Characters that may join a neighbour into one grapheme cluster (UAX #29):
# extenders, spacing marks, ZWJ, CR (of CRLF), prepend, Hangul jamo and
# syllables, regional indicators. Without any of them, every char is a cluster.
_JOINER = regex.compile(
    r"[\r\p{Grapheme_Cluster_Break=Extend}\p{Grapheme_Cluster_Break=ZWJ}"
    r"\p{Grapheme_Cluster_Break=SpacingMark}\p{Grapheme_Cluster_Break=Prepend}"
    r"\p{Grapheme_Cluster_Break=L}\p{Grapheme_Cluster_Break=V}\p{Grapheme_Cluster_Break=T}"
    r"\p{Grapheme_Cluster_Break=LV}\p{Grapheme_Cluster_Break=LVT}"
    r"\p{Grapheme_Cluster_Break=Regional_Indicator}]"
)

Plan = tuple[tuple[str, "str | None"], ...]
_CLUSTER_CACHE_LIMIT = 100_000


def _joined_zones(text: str) -> list[tuple[int, int]]:
    """Spans outside which every character is a grapheme cluster of its own.

    Two neighbours can only share a cluster when one of them is a `_JOINER`
    character, so each zone is the joiners with one neighbour on each side,
    merged when they overlap; zone edges are cluster boundaries.
    """
    zones: list[tuple[int, int]] = []
    n = len(text)
    for m in _JOINER.finditer(text):
        i = m.start()
        start, end = max(i - 1, 0), min(i + 2, n)
        if zones and start < zones[-1][1]:
            zones[-1] = (zones[-1][0], end)
        else:
            zones.append((start, end))
    return zones


_UTF8_CHUNK = 1 << 13


def _is_utf8(data: memoryview) -> bool:
    """Whether `data` is UTF-8 (what ``bytes.decode("utf-8")`` accepts), decoded in chunks whose
    text is dropped as it is made: a charsmap pool's whole text is ~60,000 wide characters, new
    memory on every load."""
    decode = codecs.getincrementaldecoder("utf-8")().decode
    try:
        for at in range(0, len(data), _UTF8_CHUNK):
            decode(data[at:at + _UTF8_CHUNK])
        decode(b"", True)
    except UnicodeDecodeError:
        return False
    return True


class Charsmap:
    """The parsed blob: a Darts-clone double array over UTF-8 keys and a replacement pool."""

    def __init__(self, blob: bytes | memoryview) -> None:
        if len(blob) < 4:
            raise ValueError("shorter than its 4-byte header")
        (trie_size,) = struct.unpack_from("<I", blob)
        n_units = trie_size // 4
        if 4 + 4 * n_units > len(blob):
            raise ValueError(f"trie of {trie_size} bytes but only {len(blob) - 4} follow the header")
        # as given (a view into the file's bytes from the `.model` reader): the compiled kernel reads
        # it (`Precompiled._make_kernel`)
        self.blob = blob
        self._pool_at = 4 + 4 * n_units
        if not _is_utf8(memoryview(blob)[self._pool_at:]):
            try:
                bytes(blob[self._pool_at:]).decode("utf-8")
            except UnicodeDecodeError as exc:
                raise ValueError(f"replacement pool is not UTF-8 ({exc.reason})") from None

    @cached_property
    def pool(self) -> bytes:
        """The replacement strings, NUL-terminated (sliced on first use: the compiled path reads `blob`)."""
        return bytes(self.blob[self._pool_at:])

    @cached_property
    def units(self) -> tuple[int, ...]:
        """The trie's units (unpacked on first use: the compiled path reads `blob` instead)."""
        return struct.unpack_from(f"<{(len(self.blob) - 4 - len(self.pool)) // 4}I", self.blob, 4)

    def __getstate__(self) -> dict[str, Any]:
        """Pickled without the unpacked units and the pool (`blob` holds them); a view as bytes."""
        state = self.__dict__.copy()
        state.pop("units", None)
        state.pop("pool", None)
        state["blob"] = bytes(self.blob)
        return state

    def unit(self, pos: int) -> int:
        """The double-array trie's unit at `pos` (bounds-checked)."""
        if pos >= len(self.units):
            raise EncodeError(f"precompiled_charsmap: trie index {pos} out of bounds ({len(self.units)} units)")
        return int(self.units[pos])

    @staticmethod
    def unit_offset(unit: int) -> int:
        """The offset a trie unit encodes (darts-clone's ``offset``)."""
        return (unit >> 10) << ((unit & 0x200) >> 6)

    def first_prefix_value(self, key: bytes) -> int | None:
        """Pool index of the shortest key that is a prefix of `key` (stops at a NUL byte)."""
        pos = self.unit_offset(self.unit(0))
        for byte in key:
            if byte == 0:
                break
            pos ^= byte
            unit = self.unit(pos)
            if unit & 0x800000FF != byte:
                return None
            pos ^= self.unit_offset(unit)
            if (unit >> 8) & 1:
                return self.unit(pos) & 0x7FFFFFFF
        return None

    def transform(self, chunk: str) -> str | None:
        index = self.first_prefix_value(chunk.encode("utf-8"))
        if index is None:
            return None
        if index > len(self.pool):
            raise EncodeError(f"precompiled_charsmap: replacement index {index} past the pool")
        end = self.pool.find(b"\0", index)
        try:
            return self.pool[index:end if end >= 0 else len(self.pool)].decode("utf-8")
        except UnicodeDecodeError:
            raise EncodeError(f"precompiled_charsmap: replacement index {index} splits a character") from None


class _CharTable(dict[int, str]):
    """``str.translate`` table filled on first sight of each code point."""

    def __init__(self, charsmap: Charsmap) -> None:
        super().__init__()
        self._charsmap = charsmap

    def __reduce__(self) -> tuple[type[_CharTable], tuple[Charsmap]]:
        return type(self), (self._charsmap,)  # pickled empty: refilled as characters are met

    def __missing__(self, code: int) -> str:
        c = chr(code)
        value = self._charsmap.transform(c)
        self[code] = c if value is None else value
        return self[code]


class _ClusterTable(dict[str, Plan]):
    """Per-cluster plan: ``((old, new), ...)``, `new` None when `old` is kept."""

    def __init__(self, charsmap: Charsmap) -> None:
        super().__init__()
        self._charsmap = charsmap

    def __reduce__(self) -> tuple[type[_ClusterTable], tuple[Charsmap]]:
        return type(self), (self._charsmap,)  # pickled empty: refilled as clusters are met

    def __missing__(self, cluster: str) -> Plan:
        if len(self) >= _CLUSTER_CACHE_LIMIT:
            self.clear()  # unbounded input variety (zalgo text) must not grow memory forever
        transform = self._charsmap.transform
        whole = transform(cluster) if len(cluster.encode("utf-8")) < 6 else None
        plan: Plan = ((cluster, whole),) if whole is not None else tuple((c, transform(c)) for c in cluster)
        self[cluster] = plan
        return plan


def _output(plan: Plan) -> str:
    return "".join(old if new is None else new for old, new in plan)


class _ClusterText(dict[str, str]):
    def __init__(self, plans: _ClusterTable) -> None:
        super().__init__()
        self._plans = plans

    def __reduce__(self) -> tuple[type[_ClusterText], tuple[_ClusterTable]]:
        return type(self), (self._plans,)  # pickled empty: refilled as clusters are met

    def __missing__(self, cluster: str) -> str:
        if len(self) >= _CLUSTER_CACHE_LIMIT:
            self.clear()
        self[cluster] = _output(self._plans[cluster])
        return self[cluster]


def _replace(changes: list[tuple[str, int]], old: str, new: str) -> None:
    """HF ``precompiled.rs`` ``replace``: append `new` as the replacement of `old`."""
    diff = len(new) - len(old)
    changes.extend((c, 0) for c in new)
    if diff > 0:
        for i in range(len(changes) - diff, len(changes)):
            changes[i] = (changes[i][0], 1)
    elif diff < 0 and changes:
        # subtle: the deletion rides on the last change emitted so far, which may
        # belong to an earlier cluster; at the start of the piece there is none.
        c, change = changes[-1]
        changes[-1] = (c, change + diff)


class Precompiled(NormalizerBase):
    """Charsmap normalizer.

    Args:
        charsmap: the blob (may be empty with ``match="longest"``: no rules, as
            llama.cpp treats a GGUF without ``precompiled_charsmap``).
        match: ``"grapheme"`` (HF): per grapheme cluster, the shortest key (module
            notes); ``"longest"`` (SentencePiece, llama.cpp UGM): prefix by
            prefix, the longest key, with pass-through and the space rules of
            `_sentencepiece_normalize`. The options below apply to ``"longest"`` only.
        passthrough: llama.cpp's ``user_defined`` token texts (kept unmapped).
        add_space_prefix, remove_extra_whitespaces, escape_whitespaces,
        treat_whitespace_as_suffix: llama.cpp's vocabulary flags (reference/llama_vocab.md §4),
            sentencepiece's ``normalizer_spec`` / ``trainer_spec`` fields (add_dummy_prefix is
            `add_space_prefix`).
        passthrough_walk: True (llama.cpp): any prefix of a `passthrough` text along the
            trie walk is kept; False (sentencepiece ``PrefixMatcher``): only the longest
            whole text is.
        whitespace: ``"llama.cpp"`` (default) or ``"sentencepiece"``: whose space rules
            apply (`_sentencepiece_normalize` module notes).
    """

    def __init__(self, charsmap: bytes | memoryview, *, key: str = "precompiled_charsmap",
                 match: Literal["grapheme", "longest"] = "grapheme", passthrough: Iterable[str] = (),
                 add_space_prefix: bool = False, remove_extra_whitespaces: bool = False,
                 escape_whitespaces: bool = True, treat_whitespace_as_suffix: bool = False,
                 passthrough_walk: bool = True,
                 whitespace: Literal["llama.cpp", "sentencepiece"] = "llama.cpp") -> None:
        if match not in ("grapheme", "longest"):
            raise FormatError(f"match must be 'grapheme' or 'longest', not {match!r}", key="match")
        try:
            self.charsmap = Charsmap(charsmap) if charsmap or match == "grapheme" else None
        except ValueError as exc:
            raise FormatError(f"cannot parse precompiled_charsmap: {exc}", key=key) from None
        self._longest = None
        if whitespace not in ("llama.cpp", "sentencepiece"):
            raise FormatError(f"whitespace must be 'llama.cpp' or 'sentencepiece', not {whitespace!r}",
                              key="whitespace")
        self._sentencepiece = whitespace == "sentencepiece"
        if match == "longest":
            self._longest = LongestMatch(self.charsmap, passthrough, walk=passthrough_walk)
            self._spaces = ("\u2581" if escape_whitespaces else " ",
                            add_space_prefix and not treat_whitespace_as_suffix,
                            add_space_prefix and treat_whitespace_as_suffix, remove_extra_whitespaces)
        else:
            assert self.charsmap is not None
            self._chars = _CharTable(self.charsmap)
            self._plans = _ClusterTable(self.charsmap)
            self._texts = _ClusterText(self._plans)
        self._build_kernel()

    def _build_kernel(self) -> None:
        """Decide the path now (`kernels.forced_pure`); the compiled `normalize` is made the first
        time it is asked for (`_kernel`), not at load."""
        self.__dict__.pop("_kernel", None)
        self._compiled_path = not forced_pure()
        if not self._compiled_path and self.charsmap is not None:
            # the pure walk reads the units and the pool on every text: unpacked with the load
            self.charsmap.units  # noqa: B018
            self.charsmap.pool  # noqa: B018

    def __getattr__(self, name: str) -> Any:
        # only reached while `_kernel` is unset: made once, then an ordinary attribute
        if name != "_kernel":
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        self._kernel = made = self._make_kernel()
        return made

    def _make_kernel(self) -> Any:
        """The compiled `normalize` (``_kernels.charsmap``), or None: the pure path, for llama.cpp's
        rules and whenever the kernel is not built."""
        module = compiled_module("charsmap") if self._compiled_path else None
        if module is None or (self._longest is not None and not self._sentencepiece):
            return None
        symbols: list[bytes] = []
        if self._longest is not None:
            found = self._longest.whole_symbols()
            if found is None:
                return None  # llama.cpp's prefix walk: pure
            symbols = sorted(found)
            try:
                for symbol in symbols:
                    symbol.decode("utf-8")
            except UnicodeDecodeError:
                return None  # a piece with escaped bytes: the pure path decides
        return module.Charsmap(self.charsmap.blob if self.charsmap is not None else None, symbols)

    def __getstate__(self) -> dict[str, Any]:
        """Pickled without the compiled kernel (`_build_kernel` decides again)."""
        state = self.__dict__.copy()
        state.pop("_kernel", None)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._build_kernel()

    def _zone(self, text: str, start: int, end: int) -> str:
        """The text of the grapheme clusters of ``text[start:end]`` (the compiled path's zones)."""
        return "".join(map(self._texts.__getitem__, _GRAPHEME.findall(text, start, end)))

    @classmethod
    def from_config(cls, d: dict[str, Any], path: str) -> Precompiled:
        d = as_object(d, path)
        key = join(path, "precompiled_charsmap")
        encoded: str = required(d, "precompiled_charsmap", str, path)
        try:
            blob = base64.b64decode(encoded + "=" * (-len(encoded) % 4), validate=True)
        except (binascii.Error, ValueError) as exc:
            raise FormatError(f"invalid base64: {exc}", key=key) from None
        return cls(blob, key=key)

    def __repr__(self) -> str:
        units = len(self.charsmap.units) if self.charsmap is not None else 0
        return f"Precompiled(<{units} trie units>{', longest match' if self._longest else ''})"

    def batch_kernel(self) -> tuple[Any, str, bool, bool, bool] | None:
        if self._kernel is None or self._longest is None:
            return None
        space, prefix, suffix, remove_extra = self._spaces
        return self._kernel, space, prefix, suffix, remove_extra

    def normalize(self, text: str) -> str:
        if self._kernel is not None:
            done: str | None = (self._kernel.sentencepiece(text, *self._spaces) if self._longest is not None
                                else self._kernel.grapheme(text, self._zone))
            if done is not None:
                return done
        if self._longest is not None:
            if self._sentencepiece:
                return sentencepiece_text(self._sentencepiece_iter(text), *self._spaces)
            mapped = self._longest.mapped_text(text)
            return rewrite_spaces(mapped, *self._spaces)
        table, cluster_text, clusters = self._chars, self._texts.__getitem__, _GRAPHEME.findall
        parts: list[str] = []
        prev = 0
        for start, end in _joined_zones(text):
            parts.append(text[prev:start].translate(table))
            parts.append("".join(map(cluster_text, clusters(text, start, end))))
            prev = end
        parts.append(text[prev:].translate(table))
        return "".join(parts)

    def _sentencepiece_chunks(self, text: str) -> list[tuple[str, str]]:
        """sentencepiece's ``Normalizer::Normalize`` as ``(old, new)`` chunks, before the space rules."""
        return list(self._sentencepiece_iter(text))

    def _sentencepiece_iter(self, text: str) -> Iterator[tuple[str, str]]:
        """`_sentencepiece_chunks` one at a time."""
        assert self._longest is not None
        try:
            text.encode("utf-8")
        except UnicodeEncodeError as exc:  # sentencepiece takes UTF-8 text
            raise not_utf8(exc) from None
        return self._longest.iter_fast_chunks(text)

    def normalize_aligned(self, ns: NormalizedString) -> None:
        changes: list[tuple[str, int]] = []
        if self._longest is not None and self._sentencepiece:
            # sentencepiece's own offsets (`sentencepiece_aligned`), not HF's transform rules
            starts = [span[0] for span in ns.align] + [ns.align[-1][1] if ns.align else ns.orig_start]
            ns.text, ns.align = sentencepiece_aligned(self._sentencepiece_chunks(ns.text), *self._spaces, starts)
            return
        if self._longest is not None:
            leading = 0
            planned = space_changes(whole_characters(self._longest.chunks(ns.text)), *self._spaces)
            for source, target in planned:
                if not changes and not target:
                    leading += len(source)  # deleted before any kept character
                else:
                    _replace(changes, source, target)
            ns.transform(changes, leading)
            return
        modified = False
        for cluster in _GRAPHEME.findall(ns.text):
            for old, new in self._plans[cluster]:
                if new is None:
                    changes.append((old, 0))
                else:
                    modified = True
                    _replace(changes, old, new)
        if modified:
            ns.transform(changes)
