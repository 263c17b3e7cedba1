"""`Tokenizer.__call__`: a text or a batch in, a `BatchEncoding` of padded arrays out, as transformers.

Reproduces transformers 5.24.0 for a ``tokenizer.json`` folder
(``AutoTokenizer.from_pretrained(folder)(texts, …)``):

- ``tokenization_utils_base.py`` ``PreTrainedTokenizerBase.__call__`` and
  ``_get_padding_truncation_strategies``: ``max_length`` alone turns truncation on
  (``longest_first``); ``padding="max_length"`` or truncation without ``max_length``
  use ``model_max_length``, or are dropped when it is above 1e20; padding without a
  pad token is refused; truncation and padding together need ``max_length`` to be a
  multiple of ``pad_to_multiple_of``;
- ``tokenization_utils_tokenizers.py`` ``TokenizersBackend._encode_plus`` and
  ``set_truncation_and_padding``: the call's truncation and padding replace the
  ``tokenizer.json``'s own (which a call never applies), a single text gives flat lists,
  a single text with an empty pair is encoded without a pair, and an empty batch
  is refused (an ``IndexError`` there);
  ``_convert_encoding``: ``token_type_ids`` and ``attention_mask`` are returned when the
  class's ``model_input_names`` hold them (`call_settings`), unless asked otherwise;
  ``length`` counts the padding;
- ``BatchEncoding.convert_to_tensors``: ``"np"`` gives ``numpy.asarray`` of the lists
  (``int64``; an object array of rows when they differ in length), ``"pt"``
  ``torch.tensor`` (rows of different lengths are an error there).

The pipeline is the one transformers builds for the folder's tokenizer class
(`transformers_classes.as_transformers`: the file's own where the class keeps it). The
ids come from `Tokenizer.encode_batch` (the compiled pipeline where it applies) on
a shallow copy carrying the call's truncation; type ids and the special-tokens mask from
each sequence's ids and the post-processor's layout (`sequence_layout`); offsets from
`Tokenizer.encode_full`. numpy and torch are
imported only when ``return_tensors`` names them.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..encoding import Encoding, pad
from ..errors import EncodeError
from ..truncation import Padding, Truncation
from .call_settings import LARGE_INTEGER, CallSettings, call_settings
from .inputs import parses_special
from .sequence_layout import cut, layout, rows
from .transformers_classes import as_transformers

if TYPE_CHECKING:
    from ..special import SpecialTokens
    from .tokenizer import Tokenizer

__all__ = ["BatchEncoding", "encode_call"]

_PADDINGS = {True: "longest", False: "do_not_pad", "longest": "longest", "max_length": "max_length",
             "do_not_pad": "do_not_pad"}
_TRUNCATIONS = {True: "longest_first", False: "do_not_truncate", None: "do_not_truncate",
                "longest_first": "longest_first", "only_first": "only_first", "only_second": "only_second",
                "do_not_truncate": "do_not_truncate"}
_ALIASES = {"text_pair": "pair", "add_special_tokens": "add_special", "return_offsets_mapping": "return_offsets"}


class BatchEncoding(dict[str, Any]):
    """The arrays of a call by name (``input_ids``, ``attention_mask``, …), also as attributes
    (``enc.input_ids``), as transformers' ``BatchEncoding`` holds them."""

    def __getattr__(self, name: str) -> Any:
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None

    def to(self, device: Any, *, non_blocking: bool = False) -> BatchEncoding:
        """Move every tensor to `device` (torch's ``Tensor.to``); other values stay as they are."""
        for key, value in self.items():
            if callable(getattr(value, "to", None)):
                self[key] = value.to(device=device, non_blocking=non_blocking)
        return self


@dataclass(frozen=True, slots=True)
class _Plan:
    """The call's strategies once transformers' rules have resolved them."""

    padding: Padding | None
    truncation: Truncation | None


