"""TemplateProcessing post-processor: special tokens and type ids placed by a template.

Stage: post-processor. JSON (all three keys required)::

    {"type": "TemplateProcessing",
     "single": [piece, ...], "pair": [piece, ...],
     "special_tokens": {name: {"id": name, "ids": [int, ...], "tokens": [str, ...]}}}

where a piece is ``{"Sequence": {"id": "A"|"B", "type_id": int}}`` or
``{"SpecialToken": {"id": name, "type_id": int}}``.

Reproduces HF tokenizers 0.23.3 ``tokenizers/src/processors/template.rs``
(``TemplateProcessing::apply_template`` / ``process_encodings``, and the
deserializer ``TemplateProcessingDeserializer`` with ``count_added``):

- the template is walked in order (``pair`` when there are two encodings); a
  ``Sequence`` piece inserts that encoding with all its type ids set to the
  piece's ``type_id`` **even without special tokens**, and a sequence may
  appear several times (or not at all);
- a ``SpecialToken`` piece inserts its ids/tokens (typed ``type_id``, special
  mask 1, no word, offsets (0, 0)) only with special tokens;
- quirk kept: only the main encoding's type ids are rewritten; overflows keep
  their pre-template type ids (0 for A, 1 for B), so ``[CLS]:3 $A:2 [SEP]:3``
  gives ``3,2,2,2,3`` but its overflow ``3,0,0,0,3``;
- loading does not check the template: a name missing from ``special_tokens``
  counts 0 in ``added_tokens`` and fails only when special tokens are added,
  and ``$B`` in ``single`` fails on every call (HF panics; polytok raises
  `EncodeError`).

Divergence on purpose: HF accepts a special token whose ``ids`` and ``tokens``
differ in length (and builds inconsistent encodings); polytok raises
`FormatError` at load, as HF's own ``SpecialToken::new`` does.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from .._config import as_object, join, required
from ..encoding import Encoding, special_tokens_encoding
from ..errors import EncodeError, FormatError
from ._common import u32
from .base import PostProcessorBase

# ("seq", 0 | 1, type_id) or ("special", name, type_id)
Piece = tuple[str, Any, int]
# fast-path plan item: a sequence index, the ids of a special token, or the name of a missing one
PlanItem = int | list[int] | str


def _piece(d: Any, path: str) -> Piece:
    d = as_object(d, path)
    if len(d) != 1 or next(iter(d)) not in ("Sequence", "SpecialToken"):
        raise FormatError('expected exactly one of "Sequence" or "SpecialToken"', key=path)
    kind = next(iter(d))
    where = join(path, kind)
    body = as_object(d[kind], where)
    type_id = u32(required(body, "type_id", int, where), join(where, "type_id"))
    name: str = required(body, "id", str, where)
    if kind == "SpecialToken":
        return ("special", name, type_id)
    if name not in ("A", "B"):
        raise FormatError(f'expected "A" or "B", found {name!r}', key=join(where, "id"))
    return ("seq", 0 if name == "A" else 1, type_id)


def _special_tokens(d: Any, path: str) -> dict[str, tuple[list[int], list[str]]]:
    d = as_object(d, path)
    table: dict[str, tuple[list[int], list[str]]] = {}
    for name, entry in d.items():
        where = join(path, name)
        entry = as_object(entry, where)
        required(entry, "id", str, where)
        ids = [u32(v, join(join(where, "ids"), i)) for i, v in enumerate(required(entry, "ids", list, where))]
        tokens: list[Any] = required(entry, "tokens", list, where)
        for i, t in enumerate(tokens):
            if not isinstance(t, str):
                raise FormatError(f"expected a string, found {t!r:.60}", key=join(join(where, "tokens"), i))
        if len(ids) != len(tokens):
            raise FormatError("ids and tokens must be of the same length", key=where)
        table[name] = (ids, tokens)
    return table


class TemplateProcessing(PostProcessorBase):
    def __init__(self, single: list[Piece], pair: list[Piece],
                 special_tokens: dict[str, tuple[list[int], list[str]]]) -> None:
        self.single = single
        self.pair = pair
        self.special_tokens = special_tokens
        self._added = (self._count_added(single), self._count_added(pair))
        self._plans = {(is_pair, add): self._plan(pair if is_pair else single, add)
                       for is_pair in (False, True) for add in (False, True)}

    @classmethod
    def from_config(cls, d: dict[str, Any], path: str) -> TemplateProcessing:
        templates = []
        for key in ("single", "pair"):
            items: list[Any] = required(d, key, list, path)
            templates.append([_piece(p, join(join(path, key), i)) for i, p in enumerate(items)])
        specials = _special_tokens(required(d, "special_tokens", dict, path), join(path, "special_tokens"))
        return cls(templates[0], templates[1], specials)

    def _count_added(self, template: list[Piece]) -> int:
        return sum(len(self.special_tokens[p[1]][0]) for p in template
                   if p[0] == "special" and p[1] in self.special_tokens)

    def _plan(self, template: list[Piece], add_special: bool) -> list[PlanItem]:
        plan: list[PlanItem] = []
        for kind, ref, _ in template:
            if kind == "seq":
                plan.append(ref)
            elif add_special:
                entry = self.special_tokens.get(ref)
                plan.append(ref if entry is None else entry[0])
        return plan

    def added_tokens(self, is_pair: bool) -> int:
        return self._added[is_pair]

    def process_ids(self, a: list[int], b: list[int] | None, add_special: bool) -> list[int]:
        sequences = [a] if b is None else [a, b]
        out: list[int] = []
        for item in self._plans[b is not None, add_special]:
            if isinstance(item, int):
                out += self._sequence(sequences, item)
            elif isinstance(item, list):
                out += item
            else:
                raise self._missing(item)
        return out

    def process_id_lists(self, sequences: list[list[int]], add_special: bool) -> list[list[int]]:
        out: list[list[int]] = []
        for item in self._plans[self._is_pair(sequences), add_special]:
            if isinstance(item, int):
                out.append(self._sequence(sequences, item))
            elif isinstance(item, list):
                out.append(list(item))
            else:
                raise self._missing(item)
        return out

    def process_encodings(self, encodings: list[Encoding], add_special: bool) -> list[Encoding]:
        template = self.pair if self._is_pair(encodings) else self.single
        out: list[Encoding] = []
        for kind, ref, type_id in template:
            if kind == "seq":
                enc = self._sequence(encodings, ref)
                n = len(enc.ids)
                # subtle: only the main encoding is retyped; its overflows keep their type ids
                out.append(replace(enc, type_ids=[type_id] * n, sequence_ranges={**enc.sequence_ranges, ref: (0, n)}))
            elif add_special:
                entry = self.special_tokens.get(ref)
                if entry is None:
                    raise self._missing(ref)
                out.append(special_tokens_encoding(entry[0], entry[1], type_id))
        return out

    @staticmethod
    def _is_pair(sequences: list[Any]) -> bool:
        if len(sequences) not in (1, 2):
            raise EncodeError(f"TemplateProcessing takes one or two sequences, got {len(sequences)} "
                              "(the reference panics)")
        return len(sequences) == 2

    @staticmethod
    def _sequence(sequences: list[Any], index: int) -> Any:
        if index >= len(sequences):
            raise EncodeError("the single-sequence template of TemplateProcessing uses $B "
                              "(the reference panics: index out of bounds)")
        return sequences[index]

    @staticmethod
    def _missing(name: str) -> EncodeError:
        return EncodeError(f"TemplateProcessing: special token {name!r} is not in special_tokens "
                           "(the reference panics: no entry found for key)")
