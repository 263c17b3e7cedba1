"""HF ``UnigramTrainer``'s seed pieces.

Reproduces tokenizers 0.23.3 src/models/unigram/trainer.rs
``make_seed_sentence_pieces``:

* every character of the words (NUL left out), counted by word count, ordered by
  (count, character) descending;
* then the branching substrings of the words written once each (not repeated by
  count) and each ended by NUL: esaxx's suffix-tree internal nodes, that is the
  LCP intervals of the suffix array over characters; a substring of 2 ..
  ``max_piece_length`` characters without NUL scores (occurrences × characters)
  and they are taken by (score, characters) descending until the seeds number
  ``seed_size``;
* all scores become log probabilities (float64, summed in order).

The suffix order only needs the first ``max_piece_length + 1`` characters of each
suffix: intervals deeper than that are never kept, and the shallower ones are the
same under the truncated order.
"""

from __future__ import annotations

import math

__all__ = ["seed_pieces", "branching_substrings"]

_BOUNDARY = "\0"


def branching_substrings(text: str, max_chars: int) -> list[tuple[str, int]]:
    """Every substring of `text` of 1 .. `max_chars` characters that occurs at least twice
    and is followed by two different characters (or the end), with its occurrences."""
    depth = max_chars + 1
    size = len(text)
    keys = [text[i:i + depth] for i in range(size)]
    order = sorted(range(size), key=keys.__getitem__)
    found: list[tuple[str, int]] = []
    stack: list[tuple[int, int]] = [(0, 0)]  # (depth, left)
    previous = ""
    for i in range(1, size + 1):
        if i < size:
            current = keys[order[i]]
            previous = keys[order[i - 1]]
            h = 0
            limit = min(len(current), len(previous))
            while h < limit and current[h] == previous[h]:
                h += 1
        else:
            h = 0
        left = i - 1
        while stack[-1][0] > h:
            d, left = stack.pop()
            if d <= max_chars:
                start = order[left]
                found.append((text[start:start + d], i - left))
        if stack[-1][0] < h:
            stack.append((h, left))
    return found


def _to_log_prob(pieces: list[tuple[str, float]]) -> list[tuple[str, float]]:
    if not pieces:
        return []
    total = 0.0
    for _, score in pieces:
        total += score
    logsum = math.log(total)
    return [(piece, math.log(score) - logsum) for piece, score in pieces]


def seed_pieces(sentences: list[tuple[str, int]], max_piece_length: int, seed_size: int) -> list[tuple[str, float]]:
    """The seeds of `sentences` (word, count), as log probabilities."""
    chars: dict[str, int] = {}
    parts: list[str] = []
    for word, count in sentences:
        if not word:
            continue
        parts.append(word)
        parts.append(_BOUNDARY)
        for char in word:
            if char != _BOUNDARY:
                chars[char] = chars.get(char, 0) + count
    flat = "".join(parts)
    scored = [(count * len(piece), piece) for piece, count in branching_substrings(flat, max_piece_length)
              if len(piece) > 1 and _BOUNDARY not in piece]
    scored.sort(reverse=True)
    seeds: list[tuple[str, float]] = [(char, float(count)) for count, char in
                                      sorted(((n, c) for c, n in chars.items()), reverse=True)]
    for score, piece in scored:
        seeds.append((piece, float(score)))
        if len(seeds) >= seed_size:
            break
    return _to_log_prob(seeds)
