"""The added/special-token table and the split of text around it — one module for every format.

HF tokenizers 0.23.3, ``tokenizers/src/tokenizer/added_vocabulary.rs``:
``add_tokens`` (id assignment, normalized patterns), ``refresh_added_tokens``
(one matcher over the non-normalized contents, one over the normalized
patterns), ``find_matches`` (leftmost-longest, then single_word / lstrip /
rstrip and ``encode_special_tokens``) and ``extract_and_normalize`` (raw pass,
then a pass over each normalized piece).

llama.cpp decides differently (``src/llama-vocab.cpp``,
``tokenizer_st_partition``): its special texts are carved out of the raw text
one token at a time, longest text first (not leftmost-longest), CONTROL and
UNKNOWN entries only when ``parse_special`` is on, USER_DEFINED entries always,
with LSTRIP/RSTRIP eating ASCII white space around them. `LongestFirstPartition`
is that rule; both share `Split` and `SpecialTokens`.

Engine differences are options here, never a second copy: HF's
``encode_special_tokens`` and llama.cpp's ``parse_special=false`` are both
`SpecialTokens.AS_TEXT`. Inside this module that one bool, "a special marker in
the text is parsed as its token", is always called ``parse_special`` (the
public ``special=`` argument of ``encode`` becomes it).

Only the matching lives here. Which GGUF entries llama.cpp puts in the partition
(attribute bits, special ids found by text, the EOG set, the LSTRIP/RSTRIP name
rules of ``llama_vocab::impl::load``) is load policy, decided by
`polytok.formats.gguf_token_attrs`.

The compiled kernel ``polytok._kernels.special_scan`` (when built) runs the two scans
(`TokenTrie.find_all`, `LongestFirstPartition.split`) over the text's code points with the
same rules; HF's single_word / lstrip / rstrip checks on the matches stay here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Protocol

import regex

from . import kernels
from .text.chars import WHITE_SPACE

__all__ = ["SpecialTokens", "AddedToken", "AddedVocabulary", "TokenTrie", "PartitionEntry", "LongestFirstPartition",
           "with_empty_texts"]


class SpecialTokens(StrEnum):
    """Whether a literal special-token marker in the text is parsed as that token.

    ``PARSE`` (``"parse"``): ``<|im_end|>`` in the text becomes its one id — HF's
    default, llama.cpp's ``parse_special=true``, tiktoken's ``allowed_special="all"``.
    ``AS_TEXT`` (``"text"``): it is tokenized as ordinary text — HF's
    ``encode_special_tokens=True``, llama.cpp's ``parse_special=false``,
    tiktoken's ``encode_ordinary``. Non-special added tokens match either way.
    ``RAISE`` (``"raise"``): a text holding a special-token marker raises `EncodeError`
    naming it and its place; one holding none is read as ``AS_TEXT`` reads it —
    tiktoken's default ``disallowed_special="all"``. ``special=`` also takes a
    collection of markers to parse, the others read as text (tiktoken's
    ``allowed_special``; `polytok.tokenizer.special_controls`).
    """

    PARSE = "parse"
    AS_TEXT = "text"
    RAISE = "raise"


@dataclass(frozen=True, slots=True)
class AddedToken:
    """One added-vocabulary entry with HF's flags (HF default: ``normalized = not special``)."""

    content: str
    special: bool = False
    single_word: bool = False
    lstrip: bool = False
    rstrip: bool = False
    normalized: bool = True


class _Vocab(Protocol):
    def token_to_id(self, token: str) -> int | None: ...

    def vocab_size(self) -> int: ...


class _Normalizer(Protocol):
    def normalize(self, text: str) -> str: ...


