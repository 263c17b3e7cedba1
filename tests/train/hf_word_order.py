"""The word order under which HF's ``BpeTrainer`` made the vocabulary it made.

HF visits its word map in hash order, and with a prefix or suffix that order gives the
prefixed/suffixed characters their ids. From those ids this finds a word order that gives
them too, so a test can hand it to polytok's trainer and expect HF's result exactly.
"""

from __future__ import annotations

from typing import Any

from polytok.train.bpe_trainer import compute_alphabet, initial_chars
from polytok.train.word_counts import canonical


def hf_word_order(vocab: dict[str, int], counts: dict[str, int],
                  opts: dict[str, Any]) -> list[tuple[str, int]]:
    """A word order that makes HF's ids for prefixed/suffixed pieces: the pieces in HF's id
    order, each first met in a word that meets no later one before it."""
    words = canonical(counts)
    special = len(opts.get("special_tokens", []))
    alphabet = compute_alphabet(words, initial_chars(opts.get("initial_alphabet", [])), opts.get("limit_alphabet"))
    start = special + len(alphabet)
    prefix, suffix = opts.get("continuing_subword_prefix"), opts.get("end_of_word_suffix")
    kept = set(alphabet)

    def pieces_of(word: str) -> list[str]:
        out = []
        chars = [c for c in word]
        for i, ch in enumerate(chars):
            if ch not in kept:
                continue
            p = (prefix + ch) if prefix and i > 0 else ch
            out.append(p + suffix if suffix and i == len(chars) - 1 else p)
        return out

    by_id = sorted(vocab, key=vocab.__getitem__)
    initial_pieces = set()
    for word, _ in words:
        initial_pieces.update(p for p in pieces_of(word) if p not in vocab or vocab[p] >= start)
    hf_new = [p for p in by_id[start:start + len(initial_pieces)]]
    assert set(hf_new) == initial_pieces
    rank = {p: i for i, p in enumerate(hf_new)}
    order: list[tuple[str, int]] = []
    used: set[str] = set()
    seen: set[str] = set()
    k = 0
    while k < len(hf_new):
        for word, count in words:
            if word in used:
                continue
            fresh = []
            for p in pieces_of(word):
                if p in rank and p not in seen and p not in fresh:
                    fresh.append(p)
            if fresh and fresh == hf_new[k:k + len(fresh)]:
                order.append((word, count))
                used.add(word)
                seen.update(fresh)
                k += len(fresh)
                break
        else:
            raise AssertionError(f"no word brings {hf_new[k]!r} next")
    order.extend(w for w in words if w[0] not in used)
    return order
