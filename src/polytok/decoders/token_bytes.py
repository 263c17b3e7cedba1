"""TokenBytes detokenizer: ids → the bytes each stands for → text (tiktoken, Mistral tekken).

Stage: decode, working on ids (a `Tokenizer`'s `IdsDecoder`); no ``tokenizer.json`` type.

Reproduces:

- tiktoken 0.14.0, src/lib.rs ``CoreBPE::decode_bytes`` and tiktoken/core.py
  ``Encoding.decode``: the bytes of every id (ordinary or special), joined, then
  UTF-8 with ``errors="replace"``. An id tiktoken does not know raises
  ``KeyError``; here `DecodeError`, naming its position. ``skip_special`` (no
  tiktoken equivalent) leaves the special ids out before joining.
- mistral-common 1.13.1, mistral_common/tokens/tokenizers/tekken.py
  (``Tekkenizer._decode_all``, ``Tekkenizer.decode``) with ``runs=True``: each
  run of ordinary ids between special ones is decoded to text *on its own*
  (so a character split by a special id decodes to U+FFFD on both sides, even
  when the special id is dropped), and the special ids follow the policy:
  ``"keep"`` writes their text, ``"ignore"`` drops them, ``"raise"`` refuses.
  Divergence: a negative id is a special id for mistral-common (``t <
  num_special_tokens``) and, with KEEP, indexes its special list from the end;
  polytok raises `DecodeError`.

``token_bytes(id)`` is the table's entry: tiktoken's ``decode_single_token_bytes``
(a special token's UTF-8 text) and mistral-common's ``id_to_byte_piece(id, KEEP)``.
"""

from __future__ import annotations

from itertools import groupby
from typing import Literal

from ..errors import DecodeError
from . import IdsDecoder

Policy = Literal["keep", "ignore", "raise"]


class TokenBytes(IdsDecoder):
    """Decode ids through a table of token bytes.

    Args:
        table: ``table[id]`` is the bytes of `id` (None for an unused id).
        special_ids: the ids of special tokens.
        runs: decode each run of ordinary ids on its own (mistral-common), not all bytes at once (tiktoken).
    """

    def __init__(self, table: list[bytes | None], special_ids: frozenset[int], *, runs: bool = False) -> None:
        self.table = table
        self.special_ids = special_ids
        self.runs = runs

    def token_bytes(self, id: int) -> bytes:
        found = self.table[id] if 0 <= id < len(self.table) else None
        if found is None:
            raise DecodeError(f"token id {id} is not in the vocabulary (0 ≤ id < {len(self.table)})")
        return found

    def decode(self, ids: list[int], *, skip_special: bool) -> str:
        """tiktoken ``decode`` (``runs=False``); mistral-common ``decode`` with KEEP / IGNORE (``runs=True``)."""
        return self.decode_policy(ids, "ignore" if skip_special else "keep")

    def decode_policy(self, ids: list[int], policy: Policy) -> str:
        """Decode with a special-token policy: ``"keep"``, ``"ignore"`` or ``"raise"`` (mistral-common's
        ``SpecialTokenPolicy``).

        Raises:
            DecodeError: an id outside the table (naming its position), or a special id under ``"raise"``.
        """
        self._check(ids)
        special = self.special_ids
        if policy == "raise":
            found = [i for i in ids if i in special]
            if found:
                raise DecodeError(f"decoding special tokens is not allowed with the 'raise' policy: {found[:8]}")
        elif policy not in ("keep", "ignore"):
            raise DecodeError(f"special-token policy must be 'keep', 'ignore' or 'raise', not {policy!r}")
        get = self.table.__getitem__
        if not self.runs:
            if policy == "ignore" and not special.isdisjoint(ids):
                ids = [i for i in ids if i not in special]
            return b"".join(map(get, ids)).decode("utf-8", "replace")  # type: ignore[arg-type]
        parts: list[str] = []
        for is_special, run in groupby(ids, special.__contains__):
            if not is_special:
                parts.append(b"".join(map(get, run)).decode("utf-8", "replace"))  # type: ignore[arg-type]
            elif policy == "keep":
                parts.extend(get(i).decode("utf-8", "replace") for i in run)  # type: ignore[union-attr]
        return "".join(parts)

    def _check(self, ids: list[int]) -> None:
        if not ids:
            return
        table = self.table
        try:
            if min(ids) >= 0 and None not in map(table.__getitem__, ids):
                return
        except (IndexError, TypeError):
            pass
        for position, id_ in enumerate(ids):
            if type(id_) is not int or not 0 <= id_ < len(table) or table[id_] is None:
                raise DecodeError(f"position {position}: id {id_!r} is not in the vocabulary "
                                  f"(0 ≤ id < {len(table)})")