class TokenTrie:
    """Leftmost-longest matching of a fixed set of strings (HF uses a daachorse automaton).

    A candidate-position regex (the set of first characters) skips text that
    cannot start a match, so text without markers costs one regex scan.

    The matcher (the trie, that regex, the compiled table) is built on the first search:
    most loads never search (a SentencePiece model's CONTROL pieces are read as text by
    default). Whether it is compiled is decided when the trie is made (`kernels.forced_pure`).
    """

    __slots__ = ("_entries", "_root", "_first", "_table", "_compiled_path", "_built")

    def __init__(self, entries: dict[str, int]) -> None:
        self._entries = dict(entries)
        self._compiled_path = not kernels.forced_pure()
        self._built = False

    def _build(self) -> None:
        root: dict[Any, Any] = {}
        for text, value in self._entries.items():
            node = root
            for c in text:
                node = node.setdefault(c, {})
            node[None] = value
        self._root = root
        firsts = sorted(k for k in root if k is not None)
        self._first = regex.compile("[" + "".join(regex.escape(c) for c in firsts) + "]") if firsts else None
        module = kernels.compiled_module("special_scan") if self._compiled_path else None
        self._table = _compiled_table(module, lambda module: module.Trie(self._entries))
        self._built = True  # last: a thread that sees it sees the rest

    @property
    def _compiled(self) -> Any:
        """The compiled table (``special_scan.Trie``), or None: the pure loop."""
        if not self._built:
            self._build()
        return self._table

    def __getstate__(self) -> tuple[dict[str, int]]:
        """Pickled as its entries (the matcher is rebuilt)."""
        return (self._entries,)

    def __setstate__(self, state: tuple[dict[str, int]]) -> None:
        self.__init__(state[0])  # type: ignore[misc]

    def find_all(self, text: str) -> list[tuple[int, int, int]]:
        """Non-overlapping leftmost-longest matches ``(start, end, value)``."""
        if not self._built:  # (`_compiled` inlined: this runs once per text)
            self._build()
        compiled = self._table
        if compiled is not None:
            return compiled.find_all(text)  # type: ignore[no-any-return]
        if self._first is None:
            return []
        out: list[tuple[int, int, int]] = []
        root, search, n = self._root, self._first.search, len(text)
        pos = 0
        while True:
            m = search(text, pos)
            if m is None:
                return out
            start = m.start()
            node: dict[Any, Any] | None = root
            i, best = start, None
            while i < n and node is not None:
                node = node.get(text[i])
                if node is None:
                    break
                i += 1
                if None in node:
                    best = (i, node[None])
            if best is None:
                pos = start + 1
                continue
            out.append((start, best[0], best[1]))
            pos = best[0]


def _compiled_table(module: Any, build: Callable[[Any], Any]) -> Any:
    """``build(module)`` (the ``special_scan`` kernel), or None on the pure-Python path (`module`
    None) or for a table it cannot hold."""
    if module is None:
        return None
    try:
        return build(module)
    except (TypeError, ValueError, OverflowError, MemoryError):
        return None


# Rust `regex` crate Unicode classes, as HF's single_word / lstrip / rstrip checks use them.
_WORD_CHAR = r"[\p{Alphabetic}\p{M}\p{Nd}\p{Pc}\p{Join_Control}]"
_WORD = regex.compile(_WORD_CHAR)
_SPACES_AT_START = regex.compile(r"[\p{White_Space}]*")

Split = tuple[int, int, int | None]  # (start, end, added-token id or None for free text)


