"""Harness for the post-processor tests: reference tokenizers, their pre-post-processing state, comparison.

For every case two reference tokenizers share a model and pre-tokenizer: `full`
has the post-processor under test, `plain` has none. The polytok processor's
input is built from `plain`'s own ``encode(..., add_special_tokens=False)``
output (the reference's state before post-processing; for a pair, each
sequence encoded alone, with type ids 1 set on B as the pipeline does), and its
output is compared, field by field and overflow by overflow, with `full`'s
encode. Under truncation each sequence is cut to the budget HF's
``truncate_encodings`` gives it (computed here from the lengths).
"""

from __future__ import annotations

import gzip
import json
from dataclasses import replace
from functools import lru_cache
from pathlib import Path
from typing import Any

import pytest

import polytok.post_processors
from polytok.encoding import Encoding
from polytok.errors import PolytokError

tokenizers = pytest.importorskip("tokenizers")

SHARED = Path(__file__).resolve().parents[2].parent / "shared" / "fixtures"


@lru_cache(maxsize=1)
def edge_texts() -> tuple[str, ...]:
    path = SHARED / "texts" / "edge_cases.jsonl"
    if not path.is_file():
        return ()
    return tuple(json.loads(line)["text"] for line in path.read_text(encoding="utf-8").splitlines() if line.strip())


@lru_cache(maxsize=3)
def tokenizer_json(name: str) -> dict[str, Any]:
    folder = SHARED / "tokenizers" / name
    plain, packed = folder / "tokenizer.json", folder / "tokenizer.json.gz"
    if plain.is_file():
        return json.loads(plain.read_text(encoding="utf-8"))  # type: ignore[no-any-return]
    if packed.is_file():
        return json.loads(gzip.decompress(packed.read_bytes()))  # type: ignore[no-any-return]
    pytest.skip(f"shared fixture {name} absent")


def processor_json(processor: Any) -> dict[str, Any]:
    if isinstance(processor, dict):
        return processor
    return json.loads(processor.__getstate__())  # type: ignore[no-any-return]


class Setup:
    """Reference `plain`/`full` tokenizers and the polytok processor for one post-processor JSON."""

    def __init__(self, base: dict[str, Any], processor: Any) -> None:
        self.config = processor_json(processor)
        self.plain = tokenizers.Tokenizer.from_str(json.dumps({**base, "post_processor": None}))
        self.full = tokenizers.Tokenizer.from_str(json.dumps({**base, "post_processor": self.config}))
        self.ours = polytok.post_processors.from_config(self.config, "post_processor")


def to_polytok(e: Any, type_id: int) -> Encoding:
    return Encoding(
        list(e.ids), list(e.tokens), [tuple(o) for o in e.offsets], list(e.word_ids), [type_id] * len(e.ids),
        list(e.special_tokens_mask), list(e.attention_mask), [to_polytok(o, type_id) for o in e.overflowing], {},
    )


def ref_fields(e: Any) -> dict[str, Any]:
    return {"ids": e.ids, "tokens": e.tokens, "type_ids": e.type_ids, "offsets": [tuple(o) for o in e.offsets],
            "word_ids": e.word_ids, "special_tokens_mask": e.special_tokens_mask,
            "attention_mask": e.attention_mask, "sequence_ids": e.sequence_ids,
            "overflowing": [ref_fields(o) for o in e.overflowing]}


def our_fields(e: Encoding) -> dict[str, Any]:
    return {"ids": e.ids, "tokens": e.tokens, "type_ids": e.type_ids, "offsets": list(e.offsets),
            "word_ids": e.word_ids, "special_tokens_mask": e.special_tokens_mask,
            "attention_mask": e.attention_mask, "sequence_ids": e.sequence_ids,
            "overflowing": [our_fields(o) for o in e.overflowing]}


