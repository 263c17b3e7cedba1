"""Parity tools: adapters to the reference engines, `compare`, the known reasons for divergences.

    report = polytok.compare("tokenizer.json", "tokenizer.model", texts, explain=True)
    print(report.render())

The engines are optional: each is imported when a side asks for it, and a missing
one raises a `polytok.PolytokError` that names the package.
"""

from .compare import CompareReport as CompareReport
from .compare import TextResult as TextResult
from .compare import as_side as as_side
from .compare import compare as compare
from .engines import ENGINES as ENGINES
from .engines import PolytokSide as PolytokSide
from .engines import Side as Side
from .engines import reference_side as reference_side
from .reasons import REASONS as REASONS

__all__ = ["compare", "CompareReport", "TextResult", "as_side", "Side", "PolytokSide", "reference_side",
           "ENGINES", "REASONS"]
