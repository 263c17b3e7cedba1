"""A vocabulary in the shapes constrained-decoding engines load: xgrammar, llguidance, outlines-core.

Each export is a JSON object built from `polytok.vocab_bytes` (the exact bytes of every id,
the control ids, the end-of-generation ids), never from the pieces' spelling. Token bytes
are JSON strings holding one character per byte (U+0000..U+00FF, ``bytes.decode("latin-1")``;
``"token_encoding": "latin-1"`` says so in every file): ASCII tokens read as themselves,
and ``text.encode("latin-1")`` gives the bytes back.

- ``xgrammar`` (xgrammar 0.2.9, ``python/xgrammar/tokenizer_info.py``,
  ``cpp/tokenizer_info.cc``): ``encoded_vocab`` (one entry per id, ``vocab_type`` RAW so
  the entries are the bytes themselves) and the ``metadata`` object of
  ``TokenizerInfo.dump_metadata``; load with ``TokenizerInfo.from_vocab_and_metadata``.
  xgrammar counts an empty entry as a special token, never matched: control ids and
  holes are ``""``; the stop ids keep their text.
- ``llguidance`` (llguidance 1.9.1, ``python/llguidance/_tokenizer.py`` and
  ``python_ext/src/py.rs`` ``PyTokenizer::py_new``): what ``TokenizerWrapper`` reads —
  ``tokens`` (bytes per id, holes ``""``), ``special_token_ids`` (llguidance prefixes
  each with its 0xFF marker, so no text matches it), ``eos_token_id``, ``bos_token_id`` —
  and ``eos_token_ids`` for ``LLTokenizer(..., eos_token=...)``. `LLGuidanceVocab` is
  the object ``TokenizerWrapper`` takes.
- ``outlines`` (outlines-core 0.2.14, ``src/vocabulary/mod.rs``): the arguments of
  ``Vocabulary(eos_token_id, {token: [ids]})``. outlines-core refuses the EOS id in the
  map and matches every entry as text, so the map leaves out the stop ids, the control
  ids, holes and tokens of no bytes; ids of the same bytes share an entry.

Every export also names the ``vocab_size`` (``Tokenizer.n_vocab``, or a larger model
vocabulary: ids past the tokenizer's are holes) and ``add_prefix_space``
(`vocab_bytes.adds_prefix_space`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .errors import PolytokError
from .special import SpecialTokens
from .vocab_bytes import adds_prefix_space, special_token_ids, stop_token_ids, vocab_bytes

if TYPE_CHECKING:
    from .tokenizer import Tokenizer

__all__ = ["FORMATS", "VocabFacts", "vocab_facts", "export_vocab", "write_export", "token_text", "text_bytes",
           "LLGuidanceVocab"]

FORMATS = ("xgrammar", "llguidance", "outlines")
XGRAMMAR_RAW = 0  # xgrammar.VocabType.RAW
MAX_VOCAB_SIZE = 1 << 24  # a --vocab-size above it is a mistake, not a padded output layer


def token_text(data: bytes) -> str:
    """`data` as a JSON-safe string, one character per byte (the exports' ``latin-1`` encoding)."""
    return data.decode("latin-1")


def text_bytes(text: str) -> bytes:
    """The bytes a `token_text` string holds."""
    return text.encode("latin-1")


@dataclass(frozen=True, slots=True)
class VocabFacts:
    """What every export is made of (see `polytok.vocab_bytes`)."""

    #: the bytes of each id below `vocab_size`; None where no token has the id
    table: list[bytes | None]
    #: the control ids
    special: frozenset[int]
    #: the end-of-generation ids, sorted
    stop: list[int]
    #: the BOS id, when the format names one
    bos: int | None
    #: whether decoding drops a space the joined bytes begin with
    prefix_space: bool
    #: the source the tokenizer was loaded from
    source: str

    @property
    def vocab_size(self) -> int:
        return len(self.table)

    @property
    def eos(self) -> int:
        """The one EOS an engine that takes one gets: the named ``eos`` when it stops a generation,
        else the smallest stop id."""
        return self.stop[0]


def vocab_facts(tok: Tokenizer, *, stop_ids: Iterable[int] | None = None,
                vocab_size: int | None = None) -> VocabFacts:
    """The `VocabFacts` of `tok`.

    Args:
        stop_ids: the end-of-generation ids to use instead of `vocab_bytes.stop_token_ids`.
        vocab_size: the model's vocabulary size, when larger than ``tok.n_vocab`` (a padded
            output layer): the ids past the tokenizer's are holes.

    Raises:
        PolytokError: no stop id is known (pass `stop_ids`), a stop id outside the
            vocabulary, or a `vocab_size` below ``tok.n_vocab`` or above `MAX_VOCAB_SIZE`.
    """
    if vocab_size is not None and not tok.n_vocab <= vocab_size <= MAX_VOCAB_SIZE:
        raise PolytokError(f"vocab_size {vocab_size} is outside {tok.n_vocab:,} (the tokenizer's ids) "
                           f"… {MAX_VOCAB_SIZE:,}")
    table = vocab_bytes(tok)
    if vocab_size is not None:
        table.extend([None] * (vocab_size - len(table)))
    stop = sorted(set(stop_ids)) if stop_ids is not None else stop_token_ids(tok)
    if not stop:
        raise PolytokError(f"{tok.facts.source}: no end-of-generation token is known; name one (--eos ID)")
    for id_ in stop:
        if not 0 <= id_ < len(table) or table[id_] is None:
            raise PolytokError(f"end-of-generation id {id_} is not a token of {tok.facts.source}")
    eos = tok.special_ids.get("eos")
    if eos in stop:
        stop.remove(eos)
        stop.insert(0, eos)
    return VocabFacts(table, special_token_ids(tok), stop, tok.special_ids.get("bos"), adds_prefix_space(tok),
                      tok.facts.source)


def _header(kind: str, facts: VocabFacts) -> dict[str, Any]:
    return {"format": kind, "token_encoding": "latin-1", "source": facts.source, "vocab_size": facts.vocab_size,
            "add_prefix_space": facts.prefix_space}


def xgrammar_export(facts: VocabFacts) -> dict[str, Any]:
    """``encoded_vocab`` and ``metadata`` for ``xgrammar.TokenizerInfo.from_vocab_and_metadata`` (module notes)."""
    stop = set(facts.stop)
    vocab = [token_text(data) if data is not None and (id_ in stop or id_ not in facts.special) else ""
             for id_, data in enumerate(facts.table)]
    metadata = {"vocab_type": XGRAMMAR_RAW, "vocab_size": facts.vocab_size,
                "add_prefix_space": facts.prefix_space, "stop_token_ids": facts.stop}
    return {**_header("xgrammar", facts), "encoded_vocab": vocab, "metadata": metadata}


def llguidance_export(facts: VocabFacts) -> dict[str, Any]:
    """What ``llguidance.TokenizerWrapper`` reads, and the EOS list of ``LLTokenizer`` (module notes)."""
    tokens = [token_text(data) if data is not None else "" for data in facts.table]
    special = sorted(i for i in facts.special if facts.table[i] is not None)
    return {**_header("llguidance", facts), "tokens": tokens, "special_token_ids": special,
            "eos_token_id": facts.eos, "eos_token_ids": facts.stop, "bos_token_id": facts.bos}


def outlines_export(facts: VocabFacts) -> dict[str, Any]:
    """The arguments of ``outlines_core.Vocabulary(eos_token_id, map)`` (module notes)."""
    left_out = facts.special.union(facts.stop)
    by_bytes: dict[str, list[int]] = {}
    for id_, data in enumerate(facts.table):
        if data and id_ not in left_out:
            by_bytes.setdefault(token_text(data), []).append(id_)
    return {**_header("outlines", facts), "eos_token_id": facts.eos, "eos_token_ids": facts.stop,
            "vocabulary": by_bytes}


_EXPORTS = {"xgrammar": xgrammar_export, "llguidance": llguidance_export, "outlines": outlines_export}


def export_vocab(tok: Tokenizer, kind: str, *, stop_ids: Iterable[int] | None = None,
                 vocab_size: int | None = None) -> dict[str, Any]:
    """The export of `tok` for engine `kind` (one of `FORMATS`); `stop_ids`, `vocab_size` as for `vocab_facts`.

    Raises:
        PolytokError: an unknown `kind`, or what `vocab_facts` raises.
    """
    build = _EXPORTS.get(kind)
    if build is None:
        raise PolytokError(f"unknown export format {kind!r} (known: {', '.join(FORMATS)})")
    return build(vocab_facts(tok, stop_ids=stop_ids, vocab_size=vocab_size))


def write_export(export: dict[str, Any], out: Any) -> None:
    """Write `export` as JSON to the text stream `out` (UTF-8, one line)."""
    json.dump(export, out, ensure_ascii=False, separators=(",", ":"))
    out.write("\n")


class LLGuidanceVocab:
    """The object ``llguidance.TokenizerWrapper`` takes: an ``llguidance`` export's fields, and a
    call that tokenizes bytes (valid UTF-8, as llguidance passes them) with `tok`, special-token
    markers read as text."""

    def __init__(self, export: dict[str, Any], tok: Tokenizer) -> None:
        self.tokens = [text_bytes(t) for t in export["tokens"]]
        self.special_token_ids = list(export["special_token_ids"])
        self.eos_token_id = export["eos_token_id"]
        self.bos_token_id = export["bos_token_id"]
        self._tok = tok

    def __call__(self, data: bytes) -> list[int]:
        return self._tok.encode(data.decode("utf-8"), add_special=False, special=SpecialTokens.AS_TEXT)
