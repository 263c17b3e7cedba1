"""NFD normalizer: Unicode normalization form NFD (canonical decomposition).

Stage: normalizer. JSON: ``{"type": "NFD"}`` (no options; other keys are ignored).

Reproduces HF tokenizers 0.23.3 ``tokenizers/src/normalizers/unicode.rs``
(``NFD::normalize`` -> ``NormalizedString::nfd`` in ``tokenizer/normalizer.rs``),
including HF's older Unicode data (code points newer than it are left alone);
the algorithm and the frozen data live in `polytok.text.unicode_norm`.
Every character of a decomposition maps to the whole source character.
"""

from __future__ import annotations

from ._unicode_form import UnicodeForm


class NFD(UnicodeForm):
    form = "NFD"
