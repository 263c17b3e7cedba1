"""The SentencePiece / llama.cpp way of applying a precompiled charsmap: `Precompiled(match="longest")`.

Reproduces llama.cpp (llama-cpp-python 0.3.36, vendor/llama.cpp/src/llama-vocab.cpp):
``llm_tokenizer_ugm_session::normalize`` and ``normalize_prefix`` (lines
1078-1248), ``naive_trie::get_longest_prefix`` (line 47); reference/llama_vocab.md
§6.4. SentencePiece's ``normalizer.cc`` (``Normalizer::Normalize``) is the
model llama.cpp follows.

The text is consumed from left to right, one prefix at a time (not per
grapheme cluster as HF does):

1. pass-through: if the text at the position starts along a ``user_defined``
   token, the bytes walked are kept as they are. subtle: the walk goes as deep
   as the token trie allows, whether or not a token ends there, so any prefix
   of a user-defined token bypasses the charsmap.
2. else the *longest* charsmap key that is a prefix of the rest is replaced;
3. else one character is kept.

Then the spaces (only U+0020 *after* mapping counts) are rewritten with `space`
(``"▁"`` when escape_whitespaces, else ``" "``):

* ``merge`` (remove_extra_whitespaces): runs of spaces vanish and every run
  of non-spaces, the first included, is preceded by one `space`, even when
  ``prepend`` is off (unlike sentencepiece);
* otherwise every space becomes `space`, and ``prepend`` (add_space_prefix
  without treat_whitespace_as_suffix) puts one `space` before the first
  non-space character;
* ``append`` (add_space_prefix with treat_whitespace_as_suffix) appends one
  `space` at the end. llama.cpp never reads that flag from a GGUF, so it is
  always off there.

Known divergence: llama.cpp works on bytes, so a pass-through walk that stops
inside a multi-byte character (user token ``ﬁx`` shares the byte EF with
``Ａ``) keeps that byte raw and turns each remaining byte of the character into
U+FFFD; reproduced here with the stray byte as a surrogate escape. llama.cpp's
Viterbi then steps over such bytes by UTF-8 lead-byte length, while the model
here sees one character per escaped byte; both usually end in one collapsed
unknown (``Ａｂ`` matched llama.cpp in tests/models/test_unigram_llama_cpp.py),
but other vocabularies may split differently.

sentencepiece itself (0.2.3, ``normalizer.cc``: ``Normalizer::Normalize``,
``NormalizePrefix``, ``PrefixMatcher::PrefixMatch``) differs from llama.cpp in
two rules, chosen by options of `Precompiled`:

* ``passthrough_walk=False``: only a *whole* user-defined symbol passes through
  (the longest one that prefixes the rest); a mere prefix of one is mapped.
* ``whitespace="sentencepiece"`` (`sentencepiece_spaces`), per consumed prefix
  ("chunk"): with remove_extra_whitespaces, leading chunks whose output is
  exactly ``" "`` are dropped (all of them: the result is empty), and a chunk
  that follows one ending in a space loses its leading spaces; every remaining
  ``" "`` becomes `space`; add_dummy_prefix puts one `space` at the very start
  (so an all-space text without remove_extra_whitespaces gets one more, and no
  prefix is added without the flag); remove_extra_whitespaces then strips every
  trailing `space` (a literal ``"▁"`` of the text included); with
  treat_whitespace_as_suffix the `space` goes at the end instead.

Not reproduced: sentencepiece keeps at most 32 charsmap keys and 64 user-defined
symbols that match at one position (``kMaxTrieResultsSize``, ``kResultSize``) and
takes the longest of those; polytok takes the longest of all. The builder caps a
charsmap's keys per prefix, so only a hand-made file can differ.

`LongestMatch.fast_chunks` is the whole-symbol walk with one shortcut: a run of
characters that map to themselves is one identity chunk. Per character (cached):
no key and no user-defined symbol starts with it, or keys only continue past it
(``"a"`` starts ``"a\u0301"``) and the next character's first byte cannot
continue them. A space is always a chunk of its own, so the space rules see what
sentencepiece sees. Performance: with nmt_nfkc nearly every Latin letter starts
some key (a letter + combining mark), so the first version, which sent every
such letter to the byte-level walk, was very slow; the continuation bytes made
the walk rare (bench/README.md, 'Measurements behind design choices').
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from itertools import chain
from typing import TYPE_CHECKING

from ..errors import EncodeError

if TYPE_CHECKING:
    from .precompiled import Charsmap


def _replacement(charsmap: Charsmap, index: int) -> bytes:
    """The NUL-terminated pool string at `index`, with llama.cpp's two bounds checks."""
    pool = charsmap.pool
    if index >= len(pool):
        raise EncodeError(f"precompiled_charsmap: replacement index {index} past the pool")
    end = pool.find(b"\0", index)
    if end < 0:
        raise EncodeError(f"precompiled_charsmap: unterminated replacement at {index}")
    return pool[index:end]