class AddedVocabulary:
    """HF's added vocabulary: ids, flags, the special set and the two matchers."""

    def __init__(self) -> None:
        self.content_to_id: dict[str, int] = {}
        self.id_to_entry: dict[int, AddedToken] = {}
        self.normalized_form: dict[int, str] = {}
        self.special_contents: set[str] = set()
        self._raw: TokenTrie | None = None
        self._normed: TokenTrie | None = None

    def __len__(self) -> int:
        return len(self.content_to_id)

    def add_tokens(self, tokens: list[AddedToken], model: _Vocab, normalizer: _Normalizer | None) -> None:
        """Add `tokens` in one call, assigning ids as HF ``add_tokens`` does (file ids are not used)."""
        size = model.vocab_size()
        if self.id_to_entry:
            top = max(self.id_to_entry)
            next_id = top + 1 if top >= size or size == 0 else size
        else:
            next_id = size
        for token in tokens:
            if not token.content:
                continue
            known = self.content_to_id.get(token.content)
            if known is not None and self.id_to_entry.get(known) == token:
                continue
            new_id = known if known is not None else model.token_to_id(token.content)
            if new_id is None:
                new_id, next_id = next_id, next_id + 1
            if token.normalized and normalizer is not None:
                normed = normalizer.normalize(token.content)
                if normed != token.content:
                    self.normalized_form[new_id] = normed
            self.content_to_id[token.content] = new_id
            if token.special:
                self.special_contents.add(token.content)
            self.id_to_entry[new_id] = token
        self._rebuild()

    def add_fixed(self, tokens: dict[int, AddedToken]) -> None:
        """Add entries at ids the format fixes (tiktoken and tekken special tokens; none normalized)."""
        for id_, token in tokens.items():
            self.content_to_id[token.content] = id_
            if token.special:
                self.special_contents.add(token.content)
            self.id_to_entry[id_] = token
        self._rebuild()

    def _rebuild(self) -> None:
        raw: dict[str, int] = {}
        normed: dict[str, int] = {}
        for id_, token in self.id_to_entry.items():
            if token.normalized:
                normed[self.normalized_form.get(id_, token.content)] = id_
            else:
                raw[token.content] = id_
        self._raw = TokenTrie(raw) if raw else None
        self._normed = TokenTrie(normed) if normed else None

    # -- lookups ----------------------------------------------------------------------

    def token_to_id(self, content: str) -> int | None:
        return self.content_to_id.get(content)

    def decode_string(self, id_: int) -> str | None:
        """The string an added id decodes through (its normalized form when that differs)."""
        entry = self.id_to_entry.get(id_)
        if entry is None:
            return None
        return self.normalized_form.get(id_, entry.content)

    def is_special_string(self, s: str) -> bool:
        return s in self.special_contents

    @property
    def has_normalized(self) -> bool:
        return self._normed is not None

    def cuts_text(self, parse_special: bool) -> bool:
        """Whether `split_raw` or `split_normalized` can cut a text in this mode: false when every
        entry is a special token and specials are read as text (or there is no entry)."""
        if parse_special:
            return bool(self.id_to_entry)
        return any(token.content not in self.special_contents for token in self.id_to_entry.values())

    # -- splitting --------------------------------------------------------------------

    def split_raw(self, text: str, parse_special: bool) -> list[Split]:
        """First pass: non-normalized added tokens in the raw text."""
        return self._split(text, self._raw, parse_special)

    def split_normalized(self, text: str, parse_special: bool) -> list[Split]:
        """Second pass: normalized added tokens in one normalized piece."""
        return self._split(text, self._normed, parse_special)

    def _split(self, text: str, trie: TokenTrie | None, parse_special: bool) -> list[Split]:
        if not text:
            return [(0, 0, None)]
        if trie is None:
            return [(0, len(text), None)]
        splits: list[Split] = []
        prev_end = 0
        for start, stop, id_ in trie.find_all(text):
            entry = self.id_to_entry[id_]
            if not parse_special and entry.content in self.special_contents:
                continue  # stays text, but its span is not searched again
            if entry.single_word and not _is_single_word(text, start, stop):
                continue
            if entry.lstrip:
                start = max(_spaces_before(text, start), prev_end)
            if entry.rstrip:
                # subtle: not bounded by the next match, so two token spans can overlap (as in HF).
                stop = _SPACES_AT_START.match(text, stop).end()  # type: ignore[union-attr]
            if prev_end < start:
                splits.append((prev_end, start, None))
            splits.append((start, stop, id_))
            prev_end = stop
        if prev_end != len(text):
            splits.append((prev_end, len(text), None))
        return splits


def with_empty_texts(splits: list[Split], length: int) -> list[Split]:
    """`splits` with an empty free-text split wherever the text between two special tokens (or
    before the first, or after the last) is empty, as tiktoken 0.14.0 cuts text: src/lib.rs
    ``CoreBPE::encode`` runs ``find_iter`` on the text before each allowed special token and on
    the rest after the last, even where it is empty. Only a pre-tokenizer that splits empty
    text (``splits_empty_text``) needs them."""
    out: list[Split] = []
    text_before = False  # whether the split just passed is free text
    for split in splits:
        if split[2] is not None and not text_before:
            out.append((split[0], split[0], None))
        out.append(split)
        text_before = split[2] is None
    if not text_before:
        out.append((length, length, None))
    return out


def _is_single_word(text: str, start: int, stop: int) -> bool:
    before_ok = start == 0 or _WORD.match(text, start - 1) is None
    after_ok = stop == len(text) or _WORD.match(text, stop) is None
    return before_ok and after_ok


