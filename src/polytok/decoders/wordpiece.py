"""WordPiece decoder: continuation prefixes removed, words joined by spaces.

Stage: decoder. JSON: ``{"type": "WordPiece", "prefix": str, "cleanup": bool}``
(both required).

Reproduces HF tokenizers 0.23.3 ``tokenizers/src/decoders/wordpiece.rs``
(``WordPiece::decode_chain`` and the free function ``cleanup``, which the CTC
decoder shares). Every token after the first loses `prefix` if it starts
with it, else gains a leading space. With `cleanup`, each token (the first
too) then goes through the fixed list of English detokenisation replacements,
applied one after the other, per token.
"""

from __future__ import annotations

from typing import Any

from .._config import required

# order matters: each replacement runs on the output of the previous one
_CLEANUP = (
    (" .", "."), (" ?", "?"), (" !", "!"), (" ,", ","), (" ' ", "'"), (" n't", "n't"),
    (" 'm", "'m"), (" do not", " don't"), (" 's", "'s"), (" 've", "'ve"), (" 're", "'re"),
)


def cleanup(text: str) -> str:
    """HF ``wordpiece::cleanup``: drop spaces before punctuation and English clitics."""
    if " " not in text:
        return text
    for old, new in _CLEANUP:
        text = text.replace(old, new)
    return text


class WordPiece:
    def __init__(self, prefix: str = "##", cleanup: bool = True) -> None:
        self.prefix = prefix
        self.cleanup = cleanup

    @classmethod
    def from_config(cls, d: dict[str, Any], path: str) -> WordPiece:
        return cls(required(d, "prefix", str, path), required(d, "cleanup", bool, path))

    def decode_chain(self, tokens: list[str]) -> list[str]:
        prefix, n = self.prefix, len(self.prefix)
        out = tokens[:1]
        for token in tokens[1:]:
            out.append(token[n:] if token.startswith(prefix) else " " + token)
        if self.cleanup:
            out = [cleanup(t) for t in out]
        return out