def longest_match(charsmap: Charsmap, data: bytes, start: int) -> tuple[int, int]:
    """``(length, pool index)`` of the longest key that prefixes ``data[start:]``; length 0 if none."""
    unit = charsmap.unit
    offset = charsmap.unit_offset
    pos = offset(unit(0))
    best = (0, 0)
    for at in range(start, len(data)):
        byte = data[at]
        if byte == 0:
            break
        pos ^= byte
        node = unit(pos)
        if node & 0x800000FF != byte:
            break
        pos ^= offset(node)
        if (node >> 8) & 1:
            best = (at - start + 1, unit(pos) & 0x7FFFFFFF)
    return best


def _walked(charsmap: Charsmap, data: bytes) -> int:
    """How many bytes of `data` the walk of `longest_match` from 0 reads before it stops (a unit
    past the array stops it: where `longest_match` raises, it has raised first)."""
    units, offset = charsmap.units, charsmap.unit_offset
    pos = offset(units[0]) if units else 0
    for at, byte in enumerate(data):
        if byte == 0:
            return at
        pos ^= byte
        node = units[pos] if pos < len(units) else 0
        if node & 0x800000FF != byte:
            return at
        pos ^= offset(node)
    return len(data)


class LongestMatch:
    """The prefix-by-prefix charsmap walk with pass-through (steps 1-3 of the module notes)."""

    def __init__(self, charsmap: Charsmap | None, passthrough: Iterable[str], walk: bool = True) -> None:
        self._charsmap = charsmap
        prefixes: set[bytes] = set()
        symbols: set[bytes] = set()
        for token in passthrough:
            raw = token.encode("utf-8", "surrogateescape")
            if raw:
                symbols.add(raw)
                prefixes.update(raw[:k] for k in range(1, len(raw) + 1))
        self._prefixes = prefixes
        self._symbols = symbols if not walk else None
        self._symbol_starts = {s.decode("utf-8", "surrogateescape")[0] for s in symbols}
        self._plain: dict[str, bool | frozenset[int]] = {}

    def whole_symbols(self) -> set[bytes] | None:
        """The user-defined symbols that pass through whole (sentencepiece); None for llama.cpp's walk."""
        return self._symbols

    def __getstate__(self) -> dict[str, object]:
        """Pickled without the per-character cache (refilled as characters are met)."""
        return {**self.__dict__, "_plain": {}}

    def chunks(self, text: str) -> list[tuple[str, str]]:
        """``(old, new)`` for each consumed prefix, in order."""
        data = text.encode("utf-8", "surrogateescape")
        out: list[tuple[str, str]] = []
        at, size = 0, len(data)
        while at < size:
            length, new = self._step(data, at)
            old = data[at:at + length]
            out.append((old.decode("utf-8", "surrogateescape"), new.decode("utf-8", "surrogateescape")))
            at += length
        return out

    def mapped_text(self, text: str) -> str:
        """The new texts of `chunks`, joined, without the list of chunks: each is decoded as there,
        and joined into a block every 4096 (a long text's chunk strings took ~220 bytes a character)."""
        data = text.encode("utf-8", "surrogateescape")
        blocks: list[str] = []
        parts: list[str] = []
        at, size = 0, len(data)
        while at < size:
            length, new = self._step(data, at)
            parts.append(new.decode("utf-8", "surrogateescape"))
            at += length
            if len(parts) >= 4096:
                blocks.append("".join(parts))
                parts.clear()
        blocks.append("".join(parts))
        return "".join(blocks)

    def _step(self, data: bytes, at: int) -> tuple[int, bytes]:
        walked = whole = 0
        prefixes, symbols = self._prefixes, self._symbols
        while at + walked < len(data) and data[at:at + walked + 1] in prefixes:
            walked += 1
            if symbols is not None and data[at:at + walked] in symbols:
                whole = walked
        if symbols is not None:
            walked = whole  # sentencepiece: the longest whole symbol, not the walk
        if walked:
            return walked, data[at:at + walked]
        if self._charsmap is not None:
            length, index = longest_match(self._charsmap, data, at)
            if length:
                return length, _replacement(self._charsmap, index)
        lead = data[at]
        length = 1 if lead < 0x80 else 2 if lead < 0xE0 else 3 if lead < 0xF0 else 4
        if lead >= 0x80:  # a surrogate-escaped stray byte is one byte long
            try:
                data[at:at + length].decode("utf-8")
            except UnicodeDecodeError:
                return 1, "\ufffd".encode()
        return length, data[at:at + length]


    def _plainness(self, ch: str) -> bool | frozenset[int]:
        """Whether `ch` maps to itself: True whatever follows, False never (a key or symbol starts
        with it, or it is a space), else the first bytes of a following character that could
        continue a charsmap key (``"a"`` may start ``"a\u0301"``)."""
        known = self._plain.get(ch)
        if known is not None:
            return known
        found: bool | frozenset[int] = ch not in self._symbol_starts and ch != " "
        if found and self._charsmap is not None:
            try:
                found = _continuations(self._charsmap, ch.encode("utf-8"))
            except UnicodeEncodeError:
                found = False
        self._plain[ch] = found
        return found

    def fast_chunks(self, text: str) -> list[tuple[str, str]]:
        """`chunks`, with each run of characters that map to themselves as one identity chunk."""
        return list(self.iter_fast_chunks(text))

    def iter_fast_chunks(self, text: str) -> Iterator[tuple[str, str]]:
        """`fast_chunks` one at a time (a long text holds one chunk per space)."""
        plain = self._plain
        at, size = 0, len(text)
        slow: list[tuple[str, str]] = []
        while at < size:
            end = at
            while end < size:
                kind = plain.get(text[end])
                if kind is None:
                    kind = self._plainness(text[end])
                if kind is True:
                    end += 1
                elif kind is False or (end + 1 < size and _first_byte(text[end + 1]) in kind):
                    break
                else:
                    end += 1
            if end > at:
                yield text[at:end], text[at:end]
                at = end
            elif text[at] == " " and self._space_plain():
                yield " ", " "
                at += 1
            else:
                at = self._slow_chunk(text, at, slow)
                yield from slow
                slow.clear()

    def _space_plain(self) -> bool:
        """Whether no key or symbol starts with a space (cached under ``""``)."""
        known = self._plain.get("")
        if known is None:
            known = " " not in self._symbol_starts and (self._charsmap is None
                                                         or _continuations(self._charsmap, b" ") is True)
            self._plain[""] = known
        return known is True

    def _walk_reaches_end(self, data: bytes) -> bool:
        """Whether the symbol walk or the charsmap walk of `_step` at 0 reads all of `data` (so a
        longer window could give a longer match, even when the match found so far is shorter)."""
        if data in self._prefixes:
            return True
        return self._charsmap is not None and _walked(self._charsmap, data) == len(data)

    def _slow_chunk(self, text: str, at: int, out: list[tuple[str, str]]) -> int:
        """One `_step` at character `at`; returns the next character position."""
        window = 32
        while True:
            part = text[at:at + window]
            data = part.encode("utf-8", "surrogateescape")
            length, new = self._step(data, 0)
            if at + window >= len(text) or not self._walk_reaches_end(data):
                break
            window *= 4  # a walk reached the end of the window: a longer match may follow
        old = data[:length].decode("utf-8", "surrogateescape")
        out.append((old, new.decode("utf-8", "surrogateescape")))
        return at + len(old)


