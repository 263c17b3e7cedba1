"""Reader for tiktoken rank files (``.tiktoken``; Llama 3 / Llama 4 ``tokenizer.model``).

Format: one line per token, ``base64(token_bytes) SP rank``. tiktoken 0.14.0,
tiktoken/load.py (``load_tiktoken_bpe``) reads it; tiktoken/core.py (``Encoding``)
and src/lib.rs (``CoreBPE``) run it. polytok takes exactly the files both take:

- lines end at ``\\n``, ``\\r\\n`` or ``\\r`` (``bytes.splitlines``); empty ones are
  skipped, one of white space only is an error;
- a line is two fields split at any ASCII white space (``bytes.split``: spaces,
  tabs, VT, FF, before, between and after); base64 is decoded leniently
  (``base64.b64decode``: characters outside the alphabet are dropped, the padding
  must then be right), so ``=`` is a token of no bytes (whisper's
  multilingual.tiktoken has one); the rank is Python's ``int`` (``+7``, ``0_7``);
- a token given twice keeps the last rank, at the place of the first (a ``dict``),
  and the earlier rank is gone; the ranks left must be distinct (``CoreBPE``
  asserts it), in 0..2**32-1 (its ``u32``), and at least one (``Encoding``
  takes the largest).

A token of no bytes decodes to nothing. Merges never make it (lib.rs
``byte_pair_encode`` joins non-empty parts); tiktoken gives it for each empty match
of the pattern that ``find_iter`` reports (none for every known file's pattern),
the empty text between special tokens included, and polytok's `Split` keeps those
(``empty_matches="keep"``); without such a token tiktoken panics there, and polytok
raises `EncodeError` naming the place (``"refuse"``; tests/formats/
test_tiktoken_empty_token.py). polytok also refuses ids far sparser than the number
of tokens (``_SPARSE``), which tiktoken takes, and ranks without a token for each of
the 256 single bytes: tiktoken's ``Encoding`` takes them, then ``byte_pair_encode``
panics (``ranks[piece]``: no entry found for key) on a piece that needs the byte.

The file holds neither the split pattern nor the special tokens: a well-known file is
recognised by its sha256 (`tiktoken_known`), any other needs ``pattern=`` (and
``special_tokens=`` if it has any).

The pipeline, from the shared components:

- special split: the special tokens as `AddedToken` (special, not normalized)
  at the ids the loader fixes. tiktoken matches them with a regex alternation
  in its hash map's order (lib.rs ``new_internal``), so when one special text is
  a prefix of another it picks either, by hash; polytok takes the longest
  (known divergence, pinned in tests/formats/test_tiktoken_specials.py). With
  no prefix pairs (every known file) both find the same tokens.
- normalizer: `SurrogateRepair` (core.py's ``except UnicodeEncodeError`` fix-up).
- pre-tokenizer: ``Split(pattern, "removed", invert=True, dialect="fancy",
  empty_matches=...)`` — only the matches are pieces, empty ones too (lib.rs
  ``encode_ordinary``: ``find_iter``).
- model: `BPE` with ``ignore_merges=True`` (a piece that is a rank entry is one
  token, lib.rs ``encoder.get(piece)``), ``merge_priority="token_id"`` and
  ``byte_level=True``: a piece is text and its UTF-8 bytes merge (``byte_pair_encode``);
  the vocabulary spells them in the GPT-2 byte alphabet, the pieces ``id_to_token`` gives.
  (A ``ByteLevel(use_regex=False)`` pre-tokenizer before the model did that mapping, one
  str per piece; the model reads the bytes itself now, see `polytok.models.bpe`.)
- decode: `TokenBytes` (``decode_bytes`` then UTF-8 with replacement).

Modes: ``special=AS_TEXT`` (the default) is ``encode_ordinary(t)`` — tiktoken's
plain ``encode`` raises on special text, so the ordinary call is the reference
default; ``PARSE`` is ``encode(t, allowed_special="all")``. ``add_special`` adds
nothing (tiktoken adds no BOS). ``decode(skip_special=True)`` leaves special ids
out (tiktoken has no such switch). `mergeable_ranks` gives ``{token_bytes: rank}``;
``tok.facts.pattern`` the split pattern; ``tok.id_to_token(id)`` the piece in
the GPT-2 byte alphabet (as HF's ``tokenizer.json`` for Llama 3 writes it).

Load time: the whole file is parsed by C-level calls — one possessive regex
check of the file, one ``split``, ``map`` over ``a2b_base64`` and ``int``; the
byte-alphabet pieces come from one charmap decode of all tokens joined, then
slices; the collector is off meanwhile. No per-entry Python loop runs unless the
file is bad (then one finds the line). Rejected, as measured slower: ``str.translate``
into the byte alphabet (no fast path for non-ASCII tables), a strict base64 regex
over the file (it backtracks), ``map(slice, …)`` (slower than a comprehension
here). The load is faster than tiktoken's and mistral-common's on the tests'
fixtures; encoding is slower than tiktoken's. Numbers: bench/README.md,
'Measurements behind design choices'.
"""

