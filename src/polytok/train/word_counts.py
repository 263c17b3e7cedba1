"""Word counts: how often each pre-tokenized word occurs in a corpus.

Every trainer starts from this table, as HF's trainers start from the map their
``feed`` builds (tokenizers/src/models/*/trainer.rs). A table is a plain
``dict[str, int]``; tables from separate workers add up with `merge_counts`, and
`canonical` fixes one order for them, so a table's content, not the order its texts
were read in, decides what a trainer makes of it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable

#: turns one text (a line, a document) into the words a trainer counts
WordSplitter = Callable[[str], list[str]]


def count_words(texts: Iterable[str], words_of: WordSplitter) -> dict[str, int]:
    """The word table of `texts`: each text split by `words_of`, each word counted."""
    counts: Counter[str] = Counter()
    update = counts.update
    for text in texts:
        update(words_of(text))
    return dict(counts)


def merge_counts(tables: Iterable[dict[str, int]]) -> dict[str, int]:
    """The sum of several word tables."""
    total: Counter[str] = Counter()
    for table in tables:
        total.update(table)
    return dict(total)


def canonical(counts: dict[str, int]) -> list[tuple[str, int]]:
    """`counts` as ``(word, count)`` pairs in code-point order of the words.

    HF iterates its word map in hash order, which changes from run to run; that order
    decides the ids of the pieces the trainer makes before merging (prefixed and
    suffixed characters). Sorted words are one order HF can take, and the same for
    every run and every number of workers.
    """
    return sorted(counts.items())