def _spaces_before(text: str, start: int) -> int:
    """Start of the run of White_Space characters that ends at `start`."""
    while start > 0 and text[start - 1] in WHITE_SPACE:
        start -= 1
    return start


# C isspace() in the "C" locale, as llama.cpp's LSTRIP/RSTRIP use it.
_C_SPACE = " \t\n\v\f\r"


@dataclass(frozen=True, slots=True)
class PartitionEntry:
    """One entry of llama.cpp's special-token cache (CONTROL, USER_DEFINED or UNKNOWN)."""

    id: int
    text: str
    always: bool  # USER_DEFINED: carved out even when special markers are read as text
    lstrip: bool = False
    rstrip: bool = False


class LongestFirstPartition:
    """llama.cpp's special-token partition (llama-vocab.cpp ``tokenizer_st_partition``).

    Entries are tried longest text first (UTF-8 byte length; ties keep id order:
    libstdc++'s unstable sort may order equal-length entries differently, which
    matters only when two equal-length texts overlap in one input). Each entry
    is searched left to right in every free fragment left by the longer ones.
    """

    __slots__ = ("_entries", "_compiled")

    def __init__(self, entries: list[PartitionEntry]) -> None:
        self._entries = sorted((e for e in entries if e.text), key=lambda e: -len(e.text.encode("utf-8")))
        self._compiled = _compiled_table(kernels.kernel("special_scan"), lambda module: module.Partition(
            [(e.text, e.id, e.always, e.lstrip, e.rstrip) for e in self._entries]))

    def __getstate__(self) -> tuple[list[PartitionEntry]]:
        """Pickled as its entries (the compiled table is rebuilt)."""
        return (self._entries,)

    def __setstate__(self, state: tuple[list[PartitionEntry]]) -> None:
        self.__init__(state[0])  # type: ignore[misc]

    has_normalized = False  # all of llama.cpp's matching is on the raw text

    def cuts_text(self, parse_special: bool) -> bool:
        """Whether `split` can cut a text in this mode: false when only CONTROL and UNKNOWN
        entries exist and special markers are read as text (or there is no entry)."""
        return any(parse_special or entry.always for entry in self._entries)

    def entries(self) -> list[PartitionEntry]:
        """Every entry, in the order they are tried (longest text first)."""
        return list(self._entries)

    def parsed_only(self) -> list[PartitionEntry]:
        """The entries matched only when special markers are parsed (llama.cpp's CONTROL and
        UNKNOWN, not USER_DEFINED), in id order."""
        return sorted((e for e in self._entries if not e.always), key=lambda e: e.id)

    def split_raw(self, text: str, parse_special: bool) -> list[Split]:
        return self.split(text, parse_special)

    def split_normalized(self, text: str, parse_special: bool) -> list[Split]:
        return [(0, len(text), None)]

    def split(self, text: str, parse_special: bool) -> list[Split]:
        """Free and special spans of `text`, in order (free spans may be empty after stripping)."""
        if self._compiled is not None:
            found = self._compiled.split(text, parse_special)
            if found is not None:
                return found  # type: ignore[no-any-return]
        pieces: list[Split] = [(0, len(text), None)] if text else []
        for entry in self._entries:
            if not (parse_special or entry.always):
                continue
            out: list[Split] = []
            for piece in pieces:
                if piece[2] is None and entry.text in text[piece[0]:piece[1]]:
                    out.extend(self._carve(text, piece[0], piece[1], entry))
                else:
                    out.append(piece)
            pieces = out
        return [p for p in pieces if p[2] is not None or p[1] > p[0]]

    @staticmethod
    def _carve(text: str, start: int, end: int, entry: PartitionEntry) -> list[Split]:
        out: list[Split] = []
        n = len(entry.text)
        while True:
            at = text.find(entry.text, start, end)
            if at < 0:
                break
            left_end = at
            if entry.lstrip:
                while left_end > start and text[left_end - 1] in _C_SPACE:
                    left_end -= 1
            out.append((start, left_end, None))
            out.append((at, at + n, entry.id))
            start = at + n
            if entry.rstrip:
                while start < end and text[start] in _C_SPACE:
                    start += 1
        out.append((start, end, None))
        return out
