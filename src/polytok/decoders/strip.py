"""Strip decoder: remove a fixed number of one char from each token's ends.

Stage: decoder. JSON: ``{"type": "Strip", "content": char, "start": int,
"stop": int}`` (all required; `start`/`stop` are non-negative).

Reproduces HF tokenizers 0.23.3 ``tokenizers/src/decoders/strip.rs``
(``Strip::decode_chain``): per token, up to `start` leading and up to `stop`
trailing `content` chars are cut, each side stopping at the first other char.
HF panics in two cases, where polytok raises `DecodeError`:

- the token consists only of `content` chars (or is empty) and `stop` is
  larger than its length (the trailing scan indexes before the start);
- the two cuts cross (e.g. token ``" "`` with start = stop = 1).
"""

from __future__ import annotations

from typing import Any

from .._config import join, required, single_char
from ..errors import DecodeError, FormatError


def _count(d: dict[str, Any], key: str, path: str) -> int:
    value: int = required(d, key, int, path)
    if value < 0:
        raise FormatError(f"expected a non-negative integer, found {value}", key=join(path, key))
    return value


class Strip:
    def __init__(self, content: str = " ", start: int = 0, stop: int = 0) -> None:
        self.content = content
        self.start = start
        self.stop = stop

    @classmethod
    def from_config(cls, d: dict[str, Any], path: str) -> Strip:
        return cls(single_char(d, "content", path), _count(d, "start", path), _count(d, "stop", path))

    def decode_chain(self, tokens: list[str]) -> list[str]:
        return [self._strip(t) for t in tokens]

    def _strip(self, token: str) -> str:
        c, n = self.content, len(token)
        lead = n - len(token.lstrip(c)) if self.start else 0
        trail = n - len(token.rstrip(c)) if self.stop else 0
        if self.stop > n and trail == n:
            raise DecodeError(f"Strip decoder: cannot strip {self.stop} trailing {c!r} from {token!r} "
                              "(the reference panics: index out of bounds)")
        begin = min(self.start, lead)
        end = n - min(self.stop, trail)
        if begin > end:
            raise DecodeError(f"Strip decoder: start cut {begin} passes stop cut {end} in {token!r} "
                              "(the reference panics: slice index order)")
        return token[begin:end]