def assert_fields(actual: dict[str, Any], expected: dict[str, Any], context: str, where: str = "") -> None:
    """Equal fields, else an error naming the first differing field (overflows recursively)."""
    for key, want in expected.items():
        got = actual[key]
        if key == "overflowing":
            assert len(got) == len(want), f"{context}: {where}{len(got)} overflows, expected {len(want)}"
            for i, (g, w) in enumerate(zip(got, want)):
                assert_fields(g, w, context, f"{where}overflowing[{i}].")
        else:
            assert got == want, f"{context}: {where}{key}\n  expected {want}\n  actual   {got}"


def budgets(la: int, lb: int | None, max_length: int, strategy: str) -> tuple[int | None, int | None]:
    """Per-sequence lengths HF ``truncate_encodings`` cuts to (None: untouched)."""
    if max_length == 0:
        return 0, (None if lb is None else 0)
    total = la + (lb or 0)
    if total <= max_length:
        return None, None
    if lb is None:
        return max_length, None
    if strategy == "longest_first":
        n1, n2 = sorted((la, lb))
        n2 = n1 if n1 > max_length else max(n1, max_length - n1)
        if n1 + n2 > max_length:
            n1 = max_length // 2
            n2 = n1 + max_length % 2
        return (n2, n1) if la > lb else (n1, n2)
    excess = total - max_length
    if strategy == "only_first":
        return la - excess, None
    return None, lb - excess


def _pre(setup: Setup, text: Any, budget: int | None, trunc: dict[str, Any] | None, pretok: bool,
         type_id: int) -> Encoding:
    plain = setup.plain
    plain.no_truncation()
    whole = to_polytok(plain.encode(text, is_pretokenized=pretok, add_special_tokens=False), type_id)
    if budget is None or trunc is None or budget >= len(whole):
        return whole
    if budget == 0:
        return replace(Encoding.empty(), overflowing=[whole])
    plain.enable_truncation(budget, stride=trunc.get("stride", 0), direction=trunc.get("direction", "right"))
    return to_polytok(plain.encode(text, is_pretokenized=pretok, add_special_tokens=False), type_id)


def check(setup: Setup, a: Any, b: Any = None, add_special: bool = True, trunc: dict[str, Any] | None = None,
          pretok: bool = False) -> str:
    """Compare one case; returns "skip" when the reference itself cannot truncate it."""
    full = setup.full
    full.no_truncation()
    try:
        if trunc is not None:
            full.enable_truncation(**trunc)
        expected = full.encode(a, b, is_pretokenized=pretok, add_special_tokens=add_special)
    except BaseException as exc:
        if trunc is not None:
            return "skip"
        enc_a, enc_b = inputs(setup, a, b, add_special, None, pretok)
        with pytest.raises(PolytokError):
            setup.ours.process(enc_a, enc_b, add_special)
        with pytest.raises(PolytokError):
            setup.ours.process_ids(enc_a.ids, None if enc_b is None else enc_b.ids, add_special)
        return f"both raise ({type(exc).__name__})"
    enc_a, enc_b = inputs(setup, a, b, add_special, trunc, pretok)
    ids = setup.ours.process_ids(enc_a.ids, None if enc_b is None else enc_b.ids, add_special)
    actual = setup.ours.process(enc_a, enc_b, add_special)
    context = f"a={a!r} b={b!r} add_special={add_special} trunc={trunc}"
    assert_fields(our_fields(actual), ref_fields(expected), context)
    assert ids == expected.ids, context
    return "ok"