def _continuations(charsmap: Charsmap, raw: bytes) -> bool | frozenset[int]:
    """Walk `raw` down the trie: True if no key starts with it, False if a key ends within it,
    else the bytes that continue from there (keys longer than `raw`)."""
    unit, offset, units = charsmap.unit, charsmap.unit_offset, charsmap.units
    pos = offset(unit(0))
    for byte in raw:
        pos ^= byte
        node = unit(pos) if pos < len(units) else 0
        if node & 0x800000FF != byte:
            return True
        pos ^= offset(node)
        if (node >> 8) & 1:
            return False
    return frozenset(b for b in range(1, 256) if pos ^ b < len(units) and units[pos ^ b] & 0x800000FF == b)


def _first_byte(ch: str) -> int:
    code = ord(ch)
    if code < 0x80:
        return code
    if code < 0x800:
        return 0xC0 | code >> 6
    return 0xE0 | code >> 12 if code < 0x10000 else 0xF0 | code >> 18


def sentencepiece_spaces(chunks: list[tuple[str, str]], space: str, prefix: bool, suffix: bool,
                         remove_extra: bool) -> list[tuple[str, str]]:
    """sentencepiece's space rules (module notes) as ``(old, new)`` chunks; ``[]`` when all is dropped.

    `prefix`: add_dummy_prefix without treat_whitespace_as_suffix; `suffix`: with it.
    """
    return _spaces(chunks, space, prefix, suffix, remove_extra)[0]


