"""ByteFallback decoder: ``<0xHH>`` tokens back to the bytes they stand for.

Stage: decoder. JSON: ``{"type": "ByteFallback"}``.

Reproduces HF tokenizers 0.23.3 ``tokenizers/src/decoders/byte_fallback.rs``
(``ByteFallback::decode_chain``). A token is a byte token when it is 6 UTF-8
bytes long, starts with ``<0x``, ends with ``>`` and its middle parses with
Rust's ``u8::from_str_radix(_, 16)``: two hex digits of either case, or a
``+`` and one hex digit (so ``<0x+F>`` is byte 0x0F, while ``<0x-F>``,
``<0X41>`` and ``<0x4g>`` are ordinary tokens). Each run of consecutive byte
tokens becomes its UTF-8 text when the run is valid UTF-8 as a whole, and
otherwise one U+FFFD per byte of the run (not one per maximal invalid
subsequence as in lossy decoding): ``<0xE2><0x82>`` gives ``"��"``. Other
tokens pass through unchanged.
"""

from __future__ import annotations

from typing import Any

_HEX = "0123456789abcdefABCDEF"


def _byte_tokens() -> dict[str, int]:
    table: dict[str, int] = {}
    for hi in _HEX:
        for lo in _HEX:
            table[f"<0x{hi}{lo}>"] = int(hi + lo, 16)
        # subtle: from_str_radix accepts a leading '+', so "+F" parses as 15
        table[f"<0x+{hi}>"] = int(hi, 16)
    return table


BYTE_TOKENS: dict[str, int] = _byte_tokens()


def _flush(run: list[int], out: list[str]) -> None:
    try:
        out.append(bytes(run).decode("utf-8"))
    except UnicodeDecodeError:
        out.extend("\ufffd" * len(run))
    run.clear()


class ByteFallback:
    @classmethod
    def from_config(cls, d: dict[str, Any], path: str) -> ByteFallback:
        return cls()

    def decode_chain(self, tokens: list[str]) -> list[str]:
        out: list[str] = []
        run: list[int] = []
        lookup = BYTE_TOKENS.get
        for token in tokens:
            byte = lookup(token)
            if byte is not None:
                run.append(byte)
                continue
            if run:
                _flush(run, out)
            out.append(token)
        if run:
            _flush(run, out)
        return out
