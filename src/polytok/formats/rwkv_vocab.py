"""Reader for the RWKV "world" vocabulary (``rwkv_vocab_v20230424.txt``), as rwkv's ``TRIE_TOKENIZER`` reads it.

Reference: rwkv 0.8.32, ``rwkv/rwkv_tokenizer.py`` (``TRIE_TOKENIZER.__init__``,
``encodeBytes``, ``decodeBytes``, ``decode``; ``TRIE.find_longest``).

File: UTF-8 text, read with universal newlines (LF, CRLF or CR end a line);
each line is ``ID LITERAL LENGTH``: the id, then (between the first and the
last space) a Python ``str`` or ``bytes`` literal, then the token's length in
UTF-8 bytes. The reference ``eval``s the literal; polytok parses it
(`parse_literal`: quotes, the ``b``/``u``/``r`` prefixes and Python's escapes)
and never evaluates anything. A line that is not of this form (an empty
line too), a literal that is not a plain Python string, or a length that differs raises
`FormatError` naming the line. A str literal stands for its UTF-8 bytes.
Ids need not be contiguous (the world file starts at 1); an id listed twice
keeps its last token, and bytes listed twice encode as the highest of those
ids (the reference: the last listed; the same for a file sorted by id, which
``TRIE_TOKENIZER`` requires).

Encoding is `polytok.models.rwkv.RWKV` with ``missing_byte="error"``: the
greedy longest byte match of ``find_longest`` over the whole text (no
normalizer, pre-tokenizer or special tokens: ``encode(t)`` is
``TRIE_TOKENIZER.encode(t)``, whatever ``add_special`` and ``special`` say).
A token's piece (``id_to_token``/``token_to_id``) is its bytes written as
llama.cpp's GGUF converter writes them for this very file
(``convert_hf_to_gguf.py``, ``_set_vocab_rwkv_world``: ``repr(bytes)[2:-1]``,
e.g. ``"hello"``, ``"\\n\\n"``, ``"\\xe4\\xbd\\xa0"``), which the model un-escapes
back into the same bytes.

Decoding (`polytok.decoders.rwkv_detokenizer`) diverges on purpose:
``TRIE_TOKENIZER.decode`` returns the single string ``"\\ufffd"`` for the
whole output when the joined bytes are not valid UTF-8; polytok replaces
each invalid sequence with U+FFFD and keeps the rest (``bytes.decode("utf-8",
"replace")`` of ``decodeBytes``), like the other
engines, so `Tokenizer.decode_stream` works (it holds text back while it
ends in U+FFFD). An id without a token (e.g. 0) raises `DecodeError`: the
reference's ``decodeBytes`` raises ``KeyError``, which ``decode`` turns into
``"\ufffd"`` for the whole output. An empty file raises `FormatError`; the reference builds
a tokenizer that cannot encode anything.
"""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path
from typing import Any

from ..decoders.rwkv_detokenizer import RWKVDetokenizer
from ..errors import FormatError
from ..facts import FormatFacts
from ..models.rwkv import RWKV
from ..special import SpecialTokens
from ..tokenizer import Tokenizer

__all__ = ["read_rwkv_vocab", "parse_literal", "escape_bytes"]

_NEWLINES = re.compile(r"\r\n|\r|\n")
_PREFIX = re.compile(r"(?i)(b|u|r|br|rb)?(['\"])")
_SIMPLE = {"\\": "\\", "'": "'", '"': '"', "a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t",
           "v": "\v", "\n": ""}
_OCTAL = re.compile(r"[0-7]{1,3}")
_HEX_DIGITS = frozenset("0123456789abcdefABCDEF")
_MAX_ID = 1 << 24  # ids index a list; a larger id is refused rather than allocated


def parse_literal(source: str) -> bytes:
    """The bytes of one Python str/bytes literal (a str stands for its UTF-8); ValueError if it is not one."""
    source = source.strip(" \t\f")
    m = _PREFIX.match(source)
    if m is None:
        raise ValueError("expected a quoted Python string")
    prefix, quote = (m.group(1) or "").lower(), m.group(2)
    body = source[m.end():]
    if body.startswith(quote * 2) or len(body) < 1 or not body.endswith(quote):
        raise ValueError("expected one quoted string (triple quotes are not read)")
    body = body[:-1]
    is_bytes, raw = "b" in prefix, "r" in prefix
    if is_bytes and not body.isascii():
        raise ValueError("a bytes literal holds only ASCII characters")
    text = _unescape(body, quote, raw, is_bytes)
    if is_bytes:
        return text.encode("latin-1")
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError("a lone surrogate has no UTF-8 form") from None


def _unescape(body: str, quote: str, raw: bool, is_bytes: bool) -> str:
    out: list[str] = []
    i, n = 0, len(body)
    while i < n:
        c = body[i]
        if c == quote:
            raise ValueError(f"unescaped {quote} inside the string")
        if c != "\\":
            out.append(c)
            i += 1
            continue
        if i + 1 >= n:
            raise ValueError("the string ends in a backslash")
        if raw:
            out.append(body[i:i + 2])
            i += 2
            continue
        text, i = _escape_at(body, i + 1, is_bytes)
        out.append(text)
    return "".join(out)


