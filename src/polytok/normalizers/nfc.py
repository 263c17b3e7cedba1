"""NFC normalizer: Unicode normalization form NFC (canonical decomposition followed by canonical composition).

Stage: normalizer. JSON: ``{"type": "NFC"}`` (no options; other keys are ignored).

Reproduces HF tokenizers 0.23.3 ``tokenizers/src/normalizers/unicode.rs``
(``NFC::normalize`` -> ``NormalizedString::nfc`` in ``tokenizer/normalizer.rs``),
including HF's older Unicode data (code points newer than it are left alone);
the algorithm and the frozen data live in `polytok.text.unicode_norm`.
A composed character keeps the offsets of the first source character only
(``e`` + U+0301 -> ``é`` maps to the ``e``).
"""

from __future__ import annotations

from ._unicode_form import UnicodeForm


class NFC(UnicodeForm):
    form = "NFC"