def encode_call(tok: Tokenizer, text: str | Sequence[str], pair: str | Sequence[str] | None = None, *,
                add_special: bool = True, padding: bool | str = False, truncation: bool | str | None = None,
                max_length: int | None = None, stride: int = 0, pad_to_multiple_of: int | None = None,
                padding_side: str | None = None, return_tensors: str | None = None,
                return_attention_mask: bool | None = None, return_token_type_ids: bool | None = None,
                return_offsets: bool = False, return_special_tokens_mask: bool = False,
                return_length: bool = False, special: SpecialTokens | str | None = None,
                **aliases: Any) -> BatchEncoding:
    """`tok(text, pair, …)`: see `Tokenizer.__call__` and the module notes."""
    for name, value in aliases.items():
        if name not in _ALIASES:
            raise TypeError(f"unexpected keyword argument {name!r}")
        if _ALIASES[name] == "pair":
            pair = value
        elif _ALIASES[name] == "add_special":
            add_special = value
        else:
            return_offsets = value
    if return_tensors not in (None, "np", "pt"):
        raise ValueError(f"return_tensors must be None, 'np' or 'pt', not {return_tensors!r}")
    settings = call_settings(tok)
    tok = as_transformers(tok)  # the pipeline transformers builds for the folder's class
    plan = _plan(settings, padding, truncation, max_length, stride, pad_to_multiple_of, padding_side)
    batched, items = _items(text, pair)
    names = settings.model_input_names
    with_types = "token_type_ids" in names if return_token_type_ids is None else return_token_type_ids
    with_mask = "attention_mask" in names if return_attention_mask is None else return_attention_mask
    found = None
    if not return_offsets and (with_types or return_special_tokens_mask):
        found = _typed(tok, plan.truncation, items, add_special, special)
    if found is not None:
        data = _from_rows(found, plan.padding, with_types, with_mask, return_special_tokens_mask)
    elif with_types or return_offsets or return_special_tokens_mask:
        encodings = [tok.encode_full(a, pair=b, add_special=add_special, special=special,
                                     truncation=plan.truncation or False, padding=False) for a, b in items]
        if plan.padding is not None:
            target = plan.padding.target([len(e) for e in encodings])
            p = plan.padding
            encodings = [pad(e, target, p.pad_id, p.pad_type_id, p.pad_token, p.direction) for e in encodings]
        data = _from_encodings(encodings, with_types, with_mask, return_offsets, return_special_tokens_mask)
    else:
        batch = _ids(tok, plan.truncation, items, add_special, special)
        data = _from_rows([(ids, [], []) for ids in batch], plan.padding, False, with_mask, False)
    if return_length:
        data["length"] = [len(ids) for ids in data["input_ids"]]
    if return_tensors is not None:
        return BatchEncoding({key: _tensor(key, value, return_tensors) for key, value in data.items()})
    if not batched:
        return BatchEncoding({key: value[0] if value and isinstance(value[0], list) else value
                              for key, value in data.items()})
    return BatchEncoding(data)


def _plan(settings: CallSettings, padding: bool | str, truncation: bool | str | None, max_length: int | None,
          stride: int, multiple: int | None, padding_side: str | None) -> _Plan:
    """transformers' ``_get_padding_truncation_strategies`` and ``set_truncation_and_padding``."""
    if max_length is not None and padding is False and truncation is None:
        truncation = "longest_first"  # transformers: max_length alone truncates
    pad_strategy = _choice(_PADDINGS, padding, "padding")
    cut_strategy = _choice(_TRUNCATIONS, truncation, "truncation")
    if max_length is None:
        limit = settings.model_max_length if settings.model_max_length <= LARGE_INTEGER else None
        if pad_strategy == "max_length":
            pad_strategy = "max_length" if limit is not None else "do_not_pad"
        if cut_strategy != "do_not_truncate":
            cut_strategy = cut_strategy if limit is not None else "do_not_truncate"
        if limit is not None and (pad_strategy == "max_length" or cut_strategy != "do_not_truncate"):
            max_length = limit
    if pad_strategy != "do_not_pad" and (settings.pad_token is None or settings.pad_id is None):
        raise EncodeError("asking to pad, but the tokenizer has no pad token (tokenizer_config.json pad_token)")
    if (cut_strategy != "do_not_truncate" and pad_strategy != "do_not_pad" and multiple is not None
            and max_length is not None and max_length % multiple):
        raise EncodeError(f"truncation and padding are both on, but the truncation length ({max_length}) is not a "
                          f"multiple of pad_to_multiple_of ({multiple})")
    cut = None
    if cut_strategy != "do_not_truncate":
        assert max_length is not None
        cut = Truncation(max_length, stride, cut_strategy, settings.truncation_side)  # type: ignore[arg-type]
    filling = None
    if pad_strategy != "do_not_pad":
        side = padding_side if padding_side is not None else settings.padding_side
        if side not in ("left", "right"):
            raise ValueError(f"padding_side must be 'left' or 'right', not {side!r}")
        assert settings.pad_id is not None and settings.pad_token is not None
        filling = Padding(max_length if pad_strategy == "max_length" else None, side,  # type: ignore[arg-type]
                          multiple, settings.pad_id, 0, settings.pad_token)
    return _Plan(filling, cut)


