"""Masks over a chat's ids: which ids the assistant generated, and which come from each role's messages.

Assistant mask (transformers 5.24.0 ``tokenization_utils_base.py`` ``apply_chat_template``,
``return_assistant_tokens_mask``): the template's ``{% generation %}`` blocks give character
spans of the rendered text (`polytok.chat.sandbox`); an id is 1 when its character offsets
overlap a span — spans and offsets are walked once, in order (`overlap_mask`), so a token
that straddles a block's edge is in the mask.

Role masks (polytok's own, for any template): each message's text — its ``content``
(a string, or the ``text`` of its text parts) and its reasoning (``reasoning_content``,
``thinking``, ``reasoning``) — is wrapped in a pair of private-use code points that
occur nowhere in the input or the template (`ContentMarks`). The template is rendered
twice, with and without the marks; the marks must vanish without a trace (the text
rendered from marked input, marks removed, is the text rendered from the input), and
where they stand in the marked render is where each message's characters landed. The
marks first wrap each non-empty text whole; a template that reads the text's edges
(``strip``, an ``if content`` on a white-space text) renders differently then, and the marks
are put inside the leading and trailing white space, around non-empty cores only. A text the
template cuts (``content.split('</think>')[-1]``) keeps one of its marks: the span
then runs from the mark over the longest end (or start) of the text that the rendered
text repeats there. Ids are attributed with the same overlap rule as the assistant
mask: an id whose characters are partly template text and partly a message's text is
in that message's role mask (and an id that overlaps two messages is in both roles').
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from ..errors import ChatTemplateError

__all__ = ["ContentMarks", "GENERATION_TAG", "overlap_mask", "role_masks"]

Span = tuple[int, int]

#: how transformers tells that a template has a generation block (``render_jinja_template``)
GENERATION_TAG = re.compile(r"\{\%-?\s*generation\s*-?\%\}")

# marks are taken from plane 16's private-use code points, skipping any the input holds
_PLANE_16 = (0x100000, 0x10FFFD)
_IN_PLANE_16 = re.compile("[\U00100000-\U0010FFFD]")
_REASONING_FIELDS = ("reasoning_content", "thinking", "reasoning")


def overlap_mask(offsets: Sequence[Span], spans: Sequence[Span]) -> list[int]:
    """1 for each token whose ``(start, end)`` overlaps a span, walking both in order
    (transformers' ``apply_chat_template`` loop for ``assistant_masks``)."""
    mask = [0] * len(offsets)
    at = 0
    for i, (start, end) in enumerate(offsets):
        while at < len(spans) and start >= spans[at][1]:
            at += 1
        if at == len(spans):
            break
        if end > spans[at][0]:
            mask[i] = 1
    return mask


def _merged(spans: list[Span]) -> list[Span]:
    out: list[Span] = []
    for start, end in sorted(s for s in spans if s[1] > s[0]):
        if out and start <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], end))
        else:
            out.append((start, end))
    return out


def _taken(values: Sequence[Any], out: set[str]) -> set[str]:
    """The plane-16 private-use characters in every string of `values` (keys included), into `out`."""
    stack = list(values)
    while stack:
        value = stack.pop()
        if isinstance(value, str):
            out.update(_IN_PLANE_16.findall(value))
        elif isinstance(value, Mapping):
            stack.extend(value.keys())
            stack.extend(value.values())
        elif isinstance(value, (list, tuple)):
            stack.extend(value)
    return out


