"""`Encoding`: the rich result of `Tokenizer.encode_full`, and the operations on it.

Reproduces HF tokenizers 0.23.3 ``tokenizers/src/tokenizer/encoding.rs``
(``Encoding::truncate``, ``merge_with``, ``pad``, ``set_sequence_id``) with the
Python binding's conventions: offsets are character offsets into the input.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

Span = tuple[int, int]


@dataclass(frozen=True, slots=True)
class Encoding:
    """One encoded sequence (or pair), as HF's ``Encoding``.

    Attributes:
        ids: token ids.
        tokens: the token strings (model pieces, or the matched text of added tokens).
        offsets: ``(start, end)`` character offsets into the input text (for a
            pair, the second sequence's offsets are relative to its own text).
        word_ids: the pre-token index each token came from; None for special tokens and padding.
        type_ids: segment ids.
        special_tokens_mask: 1 for tokens added by post-processing or padding.
        attention_mask: 0 for padding.
        overflowing: the windows cut off by truncation.
        sequence_ranges: sequence id → ``(start, end)`` token range.
    """

    ids: list[int]
    tokens: list[str]
    offsets: list[Span]
    word_ids: list[int | None]
    type_ids: list[int]
    special_tokens_mask: list[int]
    attention_mask: list[int]
    overflowing: list[Encoding] = field(default_factory=list)
    sequence_ranges: dict[int, Span] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.ids)

    @property
    def sequence_ids(self) -> list[int | None]:
        """Per token, the index of the sequence it belongs to (None for special tokens).

        As HF ``get_sequence_ids``: sequences ``0 .. len(ranges)`` (at least one)
        are looked up, and a missing one covers the whole encoding.
        """
        n = len(self.ids)
        out: list[int | None] = [None] * n
        for seq in range(len(self.sequence_ranges) or 1):
            start, end = self.sequence_ranges.get(seq, (0, n))
            out[start:end] = [seq] * (end - start)
        return out

    @classmethod
    def empty(cls) -> Encoding:
        return cls([], [], [], [], [], [], [])


def concat(parts: list[Encoding]) -> Encoding:
    """Concatenate encodings, HF ``Encoding::merge(encodings, growing_offsets=false)``."""
    out = Encoding.empty()
    for part in parts:
        out = merge_with(out, part)
    return out


def merge_with(a: Encoding, b: Encoding) -> Encoding:
    """`a` followed by `b`; overflows combine as HF ``merge_with`` does (offsets not shifted)."""
    overflowing: list[Encoding] = []
    for a_o in a.overflowing:
        overflowing.append(merge_with(a_o, b))
        for b_o in b.overflowing:
            overflowing.append(merge_with(a_o, b_o))
    for b_o in b.overflowing:
        overflowing.append(merge_with(a, b_o))
    n = len(a.ids)
    ranges = dict(a.sequence_ranges)
    ranges.update({seq: (s + n, e + n) for seq, (s, e) in b.sequence_ranges.items()})
    return Encoding(
        a.ids + b.ids, a.tokens + b.tokens, a.offsets + b.offsets, a.word_ids + b.word_ids,
        a.type_ids + b.type_ids, a.special_tokens_mask + b.special_tokens_mask,
        a.attention_mask + b.attention_mask, overflowing, ranges,
    )


def with_sequence(enc: Encoding, seq_id: int, type_id: int) -> Encoding:
    """Mark all of `enc` (and its overflows) as sequence `seq_id` with type `type_id`."""
    return replace(
        enc,
        type_ids=[type_id] * len(enc.ids),
        sequence_ranges={seq_id: (0, len(enc.ids))},
        overflowing=[with_sequence(o, seq_id, type_id) for o in enc.overflowing],
    )


def _window(enc: Encoding, start: int, stop: int) -> Encoding:
    return Encoding(
        enc.ids[start:stop], enc.tokens[start:stop], enc.offsets[start:stop], enc.word_ids[start:stop],
        enc.type_ids[start:stop], enc.special_tokens_mask[start:stop], enc.attention_mask[start:stop],
    )


def window_ranges(n: int, max_len: int, stride: int, direction: str) -> list[Span]:
    """The windows HF ``Encoding::truncate`` cuts a length-`n` sequence into (first = kept)."""
    step = max_len - stride
    ranges: list[Span] = []
    if direction == "right":
        for start in range(0, n, step):
            stop = min(start + max_len, n)
            ranges.append((start, stop))
            if stop == n:
                break
    else:
        for last in range(n - 1, -1, -step):
            stop = last + 1
            start = max(0, stop - max_len)
            ranges.append((start, stop))
            if start == 0:
                break
    return ranges


def truncate(enc: Encoding, max_len: int, stride: int, direction: str) -> Encoding:
    """Cut `enc` to `max_len` tokens; the rest goes to `overflowing` in stride windows."""
    n = len(enc.ids)
    if max_len >= n:
        return enc
    if max_len == 0:
        return replace(Encoding.empty(), overflowing=[enc])
    if stride >= max_len:
        from .errors import EncodeError
        raise EncodeError(f"truncation stride ({stride}) must be less than the length left "
                          f"for the sequence ({max_len})")
    ranges = window_ranges(n, max_len, stride, direction)
    first = _window(enc, *ranges[0])
    return replace(first, overflowing=[_window(enc, s, e) for s, e in ranges[1:]])


def pad(enc: Encoding, target: int, pad_id: int, pad_type_id: int, pad_token: str, direction: str) -> Encoding:
    """Pad `enc` (and its overflows) to `target` tokens on the `direction` side."""
    overflowing = [pad(o, target, pad_id, pad_type_id, pad_token, direction) for o in enc.overflowing]
    k = target - len(enc.ids)
    no_words: list[int | None] = [None] * k
    if k <= 0:
        return replace(enc, overflowing=overflowing)
    if direction == "left":
        ranges = {seq: (s + k, e + k) for seq, (s, e) in enc.sequence_ranges.items()}
        return Encoding(
            [pad_id] * k + enc.ids, [pad_token] * k + enc.tokens, [(0, 0)] * k + enc.offsets,
            no_words + enc.word_ids, [pad_type_id] * k + enc.type_ids, [1] * k + enc.special_tokens_mask,
            [0] * k + enc.attention_mask, overflowing, ranges,
        )
    return Encoding(
        enc.ids + [pad_id] * k, enc.tokens + [pad_token] * k, enc.offsets + [(0, 0)] * k,
        enc.word_ids + no_words, enc.type_ids + [pad_type_id] * k, enc.special_tokens_mask + [1] * k,
        enc.attention_mask + [0] * k, overflowing, dict(enc.sequence_ranges),
    )


def special_tokens_encoding(ids: list[int], tokens: list[str], type_id: int) -> Encoding:
    """Tokens inserted by a post-processor: no word, empty offsets, special mask 1."""
    n = len(ids)
    return Encoding(list(ids), list(tokens), [(0, 0)] * n, [None] * n, [type_id] * n, [1] * n, [1] * n)