def _choice(table: dict[Any, str], value: Any, name: str) -> str:
    try:
        return table[value]
    except (KeyError, TypeError):
        known = ", ".join(repr(k) for k in table)
        raise ValueError(f"{name} must be one of {known}, not {value!r}") from None


def _items(text: Any, pair: Any) -> tuple[bool, list[tuple[str, str | None]]]:
    """Whether the input is a batch, and its (text, pair) items (transformers' ``_encode_plus``)."""
    if isinstance(text, str):
        if pair is not None and not isinstance(pair, str):
            raise TypeError(f"a single text takes a str pair, not {type(pair).__name__}")
        return False, [(text, pair if pair else None)]  # (an empty pair is no pair there)
    if not isinstance(text, (list, tuple)):
        raise TypeError(f"text must be a str or a list of str, not {type(text).__name__}")
    if not text:
        raise ValueError("an empty batch: there is nothing to encode (transformers raises too)")
    for i, item in enumerate(text):
        if not isinstance(item, str):
            raise TypeError(f"text[{i}]: expected a str, not {type(item).__name__}")
    if pair is None:
        return True, [(t, None) for t in text]
    if isinstance(pair, str) or not isinstance(pair, (list, tuple)):
        raise TypeError("a batch of texts takes a list of pairs of the same length")
    if len(pair) != len(text):
        raise ValueError(f"{len(text)} texts but {len(pair)} pairs")
    for i, item in enumerate(pair):
        if not isinstance(item, str):
            raise TypeError(f"pair[{i}]: expected a str, not {type(item).__name__}")
    return True, list(zip(text, pair))


def _ids(tok: Tokenizer, truncation: Truncation | None, items: list[tuple[str, str | None]], add_special: bool,
         special: SpecialTokens | str | None) -> list[list[int]]:
    """The ids of each item with the call's truncation and no padding."""
    if tok.truncation != truncation or tok.padding is not None:
        tok.batch_pipeline(parses_special(tok.default_special if special is None else special))  # (the copy shares it)
        tok = copy.copy(tok)
        tok.truncation, tok.padding = truncation, None
    if all(b is None for _, b in items):
        return tok.encode_batch([a for a, _ in items], add_special=add_special, special=special)
    return [tok.encode(a, pair=b, add_special=add_special, special=special) for a, b in items]