def inputs(setup: Setup, a: Any, b: Any, add_special: bool, trunc: dict[str, Any] | None,
           pretok: bool) -> tuple[Encoding, Encoding | None]:
    """The reference's pre-post-processing encodings of `a` and `b`, cut as HF's truncation cuts them."""
    la_lb: tuple[int | None, int | None] = (None, None)
    if trunc is not None:
        setup.plain.no_truncation()
        n_a = len(setup.plain.encode(a, is_pretokenized=pretok, add_special_tokens=False))
        n_b = None if b is None else len(setup.plain.encode(b, is_pretokenized=pretok, add_special_tokens=False))
        reserved = setup.full.post_processor.num_special_tokens_to_add(b is not None) if add_special else 0
        # subtle: HF's usize subtraction wraps when the specials outnumber max_length: no truncation at all
        if reserved <= trunc["max_length"]:
            la_lb = budgets(n_a, n_b, trunc["max_length"] - reserved, trunc.get("strategy", "longest_first"))
    enc_a = _pre(setup, a, la_lb[0], trunc, pretok, 0)
    enc_b = None if b is None else _pre(setup, b, la_lb[1], trunc, pretok, 1)
    return enc_a, enc_b


def check_many(setup: Setup, singles: list[Any], pairs: list[tuple[Any, Any]], truncs: list[Any],
               pretok: bool = False) -> dict[str, int]:
    """Every input × add_special × truncation; returns a tally of outcomes (asserts on mismatch)."""
    tally: dict[str, int] = {}
    for trunc in truncs:
        for add_special in (True, False):
            for a in singles:
                outcome = check(setup, a, None, add_special, trunc, pretok)
                tally[outcome] = tally.get(outcome, 0) + 1
            for a, b in pairs:
                outcome = check(setup, a, b, add_special, trunc, pretok)
                tally[outcome] = tally.get(outcome, 0) + 1
    assert setup.ours.added_tokens(False) == setup.full.post_processor.num_special_tokens_to_add(False)
    assert setup.ours.added_tokens(True) == setup.full.post_processor.num_special_tokens_to_add(True)
    return tally


def word_level_base(words: list[str], specials: list[str]) -> dict[str, Any]:
    """A WordLevel model over `words` + `specials` with the Whitespace pre-tokenizer."""
    vocab = {w: i for i, w in enumerate(["[UNK]", *specials, *words])}
    tok = tokenizers.Tokenizer(tokenizers.models.WordLevel(vocab, unk_token="[UNK]"))
    tok.pre_tokenizer = tokenizers.pre_tokenizers.Whitespace()
    return json.loads(tok.to_str())  # type: ignore[no-any-return]


def byte_level_base(texts: list[str], add_prefix_space: bool, added: list[Any] = (),
                    normalizer: Any = None) -> dict[str, Any]:
    """Byte-level WordLevel: split on '|' (removed), then ByteLevel without its regex.

    The vocabulary holds exactly the reference pre-tokenizer's pieces for
    `texts`, so tokens such as ``Ġ``, ``ĠĠhi`` or ``hiĠ`` reach the post-processor.
    """
    pre = tokenizers.pre_tokenizers.Sequence([
        tokenizers.pre_tokenizers.Split("|", "removed"),
        tokenizers.pre_tokenizers.ByteLevel(add_prefix_space=add_prefix_space, use_regex=False),
    ])
    contents = [a if isinstance(a, str) else a.content for a in added]
    for content in contents:
        texts = [t.replace(content, "|") for t in texts]  # the added token splits the text there
    if normalizer is not None:
        texts = [normalizer.normalize_str(t) for t in texts]
    pieces = sorted({p for t in texts for p, _ in pre.pre_tokenize_str(t)})
    vocab = {w: i for i, w in enumerate(["[UNK]", "<s>", "</s>", *pieces])}
    tok = tokenizers.Tokenizer(tokenizers.models.WordLevel(vocab, unk_token="[UNK]"))
    tok.pre_tokenizer = pre
    tok.normalizer = normalizer
    if added:
        tok.add_tokens(list(added))
    return json.loads(tok.to_str())  # type: ignore[no-any-return]


TRUNCATIONS: list[Any] = [
    None,
    {"max_length": 6, "stride": 1},
    {"max_length": 5, "stride": 2, "direction": "left"},
    {"max_length": 7, "stride": 0, "strategy": "only_first"},
    {"max_length": 7, "stride": 1, "strategy": "only_second", "direction": "left"},
    {"max_length": 4, "stride": 0},
]
