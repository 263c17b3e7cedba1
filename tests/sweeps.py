"""Parameter sweeps with a representative part in the default run and the rest under ``-m slow``.

The default test run stays short (README); a sweep over every fixture or variant keeps one
case of each rule and shape there, and ``python -m pytest -m slow`` runs the rest.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from typing import Any

import pytest

#: llama.cpp vocabularies that stand for all 19 in a kernel's default sweep: GPT-2's and Llama 3's BPE,
#: Llama's SentencePiece, BERT's WordPiece, Phi-3's special tokens with rstrip
QUICK_GGUF = ("gpt-2", "llama-bpe", "llama-spm", "bert-bge", "phi-3")


def sweep(values: Iterable[Any], default: Collection[Any]) -> list[Any]:
    """`values` as parametrize arguments: those in `default` as they are, the others marked slow
    (a tuple is one case of several argument names).

    Every value named in `default` must be one of `values`, so a renamed case cannot leave the
    default run silently."""
    values = list(values)
    missing = [v for v in default if v not in values]
    assert not missing, f"default cases not in the sweep: {missing}"
    return [v if v in default else pytest.param(*(v if isinstance(v, tuple) else (v,)), marks=pytest.mark.slow)
            for v in values]