def _typed(tok: Tokenizer, truncation: Truncation | None, items: list[tuple[str, str | None]], add_special: bool,
           special: SpecialTokens | str | None) -> list[tuple[list[int], list[int], list[int]]] | None:
    """Each item's ids, type ids and special-tokens mask without `encode_full` (`sequence_layout`):
    each sequence's ids from `encode_batch` with no truncation, padding or post-processor, cut
    by the call's truncation, laid out as the post-processor lays out marker sequences."""
    plans = {is_pair: layout(tok.post_processor, is_pair, add_special) for is_pair in {b is not None for _, b in items}}
    if any(plan is None for plan in plans.values()):
        return None
    raw = _bare(tok, parses_special(tok.default_special if special is None else special))
    firsts = raw.encode_batch([a for a, _ in items], add_special=False, special=special)
    seconds = iter(raw.encode_batch([b for _, b in items if b is not None], add_special=False, special=special))
    out = []
    for (_, b), ids_a in zip(items, firsts):
        ids_b = next(seconds) if b is not None else None
        if truncation is not None:
            la, lb = truncation.lengths(len(ids_a), None if ids_b is None else len(ids_b),
                                        tok.added_count(ids_b is not None, add_special=add_special))
            ids_a = cut(ids_a, la, truncation)
            if ids_b is not None and lb is not None:
                ids_b = cut(ids_b, lb, truncation)
        plan = plans[ids_b is not None]
        assert plan is not None
        out.append(rows(plan, ids_a, ids_b))
    return out


def _bare(tok: Tokenizer, parse_special: bool) -> Tokenizer:
    """`tok` without truncation, padding and post-processor (a shallow copy where it has any)."""
    if tok.truncation is None and tok.padding is None and tok.post_processor is None:
        return tok
    tok.batch_pipeline(parse_special)  # (built once on `tok`, so the copy shares it)
    bare = copy.copy(tok)
    bare.truncation = bare.padding = bare.post_processor = None
    return bare


def _from_rows(found: list[tuple[list[int], list[int], list[int]]], padding: Padding | None, with_types: bool,
               with_mask: bool, special_mask: bool) -> dict[str, Any]:
    """The arrays of (ids, type ids, special-tokens mask) rows, padded as `encoding.pad` pads."""
    data: dict[str, Any] = {"input_ids": [r[0] for r in found]}
    if with_types:
        data["token_type_ids"] = [r[1] for r in found]
    if with_mask:
        data["attention_mask"] = [[1] * len(r[0]) for r in found]
    if special_mask:
        data["special_tokens_mask"] = [r[2] for r in found]
    if padding is None:
        return data
    target = padding.target([len(r[0]) for r in found])
    fills = {"input_ids": padding.pad_id, "token_type_ids": padding.pad_type_id, "attention_mask": 0,
             "special_tokens_mask": 1}
    left = padding.direction == "left"
    for key, batch in data.items():
        for i, row in enumerate(batch):
            k = target - len(row)
            if k > 0:
                fill = [fills[key]] * k
                batch[i] = fill + row if left else row + fill
    return data


def _from_encodings(encodings: list[Encoding], with_types: bool, with_mask: bool, offsets: bool,
                    special_mask: bool) -> dict[str, Any]:
    data: dict[str, Any] = {"input_ids": [e.ids for e in encodings]}
    if with_types:
        data["token_type_ids"] = [e.type_ids for e in encodings]
    if with_mask:
        data["attention_mask"] = [e.attention_mask for e in encodings]
    if special_mask:
        data["special_tokens_mask"] = [e.special_tokens_mask for e in encodings]
    if offsets:
        data["offset_mapping"] = [list(e.offsets) for e in encodings]
    return data


def _tensor(key: str, value: list[Any], kind: str) -> Any:
    """transformers' ``convert_to_tensors`` of one array."""
    try:
        if kind == "np":
            import numpy as np
        else:
            import torch
    except ImportError:
        package = "numpy" if kind == "np" else "torch"
        raise ImportError(f"return_tensors={kind!r} needs {package}, which is not installed") from None
    ragged = len({len(row) for row in value if isinstance(row, list)}) > 1
    if kind == "np":
        if ragged:
            return np.asarray([np.asarray(row) for row in value], dtype=object)
        return np.asarray(value, dtype=np.int64 if not value else None)
    if ragged:
        raise ValueError(f"cannot make one tensor of {key!r}: its rows differ in length; "
                         "pass padding=True (and truncation=True) for rows of one length")
    return torch.tensor(value, dtype=torch.int64 if not value else None)
