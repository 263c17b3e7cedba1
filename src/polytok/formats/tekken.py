"""Reader for Mistral's ``tekken.json``.

Reproduces mistral-common 1.13.1, mistral_common/tokens/tokenizers/tekken.py:
``Tekkenizer.from_file`` (the file's keys; a file of version v7 or older
without ``special_tokens`` gets ``Tekkenizer.DEPRECATED_SPECIAL_TOKENS``),
``Tekkenizer.__init__`` (special tokens padded with ``<SPECIAL_{i}>`` up to
``default_num_special_tokens``; the vocabulary cut to ``default_vocab_size -
default_num_special_tokens`` entries by ``_reload_mergeable_ranks``; a
tiktoken ``Encoding`` over ``config.pattern`` with no special tokens),
``encode`` (tiktoken's ids shifted by the number of special tokens; BOS / EOS
on request) and ``decode`` / ``_decode_all``.

The pipeline is tiktoken's (`formats.tiktoken.build_tiktoken`, ids offset by
the special count), plus:

- ``add_special``: True is ``encode(s, bos=True, eos=False)`` — a BOS first, as
  every Mistral request starts (mistral-common's instruct tokenizers encode the
  first message with ``bos=True``), False is ``bos=False, eos=False``. No mode
  adds EOS; the `TemplateProcessing` post-processor is ``<s> $A`` (a pair is
  ``<s> $A $B``; Tekkenizer has no pairs).
- ``special``: ``Tekkenizer.encode`` always reads special-token text as text, so
  ``AS_TEXT`` is the default and the reference. ``PARSE`` (no mistral-common
  equivalent) cuts the text at the special tokens (longest first where one is
  the prefix of another) and encodes the rest as Tekkenizer does; its tests
  build the expected ids from Tekkenizer's pieces and ids.
- decode: each run of ordinary ids between special ones is decoded on its own,
  as ``_decode_all`` does. ``decode(ids, skip_special=True)`` is
  ``SpecialTokenPolicy.IGNORE`` (mistral-common's default), ``skip_special=False``
  is ``KEEP``; ``RAISE`` is ``tok.decoder.decode_policy(ids, "raise")``
  (`decoders.token_bytes.TokenBytes`).

Checks: mistral-common asserts (``AssertionError``); polytok raises
`FormatError` naming the key. Divergences: any ``vN`` version is read (mistral-
common refuses versions it does not list; v7 still decides the special-token
default), and a special token's ``rank`` must equal its place in the list
(mistral-common numbers them by ``rank`` but writes them by place when decoding).

Load time: see the table in `formats.tiktoken` (about 0.35-0.5 s, of which
``json.loads`` of the 15-19 MB file is 0.13-0.2 s; ``Tekkenizer.from_file`` 1.1-1.2 s).
"""

from __future__ import annotations

import gc
import re
from dataclasses import replace
from operator import itemgetter
from pathlib import Path
from typing import Any, NoReturn, TypedDict

from .._config import join
from ..errors import FormatError
from ..facts import NamedToken, eos_ends
from ..post_processors.template import TemplateProcessing
from ..tokenizer import Tokenizer
from .compressed import read_bytes
from .folder import parse_json_bytes
from .tiktoken import build_tiktoken, strict_b64

__all__ = ["read_tekken", "DEPRECATED_SPECIAL_TOKENS"]


class TokenInfo(TypedDict):
    rank: int
    token_bytes: str
    token_str: str | None


class SpecialTokenInfo(TypedDict):
    rank: int
    token_str: str
    is_control: bool


# Tekkenizer.DEPRECATED_SPECIAL_TOKENS (tekken.py), by rank: the special tokens of files up to v7
DEPRECATED_SPECIAL_TOKENS = (
    "<unk>", "<s>", "</s>", "[INST]", "[/INST]", "[AVAILABLE_TOOLS]", "[/AVAILABLE_TOOLS]", "[TOOL_RESULTS]",
    "[/TOOL_RESULTS]", "[TOOL_CALLS]", "[IMG]", "<pad>", "[IMG_BREAK]", "[IMG_END]", "[PREFIX]", "[MIDDLE]",
    "[SUFFIX]", "[SYSTEM_PROMPT]", "[/SYSTEM_PROMPT]", "[TOOL_CONTENT]",
)
_FILLER = "<SPECIAL_{id}>"  # Tekkenizer.SPECIAL_TOKEN_TEMPLATE
_NAMED = {"bos": "<s>", "eos": "</s>", "pad": "<pad>", "unk": "<unk>"}
# fillers are made one by one: a header claiming more (real files have 1000) is refused before that loop
_MAX_SPECIAL = 1 << 20
_VERSION = re.compile("v[0-9]{1,9}")
_rank, _token_bytes = itemgetter("rank"), itemgetter("token_bytes")


