"""polytok.text.unicode_norm and the frozen tables in polytok.text.unicode_tables.

The tables were generated from the live `tokenizers` (tools/gen_unicode_tables.py);
these tests re-check them against it, and check that the offsets path of each
form produces the same text as the fast path.
"""

from __future__ import annotations

import unicodedata

import pytest

from polytok.text import unicode_norm, unicode_tables

from . import _unicode_cases
from ._harness import all_code_points

tokenizers = pytest.importorskip("tokenizers")


def test_tables_record_their_sources():
    assert tokenizers.__version__ == unicode_tables.TOKENIZERS_VERSION


@pytest.mark.skipif(unicodedata.unidata_version != unicode_tables.UNIDATA_VERSION,
                    reason="NORM_INERT is relative to another unicodedata version")
def test_scan_reproduces_the_frozen_inert_set():
    # the fallback used under another unicodedata version, run under this one
    assert tuple(unicode_norm.scan_inert()) == unicode_tables.NORM_INERT


@pytest.mark.parametrize("form", unicode_norm.FORMS)
def test_changes_give_the_fast_path_text(form):
    for text in _unicode_cases.texts() + [all_code_points(step=13)]:
        changes = unicode_norm.normalize_changes(form, text)
        assert "".join(c for c, _ in changes) == unicode_norm.normalize(form, text), text


@pytest.mark.parametrize("form", unicode_norm.FORMS)
def test_inert_code_points_are_starters(form):
    ref = getattr(tokenizers.normalizers, form)()
    for first, last in unicode_tables.NORM_INERT:
        for cp in range(first, last + 1):
            # the mark after it must not be reordered before it nor composed across it
            text = "a" + chr(cp) + "\u0334\u0301 e" + chr(cp) + "\u0301"
            assert unicode_norm.normalize(form, text) == ref.normalize_str(text)


def test_lowercase_every_code_point():
    text = all_code_points()
    assert unicode_norm.lowercase(text) == tokenizers.normalizers.Lowercase().normalize_str(text)
    sample = all_code_points(step=5)
    assert "".join(c for c, _ in unicode_norm.lowercase_changes(sample)) == unicode_norm.lowercase(sample)


@pytest.mark.parametrize("text,expected", [("ΟΔΟΣ", "οδοσ"), ("Σ ΑΣ. ΣΣ", "σ ασ. σσ"), ("İ", "i\u0307")])
def test_lowercase_has_no_context_rules(text, expected):
    assert unicode_norm.lowercase(text) == expected
    assert tokenizers.normalizers.Lowercase().normalize_str(text) == expected
