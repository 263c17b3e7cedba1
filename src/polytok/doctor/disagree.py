"""``files-disagree``: two tokenizer files of one folder that give different ids.

polytok reads each format exactly as its engine does (tokenizer.json as HF tokenizers,
.model as sentencepiece, tekken.json as mistral-common, tiktoken files as tiktoken, GGUF
as llama.cpp), so two of polytok's readers that disagree on a text are two engines that
disagree on it. Every pair is run with `polytok.parity.compare.compare` over the edge texts
`polytok.convert.check` reads every converted GGUF back on (`polytok.convert.texts`), with
nothing added and markers read as text (``add_special=False, special="text"``): the
content pipeline only, since each engine's own defaults for added tokens differ by design
(sentencepiece never adds a BOS; HF's ``<s>`` is parsed by default), and whole: a
``tokenizer.json``'s truncation and padding are call settings, left out as ``count`` leaves
them out (`polytok.truncation.whole_documents`). This is the class of
a ``tokenizer.json`` whose pre-tokenizer regex differs from the ``tekken.json`` or
``tokenizer.model`` it was converted from. The finding names the first differing text,
what differs there, and compare's reasons for every diverging text.
"""

from __future__ import annotations

from collections import Counter
from itertools import combinations
from pathlib import Path

from ..convert.texts import CHECK_TEXTS
from ..parity.compare import compare
from ..tokenizer import Tokenizer
from ..truncation import whole_documents
from .finding import Finding

__all__ = ["files_disagree", "TEXTS"]

TEXTS: tuple[tuple[str, str], ...] = CHECK_TEXTS


def files_disagree(files: dict[Path, Tokenizer], texts: tuple[tuple[str, str], ...] = TEXTS) -> list[Finding]:
    """One finding per pair of `files` that encode some of `texts` differently."""
    found = []
    for (path_a, tok_a), (path_b, tok_b) in combinations(files.items(), 2):
        if tok_a is tok_b:
            continue
        report = compare(whole_documents(tok_a), whole_documents(tok_b), texts, add_special=False, special="text")
        diverging = report.diverging
        if not diverging:
            continue
        first = diverging[0]
        reasons = Counter(name for r in diverging for name in r.reasons)
        where = f" ({first.kind})" if first.kind else ""
        said = f"; reasons: {', '.join(reasons)}" if reasons else "; no known reason"
        message = (f"{path_a.name} and {path_b.name} give different ids on {len(diverging)} of {len(texts)} "
                   f"texts, first {first.name} {first.text!r}{where}{said}")
        details = {"texts": len(texts), "diverging": len(diverging), "mode": report.mode,
                   "first": {"name": first.name, "text": first.text, "kind": first.kind, "reasons": first.reasons,
                             "error": first.error,
                             "a": [[i, p] for i, p, hit in first.window_a if hit],
                             "b": [[i, p] for i, p, hit in first.window_b if hit]},
                   "diverging_texts": [r.name for r in diverging], "reasons": dict(reasons)}
        found.append(Finding("files-disagree", "error", message, (str(path_a), str(path_b)), details))
    return found