from __future__ import annotations

import codecs
import gc
import hashlib
import re
from binascii import Error as BinasciiError
from binascii import a2b_base64
from dataclasses import replace
from functools import partial
from itertools import accumulate
from pathlib import Path

from ..decoders.token_bytes import TokenBytes
from ..errors import FormatError
from ..facts import FormatFacts, NamedToken, eos_ends
from ..models.bpe import BPE
from ..normalizers.surrogate_repair import SurrogateRepair
from ..pre_tokenizers.split import Split
from ..special import AddedToken, SpecialTokens
from ..text.byte_alphabet import BYTES_TO_CHARS
from ..tokenizer import Tokenizer
from .compressed import read_bytes
from .tiktoken_known import KNOWN_RANKS

__all__ = ["read_tiktoken", "parse_ranks", "build_tiktoken", "mergeable_ranks", "strict_b64"]

# the common shape, the whole file at once: possessive, so `re` never backtracks (fast; bench/README.md);
# its tokens are then decoded as tiktoken decodes them, and anything else read line by line
_FILE = re.compile(rb"(?:(?:[A-Za-z0-9+/=]++ [0-9]++)?\r?\n)*+(?:[A-Za-z0-9+/=]++ [0-9]++)?")
strict_b64 = partial(a2b_base64, strict_mode=True)  # tekken.json's vocabulary (mistral-common decodes strictly)
_ALPHABET = "".join(BYTES_TO_CHARS)  # a charmap: byte b decodes to BYTES_TO_CHARS[b]
_SPARSE = 16  # ids are kept in a table by id: refuse one more than this many times larger than needed


def read_tiktoken(path: Path, *, pattern: str | None = None,
                  special_tokens: dict[str, int] | None = None) -> Tokenizer:
    """Read a tiktoken rank file.

    Args:
        path: the rank file.
        pattern: the split pattern (tiktoken ``pat_str``); default: the known file's.
        special_tokens: ``{text: id}``; default: the known file's (else none).

    Returns:
        The `Tokenizer` (``encode`` is ``encode_ordinary``; ``special="parse"`` is
        ``encode(t, allowed_special="all")``).

    Raises:
        FormatError: the file cannot be read, a line is not ``base64 rank`` (named by
            number), tiktoken's ``Encoding`` would refuse the ranks, or the file is not a known one
            and `pattern` is missing.
    """
    path = Path(path)
    data = read_bytes(path)  # a tokenizer.model.gz too (`formats.folder`)
    digest = hashlib.sha256(data).hexdigest()
    known = KNOWN_RANKS.get(digest)
    if pattern is None:
        if known is None:
            raise FormatError(f"not a tiktoken rank file polytok knows (sha256 {digest}): pass pattern= "
                              "(tiktoken's pat_str) and special_tokens=", file=str(path))
        pattern = known.pattern
    if special_tokens is None:
        special_tokens = dict(known.special_tokens) if known is not None else {}
    for text, id_ in special_tokens.items():
        if not isinstance(text, str) or type(id_) is not int or id_ < 0:
            raise FormatError(f"expected {{text: non-negative id}}, found {text!r:.40}: {id_!r:.20}",
                              file=str(path), key="special_tokens")
    collecting = gc.isenabled()
    gc.disable()  # hundreds of thousands of new objects, none of them garbage: collections are pure cost
    try:
        token_bytes, ranks = parse_ranks(data, str(path))
        tok = build_tiktoken(token_bytes, ranks, pattern, special_tokens, source=str(path))
    finally:
        if collecting:
            gc.enable()
    names = {"bos": known.bos, "eos": known.eos} if known is not None else {}
    named = {kind: NamedToken(name, special_tokens[name]) for kind, name in names.items()
             if name is not None and name in special_tokens}
    tok.facts = replace(tok.facts, named_tokens=named, eog_ids=eos_ends(named),
                        details={"sha256": digest, "name": known.name if known else None})
    return tok


