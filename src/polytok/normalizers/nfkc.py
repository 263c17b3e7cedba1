"""NFKC normalizer: Unicode normalization form NFKC (compatibility decomposition followed by canonical composition).

Stage: normalizer. JSON: ``{"type": "NFKC"}`` (no options; other keys are ignored).

Reproduces HF tokenizers 0.23.3 ``tokenizers/src/normalizers/unicode.rs``
(``NFKC::normalize`` -> ``NormalizedString::nfkc`` in ``tokenizer/normalizer.rs``),
including HF's older Unicode data (code points newer than it are left alone);
the algorithm and the frozen data live in `polytok.text.unicode_norm`.
Expansions (``ﬁ`` -> ``fi``) map to the whole source character; a composed
character keeps the offsets of the first source character only.
"""

from __future__ import annotations

from ._unicode_form import UnicodeForm


class NFKC(UnicodeForm):
    form = "NFKC"
