"""polytok: load the tokenizer of any LLM, in whichever format it ships, and tokenize
exactly as that format's reference engine does.

    >>> import polytok
    >>> tok = polytok.load("gpt2")
    >>> tok.encode("Hello world")
    [15496, 995]
"""

from typing import Any

from . import kernels as _kernel_path
from . import train as _train_package  # noqa: F401  (first, so that polytok.train is the function below)
from .chat.state_tokens import insert_state_tokens as insert_state_tokens
from .encoding import Encoding as Encoding
from .errors import ChatTemplateError as ChatTemplateError
from .errors import DecodeError as DecodeError
from .errors import EncodeError as EncodeError
from .errors import FormatError as FormatError
from .errors import PolytokError as PolytokError
from .errors import StateTokenError as StateTokenError
from .facts import ChatFacts as ChatFacts
from .facts import FormatFacts as FormatFacts
from .facts import NamedToken as NamedToken
from .formats import load as load
from .parity import compare as compare
from .parity.explain import explain as explain
from .special import AddedToken as AddedToken
from .special import SpecialTokens as SpecialTokens
from .tokenizer import Tokenizer as Tokenizer
from .tokenizer.special_controls import AllowedSpecial as AllowedSpecial
from .truncation import Padding as Padding
from .truncation import Truncation as Truncation

__version__ = "0.1.0"


def train(texts: Any, pipeline: Any, trainer: Any = None, **options: Any) -> Tokenizer:
    """A tokenizer trained on `texts` through `pipeline` (a ``tokenizer.json``-shaped dict or
    a loaded tokenizer) with `trainer`: `polytok.train.pipeline.train`."""
    from .train.pipeline import train as run

    return run(texts, pipeline, trainer, **options)


def _load_kernels() -> None:
    """Load the compiled core with the package, as the reference engines' native libraries load
    with theirs: a first load or encode then finds its kernels ready (none on the pure path;
    one that is not built is reported by `kernels.kernel` on first use)."""
    if not _kernel_path.forced_pure():
        for name in _kernel_path.built():
            _kernel_path.compiled_module(name)


_load_kernels()

__all__ = [
    "load", "Tokenizer", "Encoding", "SpecialTokens", "AllowedSpecial", "AddedToken", "Truncation", "Padding",
    "PolytokError", "FormatError", "EncodeError", "DecodeError",
    "insert_state_tokens", "StateTokenError", "ChatTemplateError", "explain", "compare",
    "FormatFacts", "ChatFacts", "NamedToken", "train",
]