def parse_ranks(data: bytes, file: str) -> tuple[list[bytes], list[int] | range]:
    """The token bytes and ranks of a rank file, as tiktoken's loader reads them and its
    ``Encoding`` takes them (see the module notes); a line either refuses names its number."""
    if _FILE.fullmatch(data) is not None:
        fields = data.split()
        try:
            token_bytes = list(map(a2b_base64, fields[0::2]))
        except BinasciiError:
            return _parse_lines(data, file)
        try:
            ranks = list(map(int, fields[1::2]))
        except ValueError:  # a rank longer than int() reads: the line is named below
            return _parse_lines(data, file)
        # distinct ranks: a token given twice only loses its earlier rank (`build_tiktoken` keeps the last)
        if ranks == list(range(len(ranks))) and ranks:
            return token_bytes, range(len(ranks))
        if ranks and len(set(ranks)) == len(ranks) and max(ranks) < 2**32:
            return token_bytes, ranks
    return _parse_lines(data, file)


def _parse_lines(data: bytes, file: str) -> tuple[list[bytes], list[int] | range]:
    """`parse_ranks` line by line, for any file the fast path does not take."""
    # as tiktoken's dict: a repeated token keeps its place, takes the last rank
    entries: dict[bytes, tuple[int, int]] = {}
    for number, line in enumerate(data.splitlines(), 1):
        if not line:
            continue
        fields = line.split()
        if len(fields) != 2:
            raise FormatError(f"expected 'base64 rank', found {line[:60]!r}", file=file, line=number)
        try:
            token = a2b_base64(fields[0])
            rank = int(fields[1])
        except (BinasciiError, ValueError) as exc:
            raise FormatError(f"expected 'base64 rank', found {line[:60]!r} ({exc})", file=file, line=number) from None
        entries[token] = (rank, number)
    if not entries:
        raise FormatError("no ranks (tiktoken's Encoding takes the largest of them)", file=file)
    seen: dict[int, int] = {}
    for rank, number in entries.values():
        if not 0 <= rank < 2**32:
            raise FormatError(f"rank {rank} is outside 0..2**32-1 (tiktoken's ranks are u32)", file=file, line=number)
        if rank in seen:
            raise FormatError(f"rank {rank} appears twice, on lines {seen[rank]} and {number} (tiktoken: duplicate "
                              "token indices)", file=file, line=number)
        seen[rank] = number
    ranks = [rank for rank, _ in entries.values()]
    return list(entries), range(len(ranks)) if ranks == list(range(len(ranks))) else ranks


