"""Where the BPE model may cut a long word so that no merge crosses the cut (see `polytok.models.bpe`'s notes).

polytok's own speed-up (no reference engine cuts words): the model merges each
chunk on its own and caches it.

`cut_mark` reads every token once, on the model's first long word; the `bpe_merge`
kernel's ``cut_mark`` does it in compiled code (gemma3's 262k tokens: two Python
passes over them cost tens of milliseconds on a first call).
"""

from __future__ import annotations

from collections import Counter

from ..kernels import kernel


def cut_mark(vocab: dict[str, int]) -> tuple[str, frozenset[str]]:
    """The most common first character of multi-character tokens, and the characters seen before it in a token.

    Returns ``("", ...)`` when that character is not a token by itself (no cut is then made).
    """
    compiled = kernel("bpe_merge")
    if compiled is not None:
        found: tuple[str, frozenset[str]] = compiled.cut_mark(vocab)
        return found
    firsts = Counter(token[0] for token in vocab if len(token) > 1)
    if not firsts:
        return "", frozenset()
    mark = firsts.most_common(1)[0][0]
    if mark not in vocab:
        return "", frozenset()
    unsafe = set()
    for token in vocab:
        at = token.find(mark, 1)
        while at > 0:
            unsafe.add(token[at - 1])
            at = token.find(mark, at + 1)
    return mark, frozenset(unsafe)
