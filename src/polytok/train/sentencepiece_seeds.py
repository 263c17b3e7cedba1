"""The Unigram trainer's seed pieces: frequent substrings from a suffix array.

Reproduces sentencepiece 0.2.3 src/unigram_model_trainer.cc
``MakeSeedSentencePiecesFromCorpus`` and its ``BoundedPriorityQueue``:

* the sentences, each repeated by its count and ended by a NUL byte, are one
  byte string; its suffix array and LCP array give the LCP intervals (the
  branching nodes of the suffix tree), visited in the post-order of the stack
  walk of Abouelhoda et al.;
* an interval of depth d bytes over k suffixes is the substring of d bytes
  occurring k times; it is kept when d > 1, k >= 2, it starts and ends on
  character boundaries, holds no NUL once its trailing NULs are cut, has 2 ..
  max_sentencepiece_length characters and is a valid piece; its count is added
  to the substring's (a substring met again through a trailing NUL adds up);
* every substring counted at least twice scores count * characters (float32);
  the best ``seed_sentencepiece_size`` by (score, bytes) descending then bytes
  are kept, after every character of the corpus (count descending, then text);
  all scores become log probabilities (float32).

The suffix array is built by prefix doubling rather than libsais: a suffix array
is unique, so the intervals and their order are the same. A corpus above
sentencepiece's 500 MB chunk, and its score-based trimming past 16 times the
seed size, are out of reach here (`SeedLimitError`).
"""

from __future__ import annotations

import math

from .sentencepiece_f32 import f32
from .sentencepiece_pieces import BOUNDARY, UNK_CHAR, PieceRules

__all__ = ["seed_pieces", "suffix_array", "lcp_array", "SeedLimitError"]

_CHUNK_BYTES = 500 * 1024 * 1024


class SeedLimitError(ValueError):
    """A corpus the seed step would split into chunks or trim, which is not reproduced."""


def suffix_array(data: bytes) -> list[int]:
    """Start offsets of `data`'s suffixes in lexicographic order (a prefix sorts first)."""
    size = len(data)
    if size == 0:
        return []
    rank = list(data)
    order = sorted(range(size), key=rank.__getitem__)
    step = 1
    while True:
        base = max(rank) + 2
        shifted = [rank[i + step] + 1 if i + step < size else 0 for i in range(size)]
        keys = [rank[i] * base + shifted[i] for i in range(size)]
        order.sort(key=keys.__getitem__)
        new_rank = [0] * size
        current = 0
        for position in range(1, size):
            if keys[order[position]] != keys[order[position - 1]]:
                current += 1
            new_rank[order[position]] = current
        rank = new_rank
        if current == size - 1:
            return order
        step *= 2


def lcp_array(data: bytes, order: list[int]) -> list[int]:
    """``lcp[i]``: the common prefix length of suffixes ``order[i-1]`` and ``order[i]`` (Kasai); lcp[0] = 0."""
    size = len(data)
    rank = [0] * size
    for position, start in enumerate(order):
        rank[start] = position
    lcp = [0] * size
    height = 0
    for start in range(size):
        position = rank[start]
        if position == 0:
            height = 0
            continue
        other = order[position - 1]
        while start + height < size and other + height < size and data[start + height] == data[other + height]:
            height += 1
        lcp[position] = height
        if height:
            height -= 1
    return lcp


def _substring_counts(data: bytes, rules: PieceRules, max_chars: int) -> dict[bytes, int]:
    """The LCP-interval walk: each kept substring with its summed count."""
    size = len(data)
    order = suffix_array(data)
    lcp = lcp_array(data, order)
    counts: dict[bytes, int] = {}
    valid: dict[bytes, bool] = {}
    stack: list[tuple[int, int]] = [(0, 0)]
    for index in range(1, size + 1):
        lcp_value = lcp[index] if index < size else 0
        last_left = index - 1
        while lcp_value < stack[-1][1]:
            left, depth = stack.pop()
            last_left = left
            freq = index - left
            if depth > 1 and freq >= 2:
                offset = order[left]
                end = offset + depth
                if end <= size and (data[offset] & 0xC0) != 0x80 and (end == size or (data[end] & 0xC0) != 0x80):
                    piece = data[offset:end].rstrip(b"\0")
                    if b"\0" not in piece:
                        ok = valid.get(piece)
                        if ok is None:
                            text = piece.decode("utf-8")
                            ok = valid[piece] = 1 < len(text) <= max_chars and rules.is_valid(text)
                        if ok:
                            counts[piece] = counts.get(piece, 0) + freq
            if lcp_value > stack[-1][1]:
                stack.append((left, lcp_value))
        if lcp_value > stack[-1][1]:
            stack.append((last_left, lcp_value))
    return counts


def _to_log_prob(pieces: list[tuple[str, float]]) -> list[tuple[str, float]]:
    """``ToLogProb``: float32 log(value / sum), the sum in double."""
    total = 0.0
    for _, value in pieces:
        total += value
    log_total = math.log(total)
    return [(piece, f32(math.log(value) - log_total)) for piece, value in pieces]


def seed_pieces(sentences: list[tuple[str, int]], rules: PieceRules, seed_size: int,
                vocab_size: int) -> list[tuple[str, float]]:
    """The seed vocabulary with float32 log-probability scores (``MakeSeedSentencePieces``).

    Raises:
        SeedLimitError: a corpus beyond what is reproduced (module notes).
    """
    all_chars: dict[str, int] = {}
    for text, freq in sentences:
        for char in text:
            if char != UNK_CHAR and char != BOUNDARY:
                all_chars[char] = all_chars.get(char, 0) + freq
    seeds: list[tuple[str, float]] = [(char, f32(float(count))) for char, count in
                                      sorted(all_chars.items(), key=lambda item: (-item[1], item[0]))]
    if seed_size == 0:
        seed_size = max(100000, vocab_size * 8)
    parts: list[bytes] = []
    total = 0
    for text, freq in sentences:
        encoded = text.encode("utf-8") + b"\0"
        parts.append(encoded * freq)
        total += len(encoded) * freq
    if total >= _CHUNK_BYTES:
        raise SeedLimitError(f"texts: {total} bytes of sentences; sentencepiece cuts seed extraction into "
                             f"{_CHUNK_BYTES}-byte chunks, which is not reproduced")
    counts = _substring_counts(b"".join(parts), rules, rules.max_sentencepiece_length)
    if len(counts) > 16 * seed_size:
        raise SeedLimitError(f"option seed_sentencepiece_size: {len(counts)} seed candidates exceed 16 x "
                             f"{seed_size}; sentencepiece trims them by score first, which is not reproduced")
    scored = []
    for piece, freq in counts.items():
        if freq < 2:
            continue
        text = piece.decode("utf-8")
        scored.append((-f32(f32(float(freq)) * float(len(text))), -len(piece), piece, text))
    scored.sort()
    seeds.extend((text, -negative_score) for negative_score, _, _, text in scored[:seed_size])
    return _to_log_prob(seeds)