def build_tiktoken(token_bytes: list[bytes], ranks: list[int] | range, pattern: str,
                   special_tokens: dict[str, int], *, source: str, offset: int = 0,
                   runs: bool = False) -> Tokenizer:
    """The tiktoken pipeline over ranked token bytes; token ids are ``rank + offset``.

    Shared with the tekken reader (``offset`` = its number of special tokens; ``runs``:
    decode each run between special ids on its own, `TokenBytes`).
    """
    n = len(token_bytes)
    ids: list[int] | range = range(offset, offset + n)
    if ranks != range(n):
        ids = [r + offset for r in ranks]
    # all tokens in the byte alphabet at once (a charmap decode, in C), then cut apart
    blob = codecs.charmap_decode(b"".join(token_bytes), "strict", _ALPHABET)[0]
    ends = list(accumulate(map(len, token_bytes)))
    pieces = [blob[a:b] for a, b in zip([0, *ends[:-1]], ends)]
    vocab = dict(zip(pieces, ids))
    missing = [b for b in range(256) if _ALPHABET[b] not in vocab]
    if missing:
        raise FormatError(f"no token for the single byte {bytes(missing[:1])!r} ({len(missing)} of the 256 bytes "
                          "missing): tiktoken loads such ranks and panics on any text that needs the byte; "
                          "polytok refuses them at load", file=source, key="ranks")
    model = BPE(vocab, [], ignore_merges=True, merge_priority="token_id", byte_level=True)
    pre_tokenizer = Split(pattern, "removed", invert=True, dialect="fancy", key="pattern",
                          empty_matches="keep" if "" in vocab else "refuse")
    table = _id_table(token_bytes, ids, vocab, special_tokens)
    rank_ids = ids if isinstance(ids, range) else set(ids)
    # an id that is both a rank and a special decodes as the rank (lib.rs decode_bytes looks there first)
    specials = frozenset(v for v in special_tokens.values() if v not in rank_ids)
    tok = Tokenizer(model, normalizer=SurrogateRepair(), pre_tokenizer=pre_tokenizer,
                    decoder=TokenBytes(table, specials, runs=runs),
                    facts=FormatFacts(format="tiktoken", source=source, files=(source,),
                                      default_special=SpecialTokens.AS_TEXT, pattern=pattern))
    tok.added.add_fixed({id_: AddedToken(text, special=True, normalized=False)
                         for text, id_ in special_tokens.items()})
    return tok


def _id_table(token_bytes: list[bytes], ids: list[int] | range, vocab: dict[str, int],
              special_tokens: dict[str, int]) -> list[bytes | None]:
    """``table[id]``: the bytes of every id (None where unused), as tiktoken's decoders hold them."""
    top = max(max(ids, default=-1), max(special_tokens.values(), default=-1))
    if top >= _SPARSE * (len(token_bytes) + len(special_tokens)) + 65536:
        raise FormatError(f"ids up to {top} for {len(token_bytes) + len(special_tokens)} tokens: polytok keeps "
                          "a table by id and does not read vocabularies this sparse", key="ranks")
    table: list[bytes | None]
    if isinstance(ids, range):
        table = [None] * ids.start + list(token_bytes)
    else:
        table = [None] * (top + 1)
        for id_, data in zip(ids, token_bytes):
            table[id_] = data
    table.extend([None] * (top + 1 - len(table)))
    if len(vocab) != len(token_bytes):
        # the same bytes twice: tiktoken's encoder keeps the last rank, and its decoder only that one
        for id_ in set(ids) - set(vocab.values()):
            table[id_] = None
    for text, id_ in special_tokens.items():
        if table[id_] is None:
            table[id_] = text.encode("utf-8")
    return table


def mergeable_ranks(tok: Tokenizer) -> dict[bytes, int]:
    """``{token_bytes: rank}`` of a tokenizer read from a rank file or a tekken.json (tiktoken's
    ``mergeable_ranks``; for tekken the ranks its inner tiktoken ``Encoding`` holds: ids less the
    special-token count).

    Raises:
        ValueError: `tok` was not read from one of those formats.
    """
    detok = tok.decoder
    if not isinstance(detok, TokenBytes) or tok.facts.format not in ("tiktoken", "tekken"):
        raise ValueError("not a tokenizer read from a tiktoken rank file or a tekken.json")
    offset = tok.facts.num_special_tokens
    return {data: id_ - offset for id_, data in enumerate(detok.table)
            if data is not None and id_ not in detok.special_ids}
