"""``double-bos``: the chat template writes the BOS the tokenizer also adds.

The first user turn is rendered with the folder's chat template (`polytok.chat`, as
transformers 5.24 ``apply_chat_template`` renders it) and the rendered text encoded as
a caller encodes a prompt, with the tokenizer's special tokens added (``add_special=True``:
transformers' ``tokenizer(text)``, llama.cpp's ``llama_tokenize(add_special=true)``). When
the rendered text itself starts with the first id the tokenizer puts before any text (its
BOS, or the ``[gMASK]`` of ChatGLM's ``[gMASK]sop``), the model sees it twice: the template
already wrote it. llama.cpp logs a warning for the same case, a BOS added before a prompt
whose second id is a BOS too (llama-cpp-python 0.3.36 sdist, ``src/llama-vocab.cpp``,
``llama_vocab::impl::tokenize``). ``apply_chat_template(tokenize=True)`` adds none (transformers tokenizes the rendered
text with ``add_special_tokens=False``), so that path, or ``add_special=False`` on the
rendered text, gives one.
"""

from __future__ import annotations

from ..errors import PolytokError
from ..tokenizer import Tokenizer
from .conversation import CONVERSATION
from .finding import Finding

__all__ = ["double_bos", "added_prefix"]


def added_prefix(tok: Tokenizer) -> list[int]:
    """The ids `tok` puts before a text when it adds its special tokens ([] when none)."""
    plain = tok.encode("Hello", add_special=False)
    full = tok.encode("Hello", add_special=True)
    for start in range(len(full) - len(plain) + 1):
        if full[start:start + len(plain)] == plain:
            return full[:start]
    return []


def double_bos(tok: Tokenizer, files: tuple[str, ...]) -> list[Finding]:
    """The finding for `tok`'s default chat template, if it writes the prefix `tok` adds."""
    prefix = added_prefix(tok)
    if not prefix or not tok.facts.chat.templates:
        return []
    try:
        text = tok.apply_chat_template(list(CONVERSATION[:1]), add_generation_prompt=True)
    except PolytokError:
        return []  # the template check reports a template that fails
    if tok.encode(text, add_special=False)[:1] != prefix[:1]:
        return []
    ids = tok.encode(text, add_special=True)
    n = len(prefix) + 1
    shown = repr(tok.id_to_token(prefix[0]))
    message = (f"the chat template writes {shown} and the tokenizer adds it too: encoding the rendered chat with "
               f"special tokens added starts {ids[:n]}; encode the rendered text with add_special=False "
               "(or apply_chat_template(tokenize=True))")
    details = {"prefix": prefix, "prefix_tokens": [tok.id_to_token(i) for i in prefix], "ids": ids[:n + 4],
               "rendered_start": text[:80]}
    return [Finding("double-bos", "error", message, files, details)]
