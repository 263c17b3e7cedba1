"""`Tokenizer`: runs the five stages, for every format (`tokenizer`), its post-processing stage
on ids (`post_process`) and its offsets path (`offsets`)."""

from .offsets import AlignedSplit
from .tokenizer import SpecialSplit, Tokenizer

__all__ = ["AlignedSplit", "SpecialSplit", "Tokenizer"]