def _spaces(chunks: list[tuple[str, str]], space: str, prefix: bool, suffix: bool,
            remove_extra: bool) -> tuple[list[tuple[str, str]], tuple[int, int] | None]:
    """`sentencepiece_spaces`, and where the strip of trailing spaces began (`_strip_trailing`)."""
    start = 0
    if remove_extra:
        while start < len(chunks) and chunks[start][1] == " ":
            start += 1
        if start == len(chunks):
            return [], None
    out: list[tuple[str, str]] = [(old, "") for old, _ in chunks[:start]]
    if prefix:
        out.append(("", space))
    after_space = remove_extra
    for old, new in chunks[start:]:
        if after_space:
            new = new.lstrip(" ")
        if new:
            after_space = remove_extra and new.endswith(" ")
            if " " in new:
                new = new.replace(" ", space)
        out.append((old, new))
    cut = _strip_trailing(out, space) if remove_extra else None
    if suffix:
        out.append(("", space))
    return out, cut


def sentencepiece_text(chunks: Iterable[tuple[str, str]], space: str, prefix: bool, suffix: bool,
                       remove_extra: bool) -> str:
    """The text of `sentencepiece_spaces`, read chunk by chunk: no list of chunks is kept (a long
    text holds one per space), and a space is one shared string. Stripping the trailing `space`
    characters of the whole text is `_strip_trailing`'s strip, chunk by chunk from the end."""
    chunks = iter(chunks)
    first = None
    for first in chunks:
        if not (remove_extra and first[1] == " "):
            break
    else:
        first = None
        if remove_extra:
            return ""
    parts = [space] if prefix else []
    after_space = remove_extra
    for _, new in chain([first] if first is not None else [], chunks):
        if after_space:
            new = new.lstrip(" ")
        if new:
            after_space = remove_extra and new.endswith(" ")
            parts.append(space if new == " " else new.replace(" ", space) if " " in new else new)
    text = "".join(parts)
    if remove_extra:
        text = text.rstrip(space)
    return text + space if suffix else text


def _strip_trailing(out: list[tuple[str, str]], space: str) -> tuple[int, int] | None:
    """Strip every trailing `space`; returns the chunk and the position in its new text of the
    first one stripped (None: none was)."""
    cut = None
    for index in range(len(out) - 1, -1, -1):
        old, new = out[index]
        kept = new.rstrip(space)
        if len(kept) < len(new):
            out[index] = (old, kept)
            cut = (index, len(kept))
        if kept:
            break
    return cut


