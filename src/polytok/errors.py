"""The errors polytok raises on purpose.

Every error polytok raises deliberately derives from `PolytokError`. A file that
cannot be read raises `FormatError`, which carries the file, the key path inside
it (e.g. ``pre_tokenizer.pretokenizers[1].type``), and where it applies the byte
offset or line, both as attributes and in the message.
"""

from __future__ import annotations

import re

__all__ = ["PolytokError", "FormatError", "EncodeError", "DecodeError", "StateTokenError", "ChatTemplateError"]


class PolytokError(Exception):
    """Base of every error polytok raises on purpose."""


class FormatError(PolytokError, ValueError):
    """A tokenizer file that cannot be read, with the place where it goes wrong."""

    def __init__(
        self,
        message: str,
        *,
        file: str | None = None,
        key: str | None = None,
        offset: int | None = None,
        line: int | None = None,
    ) -> None:
        self.reason = message
        self.file = file
        self.key = key or None  # the document root ("") is no key
        self.offset = offset
        self.line = line
        super().__init__(self._compose())

    def _compose(self) -> str:
        where = []
        if self.file:
            where.append(str(self.file))
        if self.key:
            where.append(f"key {self.key}")
        if self.line is not None:
            where.append(f"line {self.line}")
        if self.offset is not None:
            where.append(f"byte offset {self.offset}")
        return f"{': '.join(where)}: {self.reason}" if where else self.reason

    def with_file(self, file: str) -> FormatError:
        """The same error, naming `file` (readers add it when they know it)."""
        if self.file:
            return self
        return FormatError(self.reason, file=file, key=self.key, offset=self.offset, line=self.line)


class EncodeError(PolytokError, ValueError):
    """Text that the tokenizer cannot encode, where the reference engine raises too."""


class EmptyMatchError(EncodeError):
    """An empty match of a split pattern with no token to give it (tiktoken panics there);
    ``position`` is the character offset of the match in the input (in the piece, where a
    pre-tokenizer raises it; `Tokenizer` then names its place in the input)."""

    def __init__(self, position: int) -> None:
        self.position = position
        super().__init__(f"the split pattern matches the empty string at character {position}, and the "
                         "vocabulary has no empty token to encode it as (a rank file's line '= N'; "
                         "tiktoken panics here)")


class LoneSurrogateError(EncodeError):
    """A lone surrogate in the text: UTF-8 cannot hold it (tokenizers, llama.cpp and rwkv refuse it too)."""


def not_utf8(exc: UnicodeEncodeError) -> EncodeError:
    """The error for a lone surrogate met inside one piece of the text; `Tokenizer` calls
    `lone_surrogate_in` to name its place in the whole input."""
    char = exc.object[exc.start] if isinstance(exc.object, str) else "?"
    return LoneSurrogateError(f"the text holds a lone surrogate U+{ord(char):04X}, which UTF-8 cannot encode")


def lone_surrogate_in(inputs: list[object]) -> EncodeError | None:
    """The error naming the first lone surrogate of the inputs (strings or lists of words), or None."""
    for which, value in enumerate(inputs):
        words = [value] if isinstance(value, str) else value if isinstance(value, list) else []
        offset = 0
        for word in words:
            found = _SURROGATE.search(word) if isinstance(word, str) else None
            if found is not None:
                where = f"character {offset + found.start()}" + (" of the pair" if which else "")
                return LoneSurrogateError(f"the text holds a lone surrogate U+{ord(found.group()):04X} at {where}, "
                                          "which UTF-8 cannot encode")
            offset += len(word) if isinstance(word, str) else 0
    return None


_SURROGATE = re.compile("[\ud800-\udfff]")


class DecodeError(PolytokError, ValueError):
    """Ids that cannot be decoded."""


class StateTokenError(PolytokError, ValueError):
    """Ids that break the per-turn state-token rules; ``position`` is the index in the input."""

    def __init__(self, message: str, *, position: int | None = None) -> None:
        self.reason = message
        self.position = position
        super().__init__(message if position is None else f"position {position}: {message}")


class ChatTemplateError(PolytokError, ValueError):
    """A chat template that is missing, cannot be parsed, or raised while rendering; ``line`` where known."""

    def __init__(self, message: str, *, template: str | None = None, line: int | None = None) -> None:
        self.reason = message
        self.template = template
        self.line = line
        where = [w for w in (f"template {template}" if template else "", f"line {line}" if line else "") if w]
        super().__init__(f"{', '.join(where)}: {message}" if where else message)
