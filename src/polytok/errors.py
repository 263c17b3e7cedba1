"""The errors polytok raises on purpose.

Every error polytok raises deliberately derives from `PolytokError`. A file that
cannot be read raises `FormatError`, which carries the file, the key path inside
it (e.g. ``pre_tokenizer.pretokenizers[1].type``), and where it applies the byte
offset or line, both as attributes and in the message.
"""

from __future__ import annotations

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

    def with_file(self, file: str) -> "FormatError":
        """The same error, naming `file` (readers add it when they know it)."""
        if self.file:
            return self
        return FormatError(self.reason, file=file, key=self.key, offset=self.offset, line=self.line)


class EncodeError(PolytokError, ValueError):
    """Text that the tokenizer cannot encode, where the reference engine raises too."""


def not_utf8(exc: UnicodeEncodeError) -> EncodeError:
    """A lone surrogate in the text: UTF-8 cannot hold it (tokenizers, llama.cpp and rwkv refuse it too)."""
    char = exc.object[exc.start] if isinstance(exc.object, str) else "?"
    return EncodeError(f"the text holds a lone surrogate U+{ord(char):04X} at character {exc.start}, which UTF-8 "
                       "cannot encode")


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