def sentencepiece_aligned(chunks: list[tuple[str, str]], space: str, prefix: bool, suffix: bool,
                          remove_extra: bool, starts: list[int]) -> tuple[str, list[tuple[int, int]]]:
    """`sentencepiece_spaces`' text, and the original range of each of its characters as sentencepiece
    0.2.3 gives it (normalizer.cc, ``Normalizer::Normalize``'s ``norm_to_orig``).

    `starts`: the original position of each character of the text the chunks
    cover, and one past its end. Each output character starts where its chunk
    starts (the consumed input so far, so an inserted space starts where the next
    chunk does); in an identity chunk (``old`` begins with ``new``: a run of
    characters that map to themselves) each starts at its own character. It ends
    where the next one starts, the last one where the input ends, or, when
    trailing spaces were stripped, where the first stripped one started. So a
    token's range, first character's start to last character's end, is
    sentencepiece's ``[norm_to_orig[begin], norm_to_orig[end])``: deleted input
    (extra spaces, removed characters) belongs to the token before it.

    Not reproduced: a whole user-defined symbol (or a charsmap key mapping to its own
    prefix) is one chunk for sentencepiece, so a token that starts inside it would
    start at the symbol's start; here each character has its own.
    """
    out, cut = _spaces(chunks, space, prefix, suffix, remove_extra)
    chunk_starts = []
    at = 0
    for old, _ in out:
        chunk_starts.append(at)
        at += len(old)
    end = starts[at]
    if cut is not None:
        old, new = out[cut[0]]
        end = starts[chunk_starts[cut[0]] + (cut[1] if old.startswith(new) else 0)]
    begins: list[int] = []
    for (old, new), at in zip(out, chunk_starts):
        if not new:
            continue
        if old.startswith(new):
            begins += starts[at:at + len(new)]
        else:
            begins += [end if at == len(starts) - 1 else starts[at]] * len(new)
    begins.append(end)
    return "".join(new for _, new in out), list(zip(begins, begins[1:]))


def whole_characters(chunks: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """`chunks` regrouped so that every ``old`` is whole characters of the text (for alignments).

    A pass-through walk can stop inside a character; its bytes come back as
    surrogate escapes, and the chunks that finish the character are merged in.
    """
    out: list[tuple[str, str]] = []
    pending_old, pending_new = b"", ""
    for old, new in chunks:
        if not pending_old and not _has_escape(old):
            out.append((old, new))
            continue
        pending_old += old.encode("utf-8", "surrogateescape")
        pending_new += new
        try:
            out.append((pending_old.decode("utf-8"), pending_new))
        except UnicodeDecodeError:
            continue
        pending_old, pending_new = b"", ""
    if pending_old:
        out.append((pending_old.decode("utf-8", "surrogateescape"), pending_new))
    return out


def _has_escape(text: str) -> bool:
    return any("\udc80" <= ch <= "\udcff" for ch in text)


def rewrite_spaces(text: str, space: str, prepend: bool, append: bool, merge: bool) -> str:
    """The space rules of the module notes, on the mapped text."""
    if merge:
        result = "".join(space + run for run in text.split(" ") if run)
    else:
        lead = len(text) - len(text.lstrip(" "))
        result = text.replace(" ", space)
        if prepend and lead < len(text):
            result = space * lead + space + result[lead * len(space):]
    return result + space if append else result


def space_changes(chunks: list[tuple[str, str]], space: str, prepend: bool, append: bool,
                  merge: bool) -> list[tuple[str, str]]:
    """`rewrite_spaces` as ``(old, new)`` chunks, for the aligned path."""
    out: list[tuple[str, str]] = []
    in_word = prepended = False
    for old, new in chunks:
        text = ""
        for ch in new:
            if ch != " ":
                if not in_word:
                    in_word = True
                    if (prepend and not prepended) or merge:
                        text += space
                        prepended = True
                text += ch
            else:
                in_word = False
                if not merge:
                    text += space
        out.append((old, text))
    if append and out:
        out[-1] = (out[-1][0], out[-1][1] + space)
    return out