class ContentMarks:
    """The marks of one conversation's message texts: a (start, end) pair of code points per text."""

    def __init__(self, chat: list[dict[str, Any]], inputs: Sequence[Any]) -> None:
        self.texts: list[str] = []
        self.owners: list[int] = []  # the message index of each text
        for i, message in enumerate(chat):
            for text in _message_texts(message):
                self.texts.append(text)
                self.owners.append(i)
        taken = _taken(list(inputs), set())
        free = (chr(c) for c in range(_PLANE_16[0], _PLANE_16[1] + 1) if chr(c) not in taken)
        self.marks = [next(free, "") for _ in range(2 * len(self.texts))]
        if "" in self.marks:
            raise ChatTemplateError(f"role masks: {len(self.texts)} message texts are more than the "
                                    "private-use code points left to mark them")
        self.index = {m: k for k, m in enumerate(self.marks)}
        self.pattern = re.compile("[" + "".join(map(re.escape, self.marks)) + "]") if self.marks else None

    def mark(self, chat: list[dict[str, Any]], whole: bool) -> list[dict[str, Any]]:
        """A copy of `chat` with each text marked (`whole`: around it; else around its non-empty core)."""
        counter = iter(range(len(self.texts)))

        def wrap(text: str) -> str:
            k = next(counter)
            start, end = self.marks[2 * k], self.marks[2 * k + 1]
            if whole:  # (an empty text has no characters to find, and a marked one would not be empty)
                return start + text + end if text else text
            core = text.strip()
            if not core:
                return text
            lead = text[:len(text) - len(text.lstrip())]
            return lead + start + core + end + text[len(lead) + len(core):]

        return [_map_texts(message, wrap) for message in chat]

    def spans(self, marked: str) -> tuple[str, list[list[Span]]]:
        """`marked` without its marks, and each message's character spans in that text."""
        n_messages = max(self.owners, default=-1) + 1
        spans: list[list[Span]] = [[] for _ in range(n_messages)]
        if self.pattern is None:
            return marked, spans
        parts: list[str] = []
        at = size = 0
        opened: dict[int, int] = {}
        lone_ends: list[tuple[int, int, int]] = []  # (text, position, previous mark's position)
        lone_starts: list[tuple[int, int]] = []
        events: list[int] = []  # positions of the marks in the text without them
        for match in self.pattern.finditer(marked):
            parts.append(marked[at:match.start()])
            size += match.start() - at
            at = match.end()
            k, is_end = divmod(self.index[match.group()], 2)
            if is_end:
                if k in opened:
                    spans[self.owners[k]].append((opened.pop(k), size))
                else:
                    lone_ends.append((k, size, events[-1] if events else 0))
            else:
                if k in opened:
                    lone_starts.append((k, opened[k]))
                opened[k] = size
            events.append(size)
        parts.append(marked[at:])
        clean = "".join(parts)
        lone_starts.extend(opened.items())
        for k, end, floor in lone_ends:  # the text's end survived: its longest tail the output repeats
            text, n = self.texts[k], 0
            while n < len(text) and end - n > floor and clean[end - n - 1] == text[-1 - n]:
                n += 1
            spans[self.owners[k]].append((end - n, end))
        for k, start in lone_starts:  # the text's start survived: its longest head the output repeats
            text, n = self.texts[k], 0
            ceiling = next((p for p in events if p > start), len(clean))
            while n < len(text) and start + n < ceiling and clean[start + n] == text[n]:
                n += 1
            spans[self.owners[k]].append((start, start + n))
        return clean, spans


def _message_texts(message: dict[str, Any]) -> list[str]:
    found: list[str] = []

    def keep(text: str) -> str:
        found.append(text)
        return text

    _map_texts(message, keep)
    return found


def _map_texts(message: dict[str, Any], wrap: Any) -> dict[str, Any]:
    """`message` with `wrap` applied to its content's text and its reasoning, in a fixed order."""
    out = dict(message)
    content = message.get("content")
    if isinstance(content, str):
        out["content"] = wrap(content)
    elif isinstance(content, (list, tuple)):
        parts = []
        for part in content:
            if isinstance(part, Mapping) and isinstance(part.get("text"), str) and part.get("type", "text") == "text":
                part = {**part, "text": wrap(part["text"])}
            parts.append(part)
        out["content"] = parts
    for field in _REASONING_FIELDS:
        if isinstance(message.get(field), str):
            out[field] = wrap(message[field])
    return out


def role_masks(chat: list[dict[str, Any]], spans: list[list[Span]], offsets: Sequence[Span]) -> dict[str, list[int]]:
    """Per role (in the order roles first speak), 1 for each token that overlaps one of its messages' spans."""
    by_role: dict[str, list[Span]] = {}
    for message, found in zip(chat, spans):
        by_role.setdefault(str(message.get("role")), []).extend(found)
    return {role: overlap_mask(offsets, _merged(found)) for role, found in by_role.items()}
