"""Metaspace decoder: the replacement char (``▁``) back to spaces.

Stage: decoder. JSON: ``{"type": "Metaspace", "replacement": char,
"prepend_scheme": "always"|"first"|"never", "split": bool}`` with the legacy
keys ``add_prefix_space`` (false forces ``never`` and must agree with an
explicit ``prepend_scheme``) and ``str_rep`` (ignored).

Reproduces HF tokenizers 0.23.3 ``tokenizers/src/pre_tokenizers/metaspace.rs``
(``impl Decoder for Metaspace``, ``decode_chain``; parsing as in its
``Deserialize`` impl). Every replacement char becomes ``' '``, except in the
first token (index 0) when ``prepend_scheme`` is not ``never``:

- ``always`` / ``first``: every replacement char of token 0 is deleted (not
  only the leading one), so ``["▁▁Hello", "a▁"]`` decodes to ``"Helloa "``;
- ``never``: token 0 is treated like the others.
"""

from __future__ import annotations

from typing import Any

from .._config import join, required, single_char
from ..errors import FormatError

PREPEND_SCHEMES = ("always", "first", "never")


class Metaspace:
    """Decoder half of Metaspace; `split` is kept for round-tripping only."""

    def __init__(self, replacement: str = "\u2581", prepend_scheme: str = "always", split: bool = True) -> None:
        if prepend_scheme not in PREPEND_SCHEMES:
            raise FormatError(f"prepend_scheme must be one of {PREPEND_SCHEMES}, not {prepend_scheme!r}",
                              key="prepend_scheme")
        self.replacement = replacement
        self.prepend_scheme = prepend_scheme
        self.split = split
        self._strip_first = prepend_scheme != "never"

    @classmethod
    def from_config(cls, d: dict[str, Any], path: str) -> Metaspace:
        replacement = single_char(d, "replacement", path)
        # present keys may not be null unless HF reads them as an Option
        scheme = required(d, "prepend_scheme", str, path) if "prepend_scheme" in d else "always"
        if scheme not in PREPEND_SCHEMES:
            raise FormatError(f"unknown prepend_scheme {scheme!r}, expected one of {PREPEND_SCHEMES}",
                              key=join(path, "prepend_scheme"))
        split = required(d, "split", (bool, type(None)), path) if "split" in d else None
        legacy = required(d, "add_prefix_space", (bool, type(None)), path) if "add_prefix_space" in d else None
        if "str_rep" in d:
            required(d, "str_rep", (str, type(None)), path)
        if legacy is False and scheme != "never":
            raise FormatError("add_prefix_space does not match declared prepend_scheme",
                              key=join(path, "add_prefix_space"))
        return cls(replacement, scheme, True if split is None else split)

    def decode_chain(self, tokens: list[str]) -> list[str]:
        rep = self.replacement
        out = [t.replace(rep, " ") for t in tokens]
        if out and self._strip_first:
            out[0] = tokens[0].replace(rep, "")
        return out
