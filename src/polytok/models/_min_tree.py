"""The lowest rank over a row of positions, leftmost among equals, kept as ranks change.

The queue of the long-word merge loops.

polytok's own structure (no reference engine has it); `_bpe_word.merge_tree` and
`spm.SPM`'s merge loop keep one rank per live pair position in it, where HF
tokenizers (``Word::merge_all``), llama.cpp (``llm_tokenizer_spm_session``) and
sentencepiece (``bpe_model.cc``) push every new pair onto a heap and skip stale
entries when they pop. When a stale entry can never be taken (the loops' notes
say when), both give the same merges in the same order: the heap pops the
lowest (rank, position) among the live pairs, and so does `MinTree.lowest`.

Memory: an ``array("i")`` per level, 4 bytes a position and a fifteenth more
above, against a heap entry of 40-200 bytes (an int or a tuple, and its slot)
per pair. Time: `lowest` walks down one ``array.index`` per level, `put` walks
up only while the lowest of a group changes; ``FAN`` 16 measured fastest (8 as
fast, 32 and 64 slower: a group's ``min`` is a Python-level loop over it).
"""

from __future__ import annotations

from array import array
from itertools import islice, repeat

FAN = 16  # entries per group: each level holds the lowest of every FAN entries below it


class MinTree:
    """Ranks by position (`none` for no rank), with the lowest one and its leftmost position at hand."""

    __slots__ = ("_levels", "_top", "_lower", "none")

    def __init__(self, ranks: array[int], none: int) -> None:
        self.none = none
        levels = [ranks]
        while len(levels[-1]) > FAN:
            below = levels[-1]
            below.extend(repeat(none, -len(below) % FAN))
            levels.append(array("i", map(min, *(below[i::FAN] for i in range(FAN)))))
        self._levels = levels
        self._top = levels[-1]
        self._lower = levels[-2::-1]

    def lowest(self) -> tuple[int, int]:
        """The lowest rank and its leftmost position; ``(none, -1)`` when every position has none."""
        best = min(self._top, default=self.none)
        if best == self.none:
            return best, -1
        at = self._top.index(best)
        for level in self._lower:
            at = level.index(best, at * FAN, at * FAN + FAN)
        return best, at

    def put(self, at: int, rank: int) -> None:
        """Set position `at`'s rank, and the entries above it that change."""
        below = self._levels[0]
        old = below[at]
        below[at] = rank
        for above in islice(self._levels, 1, None):
            if rank == old:
                return
            group = at // FAN
            low = above[group]
            if rank < low:
                above[group] = rank
            elif old == low:  # the group's lowest went up: its new lowest may be elsewhere in it
                rank = min(below[group * FAN:group * FAN + FAN])
                above[group] = rank
            else:
                return
            below, at, old = above, group, low