def read_tekken(path: Path, **options: Any) -> Tokenizer:
    """Read a Mistral ``tekken.json`` (or ``tekken.json.gz``).

    Args:
        path: the file.
        **options: none are taken.

    Returns:
        The `Tokenizer`: ``encode(s)`` is ``Tekkenizer.encode(s, bos=True, eos=False)``,
        ``encode(s, add_special=False)`` is ``bos=False, eos=False``.

    Raises:
        FormatError: an unreadable file, bad JSON, a missing or mistyped key (named),
            or an option.
    """
    if options:
        raise FormatError(f"the tekken reader takes no options (got {', '.join(sorted(options))})")
    path = Path(path)
    data = _read_json(path)
    config = _object(data.get("config"), "config", path)
    pattern = _typed(config, "pattern", str, path)
    vocab_size = _typed(config, "default_vocab_size", int, path)
    n_special = _typed(config, "default_num_special_tokens", int, path)
    if not 0 <= n_special <= min(vocab_size, _MAX_SPECIAL):
        raise FormatError(f"{n_special} special tokens: expected 0 to default_vocab_size ({vocab_size}), at "
                          f"most {_MAX_SPECIAL}", file=str(path), key="config.default_num_special_tokens")
    version = _version(config, path)
    specials = _special_tokens(data, version, n_special, path)
    token_bytes = _vocab(data, vocab_size - n_special, path)
    collecting = gc.isenabled()
    gc.disable()
    try:
        tok = build_tiktoken(token_bytes, range(len(token_bytes)), pattern, specials, source=str(path),
                             offset=n_special, runs=True)  # mistral-common decodes each run on its own
    finally:
        if collecting:
            gc.enable()
    named = {kind: NamedToken(text, specials[text]) for kind, text in _NAMED.items() if text in specials}
    if "bos" in named:
        bos = {"<s>": ([specials[_NAMED["bos"]]], ["<s>"])}
        tok.post_processor = TemplateProcessing([("special", "<s>", 0), ("seq", 0, 0)],
                                                [("special", "<s>", 0), ("seq", 0, 0), ("seq", 1, 1)], bos)
    tok.facts = replace(tok.facts, format="tekken", named_tokens=named, num_special_tokens=n_special,
                        eog_ids=eos_ends(named), details={"version": f"v{version}", "vocab_size": vocab_size})
    return tok


def _read_json(path: Path) -> dict[str, Any]:
    return _object(parse_json_bytes(read_bytes(path), str(path)), "", path)


def _object(value: Any, key: str, path: Path) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise FormatError(f"expected an object, found {type(value).__name__}", file=str(path), key=key or None)
    return value


def _typed(d: dict[str, Any], name: str, kind: type, path: Path, where: str = "config") -> Any:
    value = d.get(name)
    if type(value) is not kind:
        found = "nothing" if name not in d else f"{value!r:.40}"
        raise FormatError(f"expected {kind.__name__}, found {found}", file=str(path), key=join(where, name))
    return value


def _version(config: dict[str, Any], path: Path) -> int:
    text = config.get("version")
    if not isinstance(text, str) or _VERSION.fullmatch(text) is None:  # ASCII digits, at most 9 of them
        raise FormatError(f"expected a version such as 'v7', found {text!r:.40}", file=str(path),
                          key="config.version")
    return int(text[1:])


def _special_tokens(data: dict[str, Any], version: int, count: int, path: Path) -> dict[str, int]:
    """``{text: id}`` of every special token, padded with fillers up to `count` (Tekkenizer.__init__)."""
    raw = data.get("special_tokens")
    if raw is None:
        if version > 7:
            raise FormatError("a tekken file after v7 must list its special_tokens", file=str(path),
                              key="special_tokens")
        texts = list(DEPRECATED_SPECIAL_TOKENS)
    else:
        if not isinstance(raw, list):
            raise FormatError("expected a list", file=str(path), key="special_tokens")
        texts = []
        for i, entry in enumerate(raw):
            where = join("special_tokens", i)
            entry = _object(entry, where, path)
            if _typed(entry, "rank", int, path, where) != i:
                raise FormatError(f"expected rank {i} (its place in the list)", file=str(path),
                                  key=join(where, "rank"))
            texts.append(_typed(entry, "token_str", str, path, where))
    if len(set(texts)) != len(texts) or len(texts) > count:
        raise FormatError(f"special tokens must be unique and at most default_num_special_tokens ({count})",
                          file=str(path), key="special_tokens")
    texts += [_FILLER.format(id=i) for i in range(len(texts), count)]
    if len(set(texts)) != count:
        raise FormatError("a special token repeats a filler name <SPECIAL_i>", file=str(path), key="special_tokens")
    return {text: i for i, text in enumerate(texts)}


def _vocab(data: dict[str, Any], size: int, path: Path) -> list[bytes]:
    """The token bytes of the first `size` entries (``_reload_mergeable_ranks``)."""
    vocab = data.get("vocab")
    if not isinstance(vocab, list):
        raise FormatError("expected a list", file=str(path), key="vocab")
    if len(vocab) < size:
        raise FormatError(f"{len(vocab)} entries, fewer than default_vocab_size - default_num_special_tokens "
                          f"({size})", file=str(path), key="vocab")
    vocab = vocab[:size]
    try:
        ranks = list(map(_rank, vocab))
        encoded = list(map(_token_bytes, vocab))
        token_bytes = list(map(strict_b64, encoded))
        if ranks != list(range(size)) or token_bytes[:256] != [bytes([b]) for b in range(min(size, 256))]:
            raise ValueError
    except (TypeError, KeyError, ValueError):
        _raise_bad_entry(vocab, path)
    return token_bytes


def _raise_bad_entry(vocab: list[Any], path: Path) -> NoReturn:
    for i, entry in enumerate(vocab):
        where = join("vocab", i)
        entry = _object(entry, where, path)
        if _typed(entry, "rank", int, path, where) != i:
            raise FormatError(f"expected rank {i}", file=str(path), key=join(where, "rank"))
        text = _typed(entry, "token_bytes", str, path, where)
        try:
            value = strict_b64(text)
        except ValueError:
            raise FormatError(f"not base64: {text!r:.40}", file=str(path), key=join(where, "token_bytes")) from None
        if i < 256 and value != bytes([i]):
            raise FormatError(f"entry {i} must be the byte {i}", file=str(path), key=join(where, "token_bytes"))
    raise FormatError("invalid vocabulary", file=str(path), key="vocab")