def _escape_at(body: str, i: int, is_bytes: bool) -> tuple[str, int]:
    """The text of the escape whose letter is at `i`, and where the rest starts."""
    c = body[i]
    if c in _SIMPLE:
        return _SIMPLE[c], i + 1
    octal = _OCTAL.match(body, i)
    if octal is not None:
        value = int(octal.group(), 8)
        if is_bytes and value > 0xFF:
            raise ValueError(f"octal escape \\{octal.group()} is above \\377 in a bytes literal")
        return chr(value), octal.end()
    width = {"x": 2, "u": 4, "U": 8}.get(c) if not is_bytes or c == "x" else None
    if width is not None:
        digits = body[i + 1:i + 1 + width]
        if len(digits) != width or not set(digits) <= _HEX_DIGITS:
            raise ValueError(f"truncated \\{c} escape")
        value = int(digits, 16)
        if value > 0x10FFFF:
            raise ValueError(f"\\{c}{digits} is not a code point")
        return chr(value), i + 1 + width
    if c == "N" and not is_bytes:
        end = body.find("}", i)
        if body[i + 1:i + 2] != "{" or end < 0:
            raise ValueError("malformed \\N{...} escape")
        try:
            return unicodedata.lookup(body[i + 2:end]), end + 1
        except KeyError:
            raise ValueError(f"unknown character name {body[i + 2:end]!r}") from None
    return "\\" + c, i + 1  # an unknown escape keeps its backslash, as Python does


def escape_bytes(data: bytes) -> str:
    """A token's piece: ``repr(data)[2:-1]``, as llama.cpp's GGUF converter writes RWKV tokens."""
    return repr(data)[2:-1]


def _parse_line(line: str, number: int, file: str) -> tuple[int, bytes]:
    first, last = line.find(" "), line.rfind(" ")
    if first < 0 or last == first:
        raise FormatError("expected 'ID LITERAL LENGTH'", file=file, line=number)
    id_text, literal, length_text = line[:first], line[first:last], line[last + 1:].strip()
    if not id_text.isdigit() or not id_text.isascii() or not length_text.isdigit() or not length_text.isascii():
        raise FormatError(f"expected 'ID LITERAL LENGTH' with decimal ID and LENGTH, found {line!r:.80}",
                          file=file, line=number)
    try:
        token = parse_literal(literal)
    except ValueError as exc:
        raise FormatError(f"bad token literal {literal.strip()!r:.80}: {exc}", file=file, line=number) from None
    if len(token) != int(length_text):
        raise FormatError(f"the token has {len(token)} bytes, the line says {length_text}", file=file, line=number)
    id_ = int(id_text)
    if id_ >= _MAX_ID:
        raise FormatError(f"id {id_} is too large (polytok reads ids below {_MAX_ID})", file=file, line=number)
    return id_, token


def _read_lines(path: Path) -> list[str]:
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise FormatError(f"cannot read: {exc.strerror or exc}", file=str(path)) from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise FormatError("not UTF-8 text", file=str(path), offset=exc.start,
                          line=len(_NEWLINES.findall(raw[:exc.start].decode("utf-8"))) + 1) from None
    lines = _NEWLINES.split(text)
    if lines[-1] == "":
        lines.pop()
    if not lines:
        raise FormatError("empty vocabulary (no line)", file=str(path), line=1)
    return lines


def read_rwkv_vocab(path: Path, **options: Any) -> Tokenizer:
    """Load an RWKV world vocabulary file as rwkv's ``TRIE_TOKENIZER``.

    Args:
        path: the ``rwkv_vocab_*.txt`` file.
        **options: none are taken.

    Returns:
        The `Tokenizer`: ``encode(t)`` is ``TRIE_TOKENIZER.encode(t)`` and
        ``decode(ids)`` its ``decode`` (invalid UTF-8 replaced per sequence).

    Raises:
        FormatError: an unreadable or empty file, a bad line (named by number),
            or an option.
    """
    path = Path(path)
    if options:
        raise FormatError(f"the rwkv_vocab reader takes no options (got {', '.join(sorted(options))})")
    by_id: dict[int, bytes] = {}
    for number, line in enumerate(_read_lines(path), 1):
        id_, token = _parse_line(line, number, str(path))
        by_id[id_] = token
    pieces: list[str | None] = [None] * (max(by_id) + 1)
    for id_, token in by_id.items():
        pieces[id_] = escape_bytes(token)
    model = RWKV(pieces, missing_byte="error")
    return Tokenizer(model, decoder=RWKVDetokenizer(model),
                     facts=FormatFacts(format="rwkv_vocab", source=str(path), files=(str(path),),
                                       default_special=SpecialTokens.AS_TEXT))

